import { type Kysely, type Selectable, sql } from 'kysely';
import type { DatabaseKind } from '../db/database.js';
import type { DashboardSessionsTable, Database } from '../db/schema.js';
import type { SessionRecord } from '../records.js';

/** Dashboard sign-in: passwords, sessions (by the hash of their secret) and failed attempts. */
export interface SessionRepository {
  /** A member's password (migration 0026; an account's own before it). */
  setPasswordHash(args: { memberId: string; passwordHash: string; now: number }): Promise<void>;
  findPasswordHash(memberId: string): Promise<string | undefined>;
  insertSession(session: SessionRecord & { readonly sessionHash: string }): Promise<void>;
  findSessionByHash(sessionHash: string): Promise<SessionRecord | undefined>;
  touchSession(args: { sessionId: string; now: number }): Promise<void>;
  deleteSessionByHash(sessionHash: string): Promise<void>;
  deleteSessionsOfMember(memberId: string): Promise<void>;
  /** Sessions past their absolute end or idle since before `idleBefore`. */
  deleteExpiredSessions(args: { now: number; idleBefore: number }): Promise<number>;
  recordLoginFailure(args: { email: string; at: number }): Promise<void>;
  /**
   * Counts a sign-in attempt before its password is checked: records it as a failure at `at` unless the email
   * already has `maxFailures` failures after `since`, in one atomic step (concurrent attempts, from any number
   * of processes, are counted one after another). Returns whether it was recorded, i.e. whether the attempt
   * may go on to verify the password; a success then clears the email's failures, its own included.
   */
  claimLoginAttempt(args: { email: string; at: number; since: number; maxFailures: number }): Promise<boolean>;
  /** Failure times of this email since `since`, newest first. */
  loginFailuresSince(args: { email: string; since: number }): Promise<number[]>;
  clearLoginFailures(email: string): Promise<void>;
  deleteLoginFailuresBefore(before: number): Promise<number>;
}

const toSession = (r: Selectable<DashboardSessionsTable>): SessionRecord => ({
  id: r.id,
  accountId: r.account_id,
  memberId: r.member_id,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
  expiresAt: r.expires_at,
});

export function createSessionRepository(db: Kysely<Database>, kind: DatabaseKind): SessionRepository {
  return {
    async setPasswordHash({ memberId, passwordHash, now }) {
      await db
        .insertInto('member_passwords')
        .values({ member_id: memberId, password_hash: passwordHash, updated_at: now })
        .onConflict((oc) => oc.column('member_id').doUpdateSet({ password_hash: passwordHash, updated_at: now }))
        .execute();
    },
    async findPasswordHash(memberId) {
      const r = await db
        .selectFrom('member_passwords')
        .select('password_hash')
        .where('member_id', '=', memberId)
        .executeTakeFirst();
      return r?.password_hash;
    },
    async insertSession(s) {
      await db
        .insertInto('dashboard_sessions')
        .values({
          id: s.id,
          session_hash: s.sessionHash,
          account_id: s.accountId,
          member_id: s.memberId,
          created_at: s.createdAt,
          last_seen_at: s.lastSeenAt,
          expires_at: s.expiresAt,
        })
        .execute();
    },
    async findSessionByHash(sessionHash) {
      const r = await db
        .selectFrom('dashboard_sessions')
        .selectAll()
        .where('session_hash', '=', sessionHash)
        .executeTakeFirst();
      return r && toSession(r);
    },
    async touchSession({ sessionId, now }) {
      await db.updateTable('dashboard_sessions').set({ last_seen_at: now }).where('id', '=', sessionId).execute();
    },
    async deleteSessionByHash(sessionHash) {
      await db.deleteFrom('dashboard_sessions').where('session_hash', '=', sessionHash).execute();
    },
    async deleteSessionsOfMember(memberId) {
      await db.deleteFrom('dashboard_sessions').where('member_id', '=', memberId).execute();
    },
    async deleteExpiredSessions({ now, idleBefore }) {
      const r = await db
        .deleteFrom('dashboard_sessions')
        .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<', idleBefore)]))
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },
    async recordLoginFailure({ email, at }) {
      await db.insertInto('login_failures').values({ email, failed_at: at }).execute();
    },
    async claimLoginAttempt({ email, at, since, maxFailures }) {
      const claim = async (trx: Kysely<Database>) => {
        const inserted = await trx
          .insertInto('login_failures')
          .columns(['email', 'failed_at'])
          .expression(
            trx.selectNoFrom([sql<string>`${email}`.as('email'), sql<number>`${at}`.as('failed_at')]).where(
              (eb) =>
                eb
                  .selectFrom('login_failures')
                  .select((f) => f.fn.countAll<number>().as('n'))
                  .where('email', '=', email)
                  .where('failed_at', '>', since),
              '<',
              maxFailures,
            ),
          )
          .executeTakeFirst();
        return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
      };
      // SQLite runs one statement at a time, so the INSERT … SELECT is atomic as it stands. PostgreSQL's READ
      // COMMITTED lets two such statements count the same rows: a transaction-scoped advisory lock per email
      // serialises them (other emails are not held up).
      if (kind !== 'postgres') return claim(db);
      return db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(hashtext(${`patron.login:${email}`}))`.execute(trx);
        return claim(trx);
      });
    },
    async loginFailuresSince({ email, since }) {
      const rows = await db
        .selectFrom('login_failures')
        .select('failed_at')
        .where('email', '=', email)
        .where('failed_at', '>', since)
        .orderBy('failed_at', 'desc')
        .limit(100)
        .execute();
      return rows.map((r) => r.failed_at);
    },
    async clearLoginFailures(email) {
      await db.deleteFrom('login_failures').where('email', '=', email).execute();
    },
    async deleteLoginFailuresBefore(before) {
      const r = await db.deleteFrom('login_failures').where('failed_at', '<', before).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
