import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, type Kysely, type Selectable, sql } from 'kysely';
import type { Database, RequestLogTable } from '../db/schema.js';
import type { RequestLogPolicy, RequestOutcome, StoredRequestLogEntry } from '../records.js';

export interface RequestLogQuery {
  readonly accountId: string;
  readonly dappId?: string;
  readonly outcome?: RequestOutcome;
  /** Lower-case address. */
  readonly sender?: string;
  /** Keyset cursor: rows strictly older than this one (newest first). */
  readonly before?: { readonly at: number; readonly id: string };
  readonly limit: number;
}

export interface RequestLogBucket {
  readonly start: number;
  readonly outcome: RequestOutcome;
  readonly count: number;
}

export interface RequestLogRepository {
  /** One multi-row INSERT. */
  insertMany(entries: readonly StoredRequestLogEntry[]): Promise<void>;
  /** An account's rows, newest first, filtered. */
  query(q: RequestLogQuery): Promise<StoredRequestLogEntry[]>;
  /** Counts per time bucket and outcome since `since`. */
  buckets(args: { accountId: string; dappId?: string; since: number; bucketMs: number }): Promise<RequestLogBucket[]>;
  deleteOlderThan(at: number): Promise<number>;
  /** Records what an included op really cost; its log rows show it when read (idempotent). */
  setActualCost(args: { chainId: number; userOpHash: string; actualWei: bigint; at: number }): Promise<void>;
  /** Keeps the newest `maxRows` rows (ties at the boundary's time may keep a few more). */
  deleteBeyond(maxRows: number): Promise<number>;
}

/**
 * included_ops' key of an op key's cost for one dApp: a request log row of a signature made before the op's gas was
 * final holds the op key (chain/opKey.ts), which two dApps may have signed; settlement records the cost under the
 * key of the dApp it charged (issue 31), so the other's log never shows what its signature did not cost.
 */
export const includedOpKey = (dappId: string, opKey: string): string => `${dappId}:${opKey.toLowerCase()}`;

/** Rows per synchronous SQLite write (see insertMany). */
const SQLITE_SLICE = 50;

/** Columns per row; a batch of 500 rows binds 9,000 values (SQLite allows 32,766, PostgreSQL 65,535). */
export const REQUEST_LOG_COLUMNS = 18;

const toEntry = (r: Selectable<RequestLogTable>, actualCostWei: string | null): StoredRequestLogEntry => ({
  id: r.id,
  at: r.at,
  accountId: r.account_id,
  dappId: r.dapp_id,
  chainId: r.chain_id,
  method: r.method,
  mode: r.mode,
  sender: r.sender,
  outcome: r.outcome as RequestOutcome,
  errorCode: r.error_code,
  reason: r.reason,
  webhook:
    r.webhook_allowed === null
      ? null
      : {
          allowed: r.webhook_allowed === 1,
          reason: r.webhook_reason,
          latencyMs: r.webhook_latency_ms ?? 0,
          calls: r.webhook_calls ?? 0,
        },
  latencyMs: r.latency_ms,
  policy: r.policy === null ? null : parsePolicy(r.policy),
  userOpHash: r.user_op_hash,
  actualCostWei,
});

function parsePolicy(text: string): RequestLogPolicy | null {
  try {
    return JSON.parse(text) as RequestLogPolicy;
  } catch {
    return null;
  }
}

/** A row's values, in the column order of ROW_COLUMNS. */
function toRow(e: StoredRequestLogEntry): unknown[] {
  return [
    e.id,
    e.at,
    e.accountId,
    e.dappId,
    e.chainId,
    e.method,
    e.mode,
    e.sender,
    e.outcome,
    e.errorCode,
    e.reason,
    e.webhook === null ? null : e.webhook.allowed ? 1 : 0,
    e.webhook?.reason ?? null,
    e.webhook?.latencyMs ?? null,
    e.webhook?.calls ?? null,
    e.latencyMs,
    e.policy === null ? null : JSON.stringify(e.policy),
    e.userOpHash,
  ];
}

const ROW_COLUMNS = [
  'id',
  'at',
  'account_id',
  'dapp_id',
  'chain_id',
  'method',
  'mode',
  'sender',
  'outcome',
  'error_code',
  'reason',
  'webhook_allowed',
  'webhook_reason',
  'webhook_latency_ms',
  'webhook_calls',
  'latency_ms',
  'policy',
  'user_op_hash',
] as const;

