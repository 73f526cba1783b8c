import type { FastifyRequest } from 'fastify';
import type { AccountService } from '../accounts/accountService.js';
import { UnauthorizedError } from '../errors/PatronError.js';
import type { Account } from '../store/records.js';

/**
 * The admin API (accounts, tokens, dApps) is authenticated by an account auth token, sent as
 * `Authorization: Bearer <token>` or in the spec's `authToken` header. A session cookie joins this with the
 * dashboard.
 */
export async function authenticateAccount(req: FastifyRequest, accounts: AccountService): Promise<Account> {
  const authorization = req.headers.authorization;
  const bearer = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
  const raw = req.headers.authtoken;
  const token = bearer ?? (typeof raw === 'string' && raw.trim() !== '' ? raw.trim() : undefined);
  if (token === undefined) throw new UnauthorizedError('Auth token is required in the headers');
  const account = await accounts.authenticateToken(token);
  if (account === undefined) throw new UnauthorizedError('Invalid auth token');
  return account;
}
