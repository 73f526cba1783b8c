import type { FastifyRequest } from 'fastify';
import type { Actor } from '../accounts/auditEntry.js';
import type { AuthenticatedSession } from '../accounts/sessionService.js';
import { UnauthorizedError } from '../errors/PatronError.js';
import type { Account, AuditRecord, DappRecord, MemberRecord } from '../store/records.js';
import {
  type AdminAuth,
  assertNotCrossSite,
  assertSameOriginWrite,
  authenticateAccount,
  SAFE_METHODS,
} from './adminAuth.js';
import { readSessionCookie } from './sessionCookie.js';
import { authenticateWebhookCaller } from './webhookCredentials.js';

/**
 * How a declared route (route.ts) authenticates its caller, and what its handler then knows about them:
 *
 * - `public`: nothing (health, the chain list, this API's document).
 * - `sameSite`: nothing, but a request another site sent is refused (sign-in: login CSRF).
 * - `account`: an account auth token, or the dashboard's session cookie with the CSRF checks on writes
 *   (adminAuth.ts); the handler knows the member and their role, and the `actor` its audit row names.
 * - `dappPair`: the spec's `authToken` + `apiKey` headers naming an account and one of its dApps
 *   (webhookCredentials.ts); a GET has its own message for a missing token (spec §7). The token's member too.
 * - `session`: the session cookie only (who is signed in).
 * - `optionalSession`: a live session is not required, but when there is one a write must pass the CSRF
 *   checks (sign-out: a forced sign-out is a nuisance another site could otherwise cause).
 */
export interface AuthContexts {
  readonly public: Readonly<Record<never, never>>;
  readonly sameSite: Readonly<Record<never, never>>;
  readonly account: { readonly account: Account; readonly member: MemberRecord; readonly actor: Actor };
  readonly dappPair: {
    readonly account: Account;
    readonly dapp: DappRecord;
    readonly member: MemberRecord;
    readonly actor: Actor;
  };
  readonly session: { readonly session: AuthenticatedSession; readonly cookie: string };
  readonly optionalSession: { readonly liveCookie: string | undefined };
}
export type AuthKind = keyof AuthContexts;

/**
 * What authentication needs: the services, the public URL (origin checks) and the admin budget; and where a route's
 * change is written to the audit log (route.ts).
 */
export type RouteAuthDeps = AdminAuth & {
  readonly store: { readonly auditLog: { insert(record: AuditRecord): Promise<void> } };
  readonly now: () => number;
};

/** Whether a route of this kind has a member behind it, and so a role to check and changes to audit. */
export const hasMember = (auth: AuthKind): auth is 'account' | 'dappPair' => auth === 'account' || auth === 'dappPair';

export const authenticators: {
  readonly [K in AuthKind]: (req: FastifyRequest, deps: RouteAuthDeps) => Promise<AuthContexts[K]>;
} = {
  public: async () => ({}),
  sameSite: async (req, deps) => {
    assertNotCrossSite(req, deps.config.publicUrl);
    return {};
  },
  account: async (req, deps) => {
    const { account, member, authTokenId } = await authenticateAccount(req, deps);
    return { account, member, actor: { member, authTokenId, requestId: req.id } };
  },
  dappPair: async (req, deps) => {
    const { authTokenId, ...caller } = await authenticateWebhookCaller({
      req,
      accounts: deps.accounts,
      operation: req.method === 'GET' ? 'get' : 'other',
      limits: deps.limits,
    });
    return { ...caller, actor: { member: caller.member, authTokenId, requestId: req.id } };
  },
  session: async (req, deps) => {
    const cookie = readSessionCookie(req);
    if (cookie === undefined) throw new UnauthorizedError('Not signed in');
    const session = await deps.sessions.authenticate(cookie);
    if (session === undefined) throw new UnauthorizedError('Session expired: sign in again');
    return { session, cookie };
  },
  optionalSession: async (req, deps) => {
    const cookie = readSessionCookie(req);
    if (cookie === undefined || (await deps.sessions.authenticate(cookie)) === undefined) {
      return { liveCookie: undefined };
    }
    if (!SAFE_METHODS.has(req.method)) assertSameOriginWrite(req, cookie, deps.config.publicUrl);
    return { liveCookie: cookie };
  },
};