export function createRequestLogRepository(
  db: Kysely<Database>,
  sqlite?: BetterSqlite3.Database,
): RequestLogRepository {
  /**
   * On SQLite the write runs on the event loop (better-sqlite3 is synchronous), so it must be cheap: one
   * single-row statement, prepared once, run per row inside one transaction. A 500-row multi-row INSERT was
   * prepared anew by every flush (Kysely keeps no statement cache): ~20 µs per row, against ~3 µs this way.
   */
  const insertOne = sqlite?.prepare(
    `INSERT INTO request_log (${ROW_COLUMNS.join(', ')}) VALUES (${ROW_COLUMNS.map(() => '?').join(', ')})`,
  );
  const insertBatch =
    sqlite === undefined || insertOne === undefined
      ? undefined
      : sqlite.transaction((entries: readonly StoredRequestLogEntry[]) => {
          for (const e of entries) insertOne.run(toRow(e));
        });
  /**
   * The multi-row INSERT's text per row count, compiled by Kysely once (so the placeholders are the dialect's:
   * `?` or `$n`) and reused: compiling 500 rows × 16 values on every flush cost more than the insert.
   */
  const insertTexts = new Map<number, string>();
  const insertSql = (rows: number): string => {
    let text = insertTexts.get(rows);
    if (text === undefined) {
      const blank = Object.fromEntries(ROW_COLUMNS.map((c) => [c, null])) as never;
      text = db
        .insertInto('request_log')
        .values(Array.from({ length: rows }, () => blank))
        .compile().sql;
      if (insertTexts.size > 64) insertTexts.clear();
      insertTexts.set(rows, text);
    }
    return text;
  };
  return {
    async insertMany(entries) {
      if (entries.length === 0) return;
      if (insertBatch !== undefined) {
        // Synchronous on the event loop: in slices of SQLITE_SLICE rows with a turn of the loop between them, so
        // a 500-row flush never holds requests up for more than ~1 ms at a time (it was ~10 ms in one piece,
        // which showed as the p99 of a paced 1,000 req/s load).
        for (let i = 0; i < entries.length; i += SQLITE_SLICE) {
          if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
          const slice = entries.slice(i, i + SQLITE_SLICE);
          // Inside a transaction another caller opened (a Kysely one waiting on an await), ours would become a
          // savepoint of theirs and share its fate: the rest goes the asynchronous way, which waits its turn.
          if (sqlite?.inTransaction === true) {
            const rest = entries.slice(i);
            const params: unknown[] = [];
            for (const e of rest) params.push(...toRow(e));
            await db.executeQuery(CompiledQuery.raw(insertSql(rest.length), params));
            return;
          }
          insertBatch(slice);
        }
        return;
      }
      const params: unknown[] = [];
      for (const e of entries) params.push(...toRow(e));
      await db.executeQuery(CompiledQuery.raw(insertSql(entries.length), params));
    },
    async query(q) {
      let query = db.selectFrom('request_log').selectAll().where('account_id', '=', q.accountId);
      if (q.dappId !== undefined) query = query.where('dapp_id', '=', q.dappId);
      if (q.outcome !== undefined) query = query.where('outcome', '=', q.outcome);
      if (q.sender !== undefined) query = query.where('sender', '=', q.sender);
      const before = q.before;
      if (before !== undefined) {
        query = query.where((eb) =>
          eb.or([eb('at', '<', before.at), eb.and([eb('at', '=', before.at), eb('id', '<', before.id)])]),
        );
      }
      const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
      // The page's settled costs, by primary key (see migration 0009 for why they live apart): a userOpHash as it is
      // (it names the op's exact bytes), an op key under its dApp (includedOpKey: only the dApp charged for it).
      const keyOf = (r: { dapp_id: string; user_op_hash: string }) => [
        r.user_op_hash,
        includedOpKey(r.dapp_id, r.user_op_hash),
      ];
      const hashes = [
        ...new Set(rows.flatMap((r) => (r.user_op_hash === null ? [] : keyOf({ ...r, user_op_hash: r.user_op_hash })))),
      ];
      const costs =
        hashes.length === 0
          ? []
          : await db
              .selectFrom('included_ops')
              .select(['chain_id', 'user_op_hash', 'actual_cost_wei'])
              .where('user_op_hash', 'in', hashes)
              .execute();
      const costOf = new Map(costs.map((c) => [`${c.chain_id}:${c.user_op_hash}`, c.actual_cost_wei]));
      const costOfRow = (r: (typeof rows)[number]) =>
        r.user_op_hash === null
          ? null
          : (costOf.get(`${r.chain_id}:${r.user_op_hash}`) ??
            costOf.get(`${r.chain_id}:${includedOpKey(r.dapp_id, r.user_op_hash)}`) ??
            null);
      return rows.map((r) => toEntry(r, costOfRow(r)));
    },
    async buckets({ accountId, dappId, since, bucketMs }) {
      // Integer division on a BIGINT column is integer division on both engines. The bucket size is a
      // validated integer, inlined so PostgreSQL needs no parameter type inference for it.
      const size = sql.lit(Math.trunc(bucketMs));
      const bucket = sql<number>`(at / ${size}) * ${size}`;
      let query = db
        .selectFrom('request_log')
        .select([bucket.as('start'), 'outcome', (eb) => eb.fn.countAll<number>().as('n')])
        .where('account_id', '=', accountId)
        .where('at', '>=', since);
      if (dappId !== undefined) query = query.where('dapp_id', '=', dappId);
      const rows = await query.groupBy([bucket, 'outcome']).orderBy(bucket).execute();
      return rows.map((r) => ({ start: Number(r.start), outcome: r.outcome as RequestOutcome, count: Number(r.n) }));
    },
    async setActualCost({ chainId, userOpHash, actualWei, at }) {
      await db
        .insertInto('included_ops')
        .values({
          chain_id: chainId,
          user_op_hash: userOpHash.toLowerCase(),
          actual_cost_wei: actualWei.toString(),
          at,
        })
        .onConflict((oc) => oc.columns(['chain_id', 'user_op_hash']).doNothing())
        .execute();
    },
    async deleteOlderThan(at) {
      const r = await db.deleteFrom('request_log').where('at', '<', at).executeTakeFirst();
      await db.deleteFrom('included_ops').where('at', '<', at).execute();
      return Number(r.numDeletedRows);
    },
    async deleteBeyond(maxRows) {
      const boundary = await db
        .selectFrom('request_log')
        .select('at')
        .orderBy('at', 'desc')
        .limit(1)
        .offset(maxRows)
        .executeTakeFirst();
      if (boundary === undefined) return 0;
      const r = await db.deleteFrom('request_log').where('at', '<=', boundary.at).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
