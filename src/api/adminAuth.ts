import type { FastifyRequest } from 'fastify';
import type { AccountService } from '../accounts/accountService.js';
import { isValidCsrfToken, type SessionService } from '../accounts/sessionService.js';
import { ForbiddenError, UnauthorizedError } from '../errors/PatronError.js';
import type { RequestLimits } from '../rateLimit/requestLimits.js';
import type { Account, MemberRecord } from '../store/records.js';
import { readSessionCookie } from './sessionCookie.js';

/**
 * The admin API is authenticated by an account auth token, sent as `Authorization: Bearer <token>` or in the
 * spec's `authToken` header, or, for the dashboard, by its session cookie. A token wins when both are sent.
 *
 * A cookie is ambient (the browser attaches it by itself), so a cookie-authenticated write must also prove it
 * comes from the dashboard's own page: the `x-csrf-token` header (readable only by a same-origin script that
 * asked GET /api/admin/session), and no `Origin` or `Sec-Fetch-Site` header saying another site sent it.
 * SameSite=Strict already keeps the cookie off cross-site requests; these checks do not rely on it.
 */
export interface AdminAuth {
  readonly accounts: AccountService;
  readonly sessions: SessionService;
  /** PATRON_PUBLIC_URL: behind a proxy that rewrites Host, its host is the dashboard's origin too. */
  readonly config: { readonly publicUrl: string | undefined };
  /** Every authenticated request spends the account's admin budget (docs/guides/rate-limits.md, "Rate limits"). */
  readonly limits: Pick<RequestLimits, 'admin'>;
}

export const CSRF_HEADER = 'x-csrf-token';
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Who calls the admin API: the account (the team), the member, and the auth token when one was sent. */
export interface AdminCaller {
  readonly account: Account;
  readonly member: MemberRecord;
  readonly authTokenId: string | undefined;
}

export async function authenticateAccount(req: FastifyRequest, auth: AdminAuth): Promise<AdminCaller> {
  const authorization = req.headers.authorization;
  const bearer = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
  const raw = req.headers.authtoken;
  const token = bearer ?? (typeof raw === 'string' && raw.trim() !== '' ? raw.trim() : undefined);
  if (token !== undefined) {
    const caller = await auth.accounts.authenticateToken(token);
    if (caller === undefined) throw new UnauthorizedError('Invalid auth token');
    await auth.limits.admin(caller.account.id);
    return { account: caller.account, member: caller.member, authTokenId: caller.tokenId };
  }
  const cookie = readSessionCookie(req);
  if (cookie === undefined) throw new UnauthorizedError('Auth token is required in the headers');
  const signedIn = await auth.sessions.authenticate(cookie);
  if (signedIn === undefined) throw new UnauthorizedError('Session expired: sign in again');
  if (!SAFE_METHODS.has(req.method)) assertSameOriginWrite(req, cookie, auth.config.publicUrl);
  await auth.limits.admin(signedIn.account.id);
  return { account: signedIn.account, member: signedIn.member, authTokenId: undefined };
}

/** Refuses a cookie-authenticated write that another site could have made. */
export function assertSameOriginWrite(
  req: FastifyRequest,
  sessionSecret: string | undefined,
  publicUrl: string | undefined,
): void {
  assertNotCrossSite(req, publicUrl);
  const csrf = req.headers[CSRF_HEADER];
  if (sessionSecret === undefined || typeof csrf !== 'string' || !isValidCsrfToken(sessionSecret, csrf)) {
    throw new ForbiddenError('CSRF token missing or invalid: reload the dashboard');
  }
}

/** Browsers name the sending page's origin on writes; it must be this service's (host and port). */
export function assertNotCrossSite(req: FastifyRequest, publicUrl: string | undefined): void {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') {
    throw new ForbiddenError('Cross-site request refused');
  }
  const origin = req.headers.origin;
  if (typeof origin !== 'string') return;
  const from = URL.canParse(origin) ? new URL(origin) : undefined;
  // Host and port, with the scheme's default port normalised away on both sides (URL does that).
  const own = from === undefined ? undefined : `${from.protocol}//${req.headers.host ?? ''}`;
  const allowed = [
    own !== undefined && URL.canParse(own) ? new URL(own).host : undefined,
    publicUrl === undefined ? undefined : new URL(publicUrl).host,
  ];
  if (from === undefined || !allowed.includes(from.host)) throw new ForbiddenError('Cross-site request refused');
}
