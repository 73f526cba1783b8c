import type { FastifyRequest } from 'fastify';
import type { AccountService } from '../accounts/accountService.js';
import { UnauthorizedError } from '../errors/PatronError.js';
import type { RequestLimits } from '../rateLimit/requestLimits.js';
import type { Account, DappRecord, MemberRecord } from '../store/records.js';

export const MISSING_BOTH = 'Auth token and API key is required in the headers';
export const MISSING_TOKEN = 'Auth token is required in the headers';
/** One message for every wrong credential, so a caller cannot tell which part was wrong. */
export const INVALID_CREDENTIALS = 'Invalid auth token or API key';

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v.join(',') : v;
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}

/**
 * The spec's credential pair (§5): `authToken` names the account, `apiKey` the dApp, and the dApp must be the
 * account's. A blank header counts as missing. Get has its own message for a missing token (§7); a Get with
 * the token but no API key gets the general one.
 */
export async function authenticateWebhookCaller(args: {
  req: FastifyRequest;
  accounts: AccountService;
  operation: 'get' | 'other';
  /** The account's admin budget (docs/guides/rate-limits.md, "Rate limits"), spent once the credentials hold. */
  limits: Pick<RequestLimits, 'admin'>;
}): Promise<{ account: Account; dapp: DappRecord; member: MemberRecord; authTokenId: string }> {
  const authToken = header(args.req, 'authtoken');
  const apiKey = header(args.req, 'apikey');
  if (authToken === undefined && args.operation === 'get') throw new UnauthorizedError(MISSING_TOKEN);
  if (authToken === undefined || apiKey === undefined) throw new UnauthorizedError(MISSING_BOTH);
  const [caller, dapp] = await Promise.all([
    args.accounts.authenticateToken(authToken),
    args.accounts.resolveApiKey(apiKey),
  ]);
  if (caller === undefined || dapp === undefined || dapp.accountId !== caller.account.id) {
    throw new UnauthorizedError(INVALID_CREDENTIALS);
  }
  await args.limits.admin(caller.account.id);
  return { account: caller.account, dapp, member: caller.member, authTokenId: caller.tokenId };
}
