import type { CachePolicy } from '../cache/cachePolicy.js';
import type { Config } from '../config/config.js';
import type { SecretBox } from '../crypto/secretBox.js';
import type { Store } from '../store/store.js';
import { type AccountService, createAccountService, type Logger } from './accountService.js';
import { createMemberService, type MemberService } from './memberService.js';
import { createSessionService, type SessionService } from './sessionService.js';

/**
 * The tenants' accounts (accounts, auth tokens, dApps, API keys) and the dashboard's sessions, as the server
 * (deps.ts) and the `patron` command (cli/main.ts) both build them; the CLI gives a cache policy that caches
 * nothing, since it is short-lived and must see other processes' writes.
 */
export function buildAccounts(args: {
  readonly config: Pick<Config, 'dashboard'>;
  readonly store: Store;
  readonly secretBox: SecretBox;
  readonly cache: CachePolicy;
  readonly now: () => number;
  readonly logger: Logger;
  /** The chains a dApp may list (accountService.ts). */
  readonly servedChainIds: readonly number[];
}): { readonly accounts: AccountService; readonly sessions: SessionService; readonly members: MemberService } {
  const { config, store, now } = args;
  return {
    accounts: createAccountService({
      store,
      secretBox: args.secretBox,
      cache: args.cache,
      now,
      logger: args.logger,
      servedChainIds: args.servedChainIds,
    }),
    members: createMemberService({ store, now }),
    sessions: createSessionService({
      store,
      now,
      idleMs: config.dashboard.sessionIdleMs,
      absoluteMs: config.dashboard.sessionMaxMs,
    }),
  };
}
