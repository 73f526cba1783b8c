import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { csrfTokenFor, type SessionService } from '../accounts/sessionService.js';
import { UnauthorizedError } from '../errors/PatronError.js';
import type { RequestLimits } from '../rateLimit/requestLimits.js';
import { accountView, toAccountView } from './adminAccount.js';
import { assertNotCrossSite, assertSameOriginWrite } from './adminAuth.js';
import { sendError, sendOk } from './envelope.js';
import { bodyObject } from './jsonBodyParser.js';
import { clearSessionCookie, cookieIsSecure, readSessionCookie, setSessionCookie } from './sessionCookie.js';

/**
 * The dashboard's sign-in: `POST /api/admin/session` with email and password sets the session cookie and
 * returns the CSRF token the page sends with every write; `GET` says who is signed in (and gives the token
 * again after a reload); `DELETE` signs out.
 */
export const sessionView = z.object({
  account: accountView,
  csrfToken: z.string(),
  /** When the session ends if left idle (or at its absolute end, if sooner). */
  expiresAt: z.string(),
});

export const SESSION_PATH = '/api/admin/session';

export function registerAdminSessionRoutes(
  app: FastifyInstance,
  deps: {
    sessions: SessionService;
    config: { publicUrl: string | undefined; dashboard: { sessionMaxMs: number } };
    limits: Pick<RequestLimits, 'signIn'>;
  },
): void {
  const { sessions, config, limits } = deps;

  app.post(SESSION_PATH, async (req, reply) => {
    // Login CSRF: another site must not sign the browser into an account of its choosing.
    assertNotCrossSite(req, config.publicUrl);
    const body = bodyObject(req.body);
    // Before the ~90 ms scrypt: per client IP, and per email (as the lock-out counts it).
    await limits.signIn(req.ip, typeof body.email === 'string' ? body.email.trim().toLowerCase() : '');
    const result = await sessions.signIn({ email: body.email, password: body.password });
    if (!result.ok && result.reason === 'locked') {
      reply.header('retry-after', String(result.retryAfterSeconds));
      return sendError(
        reply,
        429,
        `Too many failed sign-ins for this email: try again in ${Math.ceil(result.retryAfterSeconds / 60)} minutes`,
      );
    }
    if (!result.ok) return sendError(reply, 401, 'Wrong email or password');
    setSessionCookie({
      reply,
      secure: cookieIsSecure(req, config.publicUrl),
      value: result.session.secret,
      maxAgeSeconds: config.dashboard.sessionMaxMs / 1000,
    });
    req.log.info({ accountId: result.account.id }, 'dashboard sign-in');
    const data: z.infer<typeof sessionView> = {
      account: toAccountView(result.account),
      csrfToken: result.session.csrfToken,
      expiresAt: new Date(result.session.expiresAt).toISOString(),
    };
    return sendOk(reply, 'Signed in', data);
  });

  app.get(SESSION_PATH, async (req, reply) => {
    const cookie = readSessionCookie(req);
    const signedIn = cookie === undefined ? undefined : await sessions.authenticate(cookie);
    if (cookie === undefined || signedIn === undefined) {
      throw new UnauthorizedError(cookie === undefined ? 'Not signed in' : 'Session expired: sign in again');
    }
    const data: z.infer<typeof sessionView> = {
      account: toAccountView(signedIn.account),
      csrfToken: csrfTokenFor(cookie),
      expiresAt: new Date(signedIn.expiresAt).toISOString(),
    };
    return sendOk(reply, 'Signed in', data);
  });

  app.delete(SESSION_PATH, async (req, reply) => {
    const cookie = readSessionCookie(req);
    if (cookie !== undefined && (await sessions.authenticate(cookie)) !== undefined) {
      // A forced sign-out is a nuisance an attacker's page could otherwise cause.
      assertSameOriginWrite(req, cookie, config.publicUrl);
      await sessions.signOut(cookie);
    }
    clearSessionCookie(reply, cookieIsSecure(req, config.publicUrl));
    return sendOk(reply, 'Signed out');
  });
}
