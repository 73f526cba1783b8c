import { type Kysely, type Selectable, sql } from 'kysely';
import type { DatabaseKind } from '../db/database.js';
import type { AccountMembersTable, Database } from '../db/schema.js';
import { isUniqueViolation } from '../db/uniqueViolation.js';
import { type AuditRecord, isMemberRole, type MemberRecord, type MemberRole } from '../records.js';
import type { AuditLogRepository } from './auditLogRepository.js';

/** Why a change of the team was not made. */
export type MemberChangeRefusal = 'notFound' | 'lastOwner';

/**
 * The people of an account's team (migration 0026). Each change is written with its audit row in one transaction:
 * the log never shows a change that did not happen, nor misses one that did.
 */
export interface MemberRepository {
  list(accountId: string): Promise<MemberRecord[]>;
  findById(memberId: string): Promise<MemberRecord | undefined>;
  findByEmail(email: string): Promise<MemberRecord | undefined>;
  /** The account's longest-standing owner (what an account-level action without a member acts as: the CLI). */
  findOwner(accountId: string): Promise<MemberRecord | undefined>;
  /** Undefined when the email is taken (by any team's member). */
  add(args: { member: MemberRecord; audit: AuditRecord }): Promise<MemberRecord | undefined>;
  setRole(args: {
    accountId: string;
    memberId: string;
    role: MemberRole;
    audit: (before: MemberRecord, after: MemberRecord) => AuditRecord;
  }): Promise<MemberRecord | MemberChangeRefusal>;
  /** Removes the member, revokes their auth tokens and ends their sessions. */
  remove(args: {
    accountId: string;
    memberId: string;
    now: number;
    audit: (before: MemberRecord) => AuditRecord;
  }): Promise<MemberRecord | MemberChangeRefusal>;
}

const toMember = (r: Selectable<AccountMembersTable>): MemberRecord => {
  // The column's CHECK holds it to the three roles; a row outside them is a corrupt database, not a viewer.
  if (!isMemberRole(r.role)) throw new Error(`account_members ${r.id}: unknown role ${r.role}`);
  return { id: r.id, accountId: r.account_id, email: r.email, role: r.role, createdAt: Number(r.created_at) };
};

export function createMemberRepository(
  db: Kysely<Database>,
  kind: DatabaseKind,
  auditLog: AuditLogRepository,
): MemberRepository {
  /**
   * Runs a change of one account's team with the account's row locked on PostgreSQL, so two owners demoting each
   * other at once cannot both pass the last-owner check (READ COMMITTED would let both count two owners). SQLite
   * runs one write transaction at a time already.
   */
  const inTeam = <T>(accountId: string, change: (trx: Kysely<Database>) => Promise<T>): Promise<T> =>
    db.transaction().execute(async (trx) => {
      if (kind === 'postgres') await sql`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`.execute(trx);
      return change(trx);
    });
  const memberOf = async (trx: Kysely<Database>, accountId: string, memberId: string) => {
    const r = await trx
      .selectFrom('account_members')
      .selectAll()
      .where('id', '=', memberId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return r && toMember(r);
  };
  const ownerCount = async (trx: Kysely<Database>, accountId: string) => {
    const r = await trx
      .selectFrom('account_members')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where('role', '=', 'owner')
      .executeTakeFirstOrThrow();
    return Number(r.n);
  };
  /** Taking the role away from an owner must leave another owner in the team. */
  const leavesAnOwner = async (trx: Kysely<Database>, before: MemberRecord, role: MemberRole | undefined) =>
    before.role !== 'owner' || role === 'owner' || (await ownerCount(trx, before.accountId)) > 1;

  return {
    async list(accountId) {
      const rows = await db
        .selectFrom('account_members')
        .selectAll()
        .where('account_id', '=', accountId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toMember);
    },
    async findById(memberId) {
      const r = await db.selectFrom('account_members').selectAll().where('id', '=', memberId).executeTakeFirst();
      return r && toMember(r);
    },
    async findByEmail(email) {
      const r = await db.selectFrom('account_members').selectAll().where('email', '=', email).executeTakeFirst();
      return r && toMember(r);
    },
    async findOwner(accountId) {
      const r = await db
        .selectFrom('account_members')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('role', '=', 'owner')
        .orderBy('created_at')
        .orderBy('id')
        .executeTakeFirst();
      return r && toMember(r);
    },
    async add({ member, audit }) {
      try {
        await inTeam(member.accountId, async (trx) => {
          await trx
            .insertInto('account_members')
            .values({
              id: member.id,
              account_id: member.accountId,
              email: member.email,
              role: member.role,
              created_at: member.createdAt,
            })
            .execute();
          await auditLog.insert(audit, trx);
        });
        return member;
      } catch (err) {
        if (isUniqueViolation(err)) return undefined;
        throw err;
      }
    },
    async setRole({ accountId, memberId, role, audit }) {
      return inTeam(accountId, async (trx) => {
        const before = await memberOf(trx, accountId, memberId);
        if (before === undefined) return 'notFound';
        if (!(await leavesAnOwner(trx, before, role))) return 'lastOwner';
        await trx.updateTable('account_members').set({ role }).where('id', '=', memberId).execute();
        const after = { ...before, role };
        await auditLog.insert(audit(before, after), trx);
        return after;
      });
    },
    async remove({ accountId, memberId, now, audit }) {
      return inTeam(accountId, async (trx) => {
        const before = await memberOf(trx, accountId, memberId);
        if (before === undefined) return 'notFound';
        if (!(await leavesAnOwner(trx, before, undefined))) return 'lastOwner';
        await trx
          .updateTable('auth_tokens')
          .set({ revoked_at: now })
          .where('member_id', '=', memberId)
          .where('revoked_at', 'is', null)
          .execute();
        await trx.deleteFrom('dashboard_sessions').where('member_id', '=', memberId).execute();
        await trx.deleteFrom('member_passwords').where('member_id', '=', memberId).execute();
        await trx.deleteFrom('account_members').where('id', '=', memberId).execute();
        await auditLog.insert(audit(before), trx);
        return before;
      });
    },
  };
}
