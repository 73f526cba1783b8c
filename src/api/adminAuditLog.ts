import { z } from 'zod';
import type { AuditRecord } from '../store/records.js';
import type { AuditLogRepository } from '../store/tenants/auditLogRepository.js';
import { ADMIN_TAG } from './adminAccount.js';
import { pageCursor, pageLimit, TIME_ID_CURSOR } from './pageQuery.js';
import { type RouteDef, route } from './route.js';

/**
 * `GET /api/admin/audit-log`: who changed what, newest first, the caller's account's rows only (the store's query
 * is scoped by account: a `dappId` of another account's dApp finds nothing). Paged with `before` = `nextCursor`.
 */
export const auditLogQuery = z.object({
  dappId: z.string().max(64, { error: 'dappId must be a dApp id' }).meta({ format: 'uuid' }).optional(),
  before: pageCursor(TIME_ID_CURSOR),
  limit: pageLimit,
});

export const auditEntryView = z.object({
  id: z.string(),
  at: z.string(),
  dappId: z.string().nullable(),
  /** Who: the member (null never, on rows this API writes), their email as it was, and the auth token if one. */
  memberId: z.string().nullable(),
  memberEmail: z.string(),
  authTokenId: z.string().nullable(),
  action: z.string(),
  targetId: z.string().nullable(),
  /** The document before and after the change (null: none, as before a creation), secrets redacted. */
  before: z.unknown(),
  after: z.unknown(),
  requestId: z.string().nullable(),
});

const parsed = (json: string | null): unknown => (json === null ? null : JSON.parse(json));

export const toAuditEntryView = (a: AuditRecord): z.infer<typeof auditEntryView> => ({
  id: a.id,
  at: new Date(a.at).toISOString(),
  dappId: a.dappId,
  memberId: a.memberId,
  memberEmail: a.memberEmail,
  authTokenId: a.authTokenId,
  action: a.action,
  targetId: a.targetId,
  before: parsed(a.before),
  after: parsed(a.after),
  requestId: a.requestId,
});

export function adminAuditLogRoutes(deps: { store: { readonly auditLog: AuditLogRepository } }): RouteDef[] {
  const { auditLog } = deps.store;
  return [
    route({
      method: 'GET',
      path: '/api/admin/audit-log',
      auth: 'account',
      operationId: 'listAuditLog',
      summary: "Who changed what in the team's account, newest first; page with `before` = the last `nextCursor`",
      tag: ADMIN_TAG,
      query: auditLogQuery,
      answer: {
        envelope: 'Audit log fetched',
        data: z.object({ entries: z.array(auditEntryView), nextCursor: z.string().nullable() }),
      },
      errors: { '400': 'A query parameter is invalid; the message names it' },
      handler: async ({ account, query: q }) => {
        const cursor = q.before?.split('_');
        const rows = await auditLog.list({
          accountId: account.id,
          dappId: q.dappId,
          cursor: cursor === undefined ? undefined : { at: Number(cursor[0]), id: cursor[1] ?? '' },
          limit: q.limit,
        });
        const last = rows.at(-1);
        return {
          entries: rows.map(toAuditEntryView),
          nextCursor: rows.length === q.limit && last !== undefined ? `${last.at}_${last.id}` : null,
        };
      },
    }),
  ];
}
