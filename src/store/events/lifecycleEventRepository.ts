import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { DatabaseKind } from '../db/database.js';
import type { Database, LifecycleEventsTable } from '../db/schema.js';

/** Where an event is: waiting for (another) attempt, accepted by the receiver, or given up on after the last attempt. */
export type LifecycleEventState = 'pending' | 'delivered' | 'failed';

export interface NewLifecycleEvent {
  /** The event id, sent as `webhook-id` on every attempt (and on a replay), so a receiver can drop duplicates. */
  readonly id: string;
  readonly dappId: string;
  readonly type: string;
  /** Events with one op key are delivered in the order they were appended. */
  readonly opKey: string;
  /** The body as it will be sent (JSON text). */
  readonly payload: string;
  readonly createdAt: number;
  /** Written once: a second event with this key (another instance, a re-read) is dropped (migration 0020). */
  readonly dedupeKey?: string | undefined;
  /** `sponsorship.signed`: the spend reservation it was written for (its release writes `sponsorship.expired`). */
  readonly ref?: string | undefined;
  /** `sponsorship.included`: where, so a reorg finds the inclusions it removed. */
  readonly block?: { readonly chainId: number; readonly number: bigint; readonly hash: string } | undefined;
}

/** An inclusion event as a reorg check needs it. */
export interface IncludedEventRow {
  readonly dappId: string;
  readonly opKey: string;
  readonly payload: string;
  readonly blockNumber: bigint;
  readonly blockHash: string;
}

export interface LifecycleEventRecord extends NewLifecycleEvent {
  /** The outbox order; also the delivery log's cursor. */
  readonly seq: number;
  readonly state: LifecycleEventState;
  /** Attempts started so far (a claim counts as one, so a crash in the middle of a post counts too). */
  readonly attempts: number;
  readonly nextAttemptAt: number;
  readonly lastError: string | null;
  readonly deliveredAt: number | null;
}

export interface LifecycleEventRepository {
  /** Appends the events in one statement, in the order given (their `seq` follows it); a taken dedupe key is skipped. */
  append(events: readonly NewLifecycleEvent[]): Promise<void>;
  /**
   * When the earliest pending event is due (its next attempt, or its claim's lapse), or undefined when none is
   * pending: the deliverer's idle check, one read on the (state, next_attempt_at) index instead of an UPDATE.
   */
  nextDueAt(): Promise<number | undefined>;
  /** The `sponsorship.included` events of the chain in blocks above `aboveBlock` (a reorg's candidates). */
  includedAbove(args: { chainId: number; aboveBlock: bigint }): Promise<IncludedEventRow[]>;
  /**
   * Claims up to `limit` due events for delivery: pending, due (`next_attempt_at <= now`), not held by another
   * claim, and with no earlier pending event of the same dApp and op key (so an op's events go out to a dApp one
   * after another, in order; another dApp's events of the same op key never wait on them). A claim holds the event until `now + leaseMs` and counts an attempt; an instance that dies holding it
   * frees it when the lease lapses. On PostgreSQL the candidate rows are locked with SKIP LOCKED, so instances
   * claiming at the same moment take different events instead of waiting on each other.
   */
  claimDue(args: {
    now: number;
    leaseMs: number;
    limit: number;
    /** dApps whose events are not claimed now (their posts in flight fill their share: eventDeliverer.ts). */
    excludeDapps?: readonly string[];
  }): Promise<LifecycleEventRecord[]>;
  /** Gives claimed events back, due as before and their attempt not counted (a claim took more than it posts). */
  unclaim(ids: readonly string[]): Promise<void>;
  markDelivered(args: { id: string; now: number }): Promise<void>;
  /** Records a failed attempt: retried at `nextAttemptAt`, or `failed` for good when that is undefined. */
  markAttemptFailed(args: { id: string; error: string; nextAttemptAt: number | undefined }): Promise<void>;
  /** The dApp's delivery log, newest first; `beforeSeq` continues a page. */
  listByDapp(args: {
    dappId: string;
    limit: number;
    beforeSeq?: number | undefined;
    state?: LifecycleEventState | undefined;
  }): Promise<LifecycleEventRecord[]>;
  findInDapp(args: { dappId: string; eventId: string }): Promise<LifecycleEventRecord | undefined>;
  /** The dApps a `sponsorship.signed` event of this op key was written for: whom its later events go to. */
  dappsOfOp(opKey: string): Promise<string[]>;
  /**
   * Sends an event of this dApp again (whatever its state): back to pending, due now, its attempts counted from
   * zero. Same id and body as before. False when the dApp has no such event.
   */
  replay(args: { dappId: string; eventId: string; now: number }): Promise<boolean>;
}

