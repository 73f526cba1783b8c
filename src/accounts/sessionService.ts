import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { parseInput } from '../errors/parseInput.js';
import type { Account, MemberRecord, SessionRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import { decoyPasswordHash, hashPassword, verifyPassword } from './passwordHash.js';
import { newPasswordSchema, signInInput } from './schemas.js';

/**
 * Dashboard sign-in for account owners: password check with lock-out, sessions behind a random cookie value
 * (stored only as its SHA-256), idle and absolute expiry, and a CSRF token derived from the session.
 */
export interface SessionServiceDeps {
  readonly store: Store;
  readonly now: () => number;
  /** A session unused this long ends. */
  readonly idleMs: number;
  /** A session ends this long after sign-in, whatever its use. */
  readonly absoluteMs: number;
}

/** Lock-out (OWASP authentication guidance): 5 failures of one email within 15 minutes refuse it for 15 minutes. */
export const LOCKOUT = { maxFailures: 5, windowMs: 15 * 60_000 } as const;

/** Last-seen is written at most this often per session: the idle limit is enforced to this precision. */
const TOUCH_INTERVAL_MS = 60_000;
const CSRF_CONTEXT = 'patron-dashboard-csrf-v1';

export interface NewSession {
  /** The cookie value; exists nowhere else in clear. */
  readonly secret: string;
  readonly csrfToken: string;
  readonly expiresAt: number;
}

export type SignInResult =
  | { readonly ok: true; readonly account: Account; readonly member: MemberRecord; readonly session: NewSession }
  | { readonly ok: false; readonly reason: 'invalid' }
  | { readonly ok: false; readonly reason: 'locked'; readonly retryAfterSeconds: number };

export interface AuthenticatedSession {
  readonly account: Account;
  /** Who signed in: their role is read on every request, so a change applies at once. */
  readonly member: MemberRecord;
  readonly session: SessionRecord;
  /** When it ends if left idle, or at its absolute end, whichever is first. */
  readonly expiresAt: number;
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The session's CSRF token: an HMAC keyed by the (HttpOnly, never readable by scripts) session secret. */
export function csrfTokenFor(sessionSecret: string): string {
  return createHmac('sha256', sessionSecret).update(CSRF_CONTEXT).digest('base64url');
}

export function isValidCsrfToken(sessionSecret: string, token: string): boolean {
  const expected = Buffer.from(csrfTokenFor(sessionSecret));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Cheap shape check before any lookup: 32 random bytes, base64url. */
const looksLikeSessionSecret = (s: string) => /^[A-Za-z0-9_-]{43}$/.test(s);

export function createSessionService(deps: SessionServiceDeps) {
  const { store, now } = deps;
  let decoy: Promise<string> | undefined;

  const lockedFor = async (email: string): Promise<number> => {
    const t = now();
    const failures = await store.sessions.loginFailuresSince({ email, since: t - LOCKOUT.windowMs });
    const oldestCounted = failures[LOCKOUT.maxFailures - 1];
    if (oldestCounted === undefined) return 0;
    return Math.max(1, Math.ceil((oldestCounted + LOCKOUT.windowMs - t) / 1000));
  };

  return {
    /**
     * Sets (or replaces) a member's password; every session of the member ends. An account's first owner has the
     * account's id (store/tenants/accountRepository.ts).
     */
    async setPassword(input: { memberId: string; password: unknown }): Promise<void> {
      const password = parseInput(newPasswordSchema, input.password);
      await store.sessions.setPasswordHash({
        memberId: input.memberId,
        passwordHash: await hashPassword(password),
        now: now(),
      });
      await store.sessions.deleteSessionsOfMember(input.memberId);
    },

    async signIn(input: { email: unknown; password: unknown }): Promise<SignInResult> {
      const { email, password } = parseInput(signInInput, input);
      // The attempt counts as a failure before the ~90 ms scrypt, atomically: checking the lock first and
      // recording failures after let a burst of concurrent wrong passwords all pass the check, and the right
      // one after them sign in. While locked, even the right password is refused: that is what stops guessing.
      const at = now();
      const claimed = await store.sessions.claimLoginAttempt({
        email,
        at,
        since: at - LOCKOUT.windowMs,
        maxFailures: LOCKOUT.maxFailures,
      });
      if (!claimed) return { ok: false, reason: 'locked', retryAfterSeconds: Math.max(1, await lockedFor(email)) };
      // The email names a member, and so the team (account) they sign in to.
      const member = await store.members.findByEmail(email);
      const account = member === undefined ? undefined : await store.accounts.findById(member.accountId);
      const stored = member === undefined ? undefined : await store.sessions.findPasswordHash(member.id);
      // An unknown email (or one without a password) costs the same scrypt as a known one.
      decoy ??= decoyPasswordHash();
      const matches = await verifyPassword(password, stored ?? (await decoy));
      if (member === undefined || account === undefined || stored === undefined || !matches) {
        // Already recorded as a failure by the claim.
        const locked = await lockedFor(email);
        return locked > 0
          ? { ok: false, reason: 'locked', retryAfterSeconds: locked }
          : { ok: false, reason: 'invalid' };
      }
      await store.sessions.clearLoginFailures(email);
      const secret = randomBytes(32).toString('base64url');
      const t = now();
      const session: SessionRecord = {
        id: randomUUID(),
        accountId: account.id,
        memberId: member.id,
        createdAt: t,
        lastSeenAt: t,
        expiresAt: t + deps.absoluteMs,
      };
      await store.sessions.insertSession({ ...session, sessionHash: sha256(secret) });
      return {
        ok: true,
        account,
        member,
        session: { secret, csrfToken: csrfTokenFor(secret), expiresAt: Math.min(t + deps.idleMs, session.expiresAt) },
      };
    },

    /** The live session of a cookie value, or undefined (unknown, signed out, idle too long, or past its end). */
    async authenticate(secret: string): Promise<AuthenticatedSession | undefined> {
      if (!looksLikeSessionSecret(secret)) return undefined;
      const hash = sha256(secret);
      const session = await store.sessions.findSessionByHash(hash);
      if (session === undefined) return undefined;
      const t = now();
      if (t >= session.expiresAt || t >= session.lastSeenAt + deps.idleMs) {
        await store.sessions.deleteSessionByHash(hash);
        return undefined;
      }
      const account = await store.accounts.findById(session.accountId);
      const member = session.memberId === null ? undefined : await store.members.findById(session.memberId);
      if (account === undefined || member === undefined || member.accountId !== account.id) return undefined;
      let lastSeenAt = session.lastSeenAt;
      if (t - lastSeenAt >= Math.min(TOUCH_INTERVAL_MS, deps.idleMs / 10)) {
        await store.sessions.touchSession({ sessionId: session.id, now: t });
        lastSeenAt = t;
      }
      return {
        account,
        member,
        session: { ...session, lastSeenAt },
        expiresAt: Math.min(lastSeenAt + deps.idleMs, session.expiresAt),
      };
    },

    async signOut(secret: string): Promise<void> {
      if (looksLikeSessionSecret(secret)) await store.sessions.deleteSessionByHash(sha256(secret));
    },

    /** Deletes ended sessions and failures older than the lock-out window; run periodically. */
    async prune(): Promise<{ sessions: number; loginFailures: number }> {
      const t = now();
      return {
        sessions: await store.sessions.deleteExpiredSessions({ now: t, idleBefore: t - deps.idleMs }),
        loginFailures: await store.sessions.deleteLoginFailuresBefore(t - LOCKOUT.windowMs),
      };
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
