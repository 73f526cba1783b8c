import type { Kysely, Selectable } from 'kysely';
import type { AuditLogTable, Database } from '../db/schema.js';
import type { AuditRecord } from '../records.js';

/** Where a page of the audit log ends: the last row's time and id (rows are read newest first). */
export interface AuditCursor {
  readonly at: number;
  readonly id: string;
}

/** The audit log (migration 0026): written with or right after each change, read per account. */
export interface AuditLogRepository {
  insert(record: AuditRecord, trx?: Kysely<Database>): Promise<void>;
  /** An account's rows, newest first, after `cursor` when given; one dApp's only when `dappId` is given. */
  list(args: {
    accountId: string;
    dappId?: string | undefined;
    cursor?: AuditCursor | undefined;
    limit: number;
  }): Promise<AuditRecord[]>;
}

const toAudit = (r: Selectable<AuditLogTable>): AuditRecord => ({
  id: r.id,
  accountId: r.account_id,
  dappId: r.dapp_id,
  at: Number(r.at),
  memberId: r.member_id,
  memberEmail: r.member_email,
  authTokenId: r.auth_token_id,
  action: r.action,
  targetId: r.target_id,
  before: r.before_json,
  after: r.after_json,
  requestId: r.request_id,
});

export function createAuditLogRepository(db: Kysely<Database>): AuditLogRepository {
  return {
    async insert(a, trx) {
      await (trx ?? db)
        .insertInto('audit_log')
        .values({
          id: a.id,
          account_id: a.accountId,
          dapp_id: a.dappId,
          at: a.at,
          member_id: a.memberId,
          member_email: a.memberEmail,
          auth_token_id: a.authTokenId,
          action: a.action,
          target_id: a.targetId,
          before_json: a.before,
          after_json: a.after,
          request_id: a.requestId,
        })
        .execute();
    },
    async list({ accountId, dappId, cursor, limit }) {
      let q = db.selectFrom('audit_log').selectAll().where('account_id', '=', accountId);
      if (dappId !== undefined) q = q.where('dapp_id', '=', dappId);
      if (cursor !== undefined) {
        q = q.where((eb) =>
          eb.or([eb('at', '<', cursor.at), eb.and([eb('at', '=', cursor.at), eb('id', '<', cursor.id)])]),
        );
      }
      const rows = await q.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toAudit);
    },
  };
}