const STATES: readonly string[] = ['pending', 'delivered', 'failed'];

function toRecord(r: Selectable<LifecycleEventsTable>): LifecycleEventRecord {
  if (!STATES.includes(r.state)) throw new Error(`lifecycle event ${r.id} has an unknown state ${r.state}`);
  return {
    seq: Number(r.seq),
    id: r.id,
    dappId: r.dapp_id,
    type: r.type,
    opKey: r.op_key,
    payload: r.payload,
    createdAt: Number(r.created_at),
    state: r.state as LifecycleEventState,
    attempts: Number(r.attempts),
    nextAttemptAt: Number(r.next_attempt_at),
    lastError: r.last_error,
    deliveredAt: r.delivered_at === null ? null : Number(r.delivered_at),
    ...(r.dedupe_key === null ? {} : { dedupeKey: r.dedupe_key }),
  };
}

export function createLifecycleEventRepository(db: Kysely<Database>, kind: DatabaseKind): LifecycleEventRepository {
  // SQLite has one writer at a time, so its UPDATE … WHERE seq IN (SELECT …) is atomic as it stands; PostgreSQL
  // needs the row locks (and re-checks the lease on the newest row version once it holds them).
  const lockCandidates = kind === 'postgres' ? sql`FOR UPDATE OF e SKIP LOCKED` : sql``;
  return {
    append: (events) => appendLifecycleEvents(db, events),
    async nextDueAt() {
      const row = await db
        .selectFrom('lifecycle_events')
        .select((eb) =>
          eb.fn
            .min(
              eb
                .case()
                .when(eb.and([eb('lease_until', 'is not', null), eb('lease_until', '>', eb.ref('next_attempt_at'))]))
                .then(eb.ref('lease_until'))
                .else(eb.ref('next_attempt_at'))
                .end(),
            )
            .as('due'),
        )
        .where('state', '=', 'pending')
        .executeTakeFirst();
      return row?.due == null ? undefined : Number(row.due);
    },
    async includedAbove({ chainId, aboveBlock }) {
      const rows = await db
        .selectFrom('lifecycle_events')
        .select(['dapp_id', 'op_key', 'payload', 'block_number', 'block_hash'])
        .where('chain_id', '=', chainId)
        .where('block_number', '>', Number(aboveBlock))
        .where('type', '=', 'sponsorship.included')
        .orderBy('seq')
        .execute();
      return rows.flatMap((r) =>
        r.block_number === null || r.block_hash === null
          ? []
          : [
              {
                dappId: r.dapp_id,
                opKey: r.op_key,
                payload: r.payload,
                blockNumber: BigInt(r.block_number),
                blockHash: r.block_hash,
              },
            ],
      );
    },
    async claimDue({ now, leaseMs, limit, excludeDapps = [] }) {
      const excluded =
        excludeDapps.length === 0 ? sql`` : sql`AND e.dapp_id NOT IN (${sql.join(excludeDapps.map((d) => sql`${d}`))})`;
      const { rows } = await sql<Selectable<LifecycleEventsTable>>`
        UPDATE lifecycle_events SET lease_until = ${now + leaseMs}, attempts = attempts + 1
        WHERE seq IN (
          SELECT e.seq FROM lifecycle_events e
          WHERE e.state = 'pending' AND e.next_attempt_at <= ${now}
            AND (e.lease_until IS NULL OR e.lease_until <= ${now})
            ${excluded}
            AND NOT EXISTS (
              SELECT 1 FROM lifecycle_events p
              WHERE p.dapp_id = e.dapp_id AND p.op_key = e.op_key AND p.seq < e.seq AND p.state = 'pending'
            )
          ORDER BY e.seq LIMIT ${limit}
          ${lockCandidates}
        )
        RETURNING *`.execute(db);
      return rows.map(toRecord).sort((a, b) => a.seq - b.seq);
    },
    async unclaim(ids) {
      if (ids.length === 0) return;
      await db
        .updateTable('lifecycle_events')
        .set((eb) => ({ lease_until: null, attempts: eb('attempts', '-', 1) }))
        .where('id', 'in', [...ids])
        .where('state', '=', 'pending')
        .execute();
    },
    async markDelivered({ id, now }) {
      await db
        .updateTable('lifecycle_events')
        .set({ state: 'delivered', delivered_at: now, lease_until: null, last_error: null })
        .where('id', '=', id)
        .execute();
    },
    async markAttemptFailed({ id, error, nextAttemptAt }) {
      await db
        .updateTable('lifecycle_events')
        .set({
          ...(nextAttemptAt === undefined ? { state: 'failed' } : { next_attempt_at: nextAttemptAt }),
          lease_until: null,
          last_error: error,
        })
        .where('id', '=', id)
        .execute();
    },
    async listByDapp({ dappId, limit, beforeSeq, state }) {
      const rows = await db
        .selectFrom('lifecycle_events')
        .selectAll()
        .where('dapp_id', '=', dappId)
        .$if(beforeSeq !== undefined, (q) => q.where('seq', '<', beforeSeq ?? 0))
        .$if(state !== undefined, (q) => q.where('state', '=', state ?? 'pending'))
        .orderBy('seq', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toRecord);
    },
    async findInDapp({ dappId, eventId }) {
      const r = await db
        .selectFrom('lifecycle_events')
        .selectAll()
        .where('id', '=', eventId)
        .where('dapp_id', '=', dappId)
        .executeTakeFirst();
      return r && toRecord(r);
    },
    async dappsOfOp(opKey) {
      const rows = await db
        .selectFrom('lifecycle_events')
        .select('dapp_id')
        .distinct()
        .where('op_key', '=', opKey)
        .where('type', '=', 'sponsorship.signed')
        .execute();
      return rows.map((r) => r.dapp_id);
    },
    async replay({ dappId, eventId, now }) {
      const res = await db
        .updateTable('lifecycle_events')
        .set({
          state: 'pending',
          attempts: 0,
          next_attempt_at: now,
          lease_until: null,
          last_error: null,
          delivered_at: null,
        })
        .where('id', '=', eventId)
        .where('dapp_id', '=', dappId)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
  };
}

/** Appends `events` in one statement with `db` (the pool, or a transaction's), skipping taken dedupe keys. */
export async function appendLifecycleEvents(
  db: Kysely<Database> | Transaction<Database>,
  events: readonly NewLifecycleEvent[],
): Promise<void> {
  if (events.length === 0) return;
  await db
    .insertInto('lifecycle_events')
    .values(
      events.map((e) => ({
        id: e.id,
        dapp_id: e.dappId,
        type: e.type,
        op_key: e.opKey,
        payload: e.payload,
        created_at: e.createdAt,
        next_attempt_at: e.createdAt,
        dedupe_key: e.dedupeKey ?? null,
        ref: e.ref ?? null,
        chain_id: e.block?.chainId ?? null,
        block_number: e.block === undefined ? null : Number(e.block.number),
        block_hash: e.block?.hash.toLowerCase() ?? null,
      })),
    )
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .execute();
}
