import { z } from 'zod';
import { signInInput } from '../accounts/schemas.js';
import { csrfTokenFor, type SessionService } from '../accounts/sessionService.js';
import { PatronError, UnauthorizedError } from '../errors/PatronError.js';
import type { RequestLimits } from '../rateLimit/requestLimits.js';
import { accountView, toAccountView } from './adminAccount.js';
import { memberView, toMemberView } from './adminMembers.js';
import { bodyObject } from './jsonBodyParser.js';
import type { JsonObject } from './openApiParts.js';
import { type RouteDef, route } from './route.js';
import { clearSessionCookie, cookieIsSecure, setSessionCookie } from './sessionCookie.js';

/**
 * The dashboard's sign-in: `POST /api/admin/session` with email and password sets the session cookie and
 * returns the CSRF token the page sends with every write; `GET` says who is signed in (and gives the token
 * again after a reload); `DELETE` signs out.
 */
export const sessionView = z.object({
  account: accountView,
  /** Who signed in, and their role: the dashboard hides what the role cannot do (the server refuses it anyway). */
  member: memberView,
  csrfToken: z.string(),
  /** When the session ends if left idle (or at its absolute end, if sooner). */
  expiresAt: z.string(),
});

export const SESSION_PATH = '/api/admin/session';
/** The admin routes added for the dashboard (docs/reference/rest-api.md, "Dashboard routes"). */
export const DASHBOARD_TAG = 'dashboard';

const setCookie = (what: string): JsonObject => ({
  'Set-Cookie': { description: what, schema: { type: 'string' } },
});

export function adminSessionRoutes(deps: {
  sessions: SessionService;
  config: { publicUrl: string | undefined; dashboard: { sessionMaxMs: number } };
  limits: Pick<RequestLimits, 'signIn'>;
}): RouteDef[] {
  const { sessions, config, limits } = deps;
  return [
    // `sameSite`: login CSRF, another site must not sign the browser into an account of its choosing.
    route({
      method: 'POST',
      path: SESSION_PATH,
      auth: 'sameSite',
      operationId: 'signIn',
      summary: 'Sign in with email and password: sets the session cookie, returns the CSRF token',
      tag: DASHBOARD_TAG,
      unparsedBody: signInInput,
      answer: { envelope: 'Signed in', data: sessionView, headers: setCookie('The session cookie') },
      errors: {
        '400': 'email or password missing or invalid',
        '401': 'Wrong email or password (the same answer for an unknown email)',
        '429': 'Too many failed sign-ins for this email: refused, even with the right password, until Retry-After',
      },
      errorHeaders: {
        '429': {
          'Retry-After': { description: 'Seconds until this email may try again', schema: { type: 'integer' } },
        },
      },
      handler: async ({ req, reply }) => {
        const body = bodyObject(req.body);
        // Before the ~90 ms scrypt: per client IP, and per email (as the lock-out counts it).
        await limits.signIn(req.ip, typeof body.email === 'string' ? body.email.trim().toLowerCase() : '');
        const result = await sessions.signIn({ email: body.email, password: body.password });
        if (!result.ok && result.reason === 'locked') {
          reply.header('retry-after', String(result.retryAfterSeconds));
          const minutes = Math.ceil(result.retryAfterSeconds / 60);
          throw new PatronError(
            'RATE_LIMITED',
            `Too many failed sign-ins for this email: try again in ${minutes} minutes`,
          );
        }
        if (!result.ok) throw new UnauthorizedError('Wrong email or password');
        setSessionCookie({
          reply,
          secure: cookieIsSecure(req, config.publicUrl),
          value: result.session.secret,
          maxAgeSeconds: config.dashboard.sessionMaxMs / 1000,
        });
        req.log.info({ accountId: result.account.id, memberId: result.member.id }, 'dashboard sign-in');
        return {
          account: toAccountView(result.account),
          member: toMemberView(result.member),
          csrfToken: result.session.csrfToken,
          expiresAt: new Date(result.session.expiresAt).toISOString(),
        };
      },
    }),
    route({
      method: 'GET',
      path: SESSION_PATH,
      auth: 'session',
      operationId: 'getSession',
      summary: 'Who is signed in, and the CSRF token again (after a page reload)',
      tag: DASHBOARD_TAG,
      answer: { envelope: 'Signed in', data: sessionView },
      handler: async ({ session, cookie }) => ({
        account: toAccountView(session.account),
        member: toMemberView(session.member),
        csrfToken: csrfTokenFor(cookie),
        expiresAt: new Date(session.expiresAt).toISOString(),
      }),
    }),
    route({
      method: 'DELETE',
      path: SESSION_PATH,
      auth: 'optionalSession',
      operationId: 'signOut',
      summary: 'Sign out: ends the session and clears the cookie (also answered 200 without a session)',
      tag: DASHBOARD_TAG,
      answer: { envelope: 'Signed out', headers: setCookie('The session cookie, expired') },
      handler: async ({ req, reply, liveCookie }) => {
        if (liveCookie !== undefined) await sessions.signOut(liveCookie);
        clearSessionCookie(reply, cookieIsSecure(req, config.publicUrl));
        return undefined;
      },
    }),
  ];
}
