import { ConflictError } from '../errors/PatronError.js';
import type { AccountService } from './accountService.js';
import { generatePassword } from './passwordHash.js';
import type { SessionService } from './sessionService.js';

export const DEMO_EMAIL = 'demo@patron.local';

export interface DemoCredentials {
  readonly email: string;
  readonly authToken: string;
  readonly apiKey: string;
  readonly dappId: string;
  readonly chainId: number;
  /** The dashboard password, generated when a session service is given. */
  readonly password?: string;
}

/**
 * On the first start of an empty embedded database, creates a demo account with an auth token and a dApp on
 * the dev chain (`chainId`: 31337, or the forked chain's id in fork mode), so a newcomer can call the API at once.
 * Returns the credentials only when it created them: the token exists nowhere else in clear, so they are shown
 * exactly once.
 */
export async function ensureDemoAccount(args: {
  readonly accounts: AccountService;
  readonly sessions?: SessionService | undefined;
  readonly chainId: number;
}): Promise<DemoCredentials | undefined> {
  const { accounts, sessions, chainId } = args;
  if ((await accounts.countAccounts()) > 0) return undefined;
  let account: Awaited<ReturnType<AccountService['createAccount']>>;
  try {
    account = await accounts.createAccount({ email: DEMO_EMAIL });
  } catch (err) {
    if (err instanceof ConflictError) return undefined; // another process created it first
    throw err;
  }
  const { secret } = await accounts.createToken({ accountId: account.id, name: 'demo' });
  const dapp = await accounts.createDapp({ accountId: account.id, name: 'Demo dApp', chainIds: [chainId] });
  const creds = {
    email: account.email,
    authToken: secret,
    apiKey: dapp.apiKey,
    dappId: dapp.id,
    chainId,
  };
  if (sessions === undefined) return creds;
  // The dashboard's sign-in on first start, so a newcomer can open it without the CLI.
  const password = generatePassword();
  // The account's first owner has the account's id (store/tenants/accountRepository.ts).
  await sessions.setPassword({ memberId: account.id, password });
  return { ...creds, password };
}
