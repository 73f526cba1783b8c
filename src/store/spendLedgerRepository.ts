import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import type { DatabaseKind } from './database.js';
import type { Database } from './schema.js';
import { createSqliteReserve } from './sqliteReserve.js';
import { isUniqueViolation } from './uniqueViolation.js';

/**
 * The spend ledger: reservations against policy caps, exact under concurrency on SQLite and PostgreSQL and
 * across processes. Every operation is one transaction that first writes (so SQLite takes its write lock before
 * reading, and PostgreSQL creates missing counter rows), then locks the counter rows it touches in key order
 * (`FOR UPDATE` on PostgreSQL; SQLite's write lock covers the database), checks and adds with bigints, and
 * writes back. The check and the reservation are one step: under any number of concurrent requests against a
 * cap that admits N, exactly N are reserved.
 */
export type LedgerUnit = 'wei' | 'usd' | 'ops';

export interface LedgerCharge {
  /** The counter row: policy, cap and window (policies/policyRules.ts). */
  readonly key: string;
  readonly unit: LedgerUnit;
  /** wei, micro-USD or a count. */
  readonly amount: bigint;
  readonly limit: bigint;
  /** Unix ms when the cap's window ends; undefined for a cap that never resets. */
  readonly windowEnd: number | undefined;
}

export type ReserveResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** The first charge that did not fit. */
      readonly charge: LedgerCharge;
      readonly used: bigint;
      readonly reserved: bigint;
    };

export interface CounterState {
  readonly used: bigint;
  readonly reserved: bigint;
}

export interface SpendLedgerRepository {
  /** Reserves every charge (used + reserved + amount ≤ limit for each) or none. */
  reserve(args: {
    readonly id: string;
    readonly dappId: string;
    readonly chainId: number;
    readonly userOpHash: string | undefined;
    readonly charges: readonly LedgerCharge[];
    readonly expiresAt: number;
    readonly now: number;
  }): Promise<ReserveResult>;
  /**
   * Replaces an open reservation by what the op really cost: each charge's reserved amount is released and its
   * actual amount (wei: `actualWei`; usd: `actualUsdMicros`, or the reserved amount when no price is given; ops:
   * 1) is added to `used`. A reservation already released as expired is settled too (its cost added, nothing
   * released again). False when it is already settled or unknown.
   */
  settle(args: {
    readonly id: string;
    readonly actualWei: bigint;
    readonly actualUsdMicros: bigint | undefined;
    readonly now: number;
  }): Promise<boolean>;
  /** Releases an open reservation whole (its op was not included before its signature expired). */
  release(args: { readonly id: string; readonly now: number }): Promise<boolean>;
  /**
   * Releases every open reservation whose signature expired before `before`; returns how many. The caller leaves
   * a grace after `validUntil` (an op is valid up to that second, and its receipt is read some blocks later):
   * `before = now - grace`. An op settled after its release is still counted (see settle).
   */
  releaseExpired(args: { readonly before: number; readonly now: number }): Promise<number>;
  counters(keys: readonly string[]): Promise<Map<string, CounterState>>;
}

const storedCharges = z.array(
  z.object({ key: z.string(), unit: z.enum(['wei', 'usd', 'ops']), amount: z.string().regex(/^\d+$/) }),
);

type Trx = Transaction<Database>;

async function lockCounters(trx: Trx, kind: DatabaseKind, keys: readonly string[]): Promise<Map<string, CounterState>> {
  const sorted = [...new Set(keys)].sort();
  if (sorted.length === 0) return new Map();
  const query = trx.selectFrom('spend_counters').select(['key', 'used', 'reserved']).where('key', 'in', sorted);
  // On SQLite the transaction's first write already holds the database's write lock; FOR UPDATE is PostgreSQL's.
  const rows = await (kind === 'postgres' ? query.orderBy('key').forUpdate() : query).execute();
  return new Map(rows.map((r) => [r.key, { used: BigInt(r.used), reserved: BigInt(r.reserved) }]));
}

async function addReserved(trx: Trx, key: string, state: CounterState, delta: bigint, usedDelta = 0n) {
  await trx
    .updateTable('spend_counters')
    .set({ reserved: (state.reserved + delta).toString(), used: (state.used + usedDelta).toString() })
    .where('key', '=', key)
    .execute();
}

/**
 * Closes a reservation: flips its status (only from one of `from`, which also claims it against a racer), then
 * releases what it still holds (`releases`) and adds `usedOf` each charge to `used`.
 */
async function close(
  db: Kysely<Database>,
  kind: DatabaseKind,
  args: {
    id: string;
    now: number;
    from: 'reserved' | 'released';
    status: 'settled' | 'released';
    actualWei?: bigint;
    usedOf(c: StoredCharge): bigint;
  },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    // Write first (see above).
    const claimed = await trx
      .updateTable('spend_reservations')
      .set({
        status: args.status,
        closed_at: args.now,
        actual_wei: args.actualWei === undefined ? null : args.actualWei.toString(),
      })
      .where('id', '=', args.id)
      .where('status', '=', args.from)
      .returning(['charges', 'dapp_id'])
      .executeTakeFirst();
    if (claimed === undefined) return false;
    const charges = storedCharges.parse(JSON.parse(claimed.charges));
    // A counter row deleted meanwhile (an operator's clean-up) is recreated, so nothing is added to thin air.
    await ensureCounters(
      trx,
      claimed.dapp_id,
      charges.map((c) => ({ key: c.key, windowEnd: undefined })),
    );
    const states = await lockCounters(
      trx,
      kind,
      charges.map((c) => c.key),
    );
    const releases = args.from === 'reserved';
    for (const c of charges) {
      const state = states.get(c.key) ?? { used: 0n, reserved: 0n };
      const amount = releases ? BigInt(c.amount) : 0n;
      // Never below zero, whatever happened to the row.
      const release = amount > state.reserved ? state.reserved : amount;
      await addReserved(trx, c.key, state, -release, args.usedOf(c));
      states.set(c.key, { used: state.used + args.usedOf(c), reserved: state.reserved - release });
    }
    return true;
  });
}

async function ensureCounters(
  trx: Trx,
  dappId: string,
  rows: readonly { readonly key: string; readonly windowEnd: number | undefined }[],
): Promise<void> {
  if (rows.length === 0) return;
  await trx
    .insertInto('spend_counters')
    .values(
      rows.map((c) => ({ key: c.key, dapp_id: dappId, window_end: c.windowEnd ?? null, used: '0', reserved: '0' })),
    )
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
}

type StoredCharge = z.infer<typeof storedCharges>[number];

export function createSpendLedgerRepository(
  db: Kysely<Database>,
  kind: DatabaseKind,
  sqlite?: BetterSqlite3.Database,
): SpendLedgerRepository {
  const reserveSync = sqlite === undefined ? undefined : createSqliteReserve(sqlite);
  const reserveOnce = (args: Parameters<SpendLedgerRepository['reserve']>[0]): Promise<ReserveResult> =>
    db.transaction().execute(async (trx) => {
      // Write first: create missing rows (and, on SQLite, take the write lock before any read).
      const sorted = [...args.charges].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      if (sorted.length > 0) {
        await trx
          .insertInto('spend_counters')
          .values(
            sorted.map((c) => ({
              key: c.key,
              dapp_id: args.dappId,
              window_end: c.windowEnd ?? null,
              used: '0',
              reserved: '0',
            })),
          )
          .onConflict((oc) => oc.column('key').doNothing())
          .execute();
      }
      const states = await lockCounters(
        trx,
        kind,
        sorted.map((c) => c.key),
      );
      // The same key twice in one request (two policies cannot share a key; this is defence) adds up.
      const pending = new Map<string, bigint>();
      for (const c of sorted) {
        const state = states.get(c.key) ?? { used: 0n, reserved: 0n };
        const before = pending.get(c.key) ?? 0n;
        if (state.used + state.reserved + before + c.amount > c.limit) {
          return { ok: false, charge: c, used: state.used, reserved: state.reserved + before };
        }
        pending.set(c.key, before + c.amount);
      }
      for (const [key, delta] of pending) {
        const state = states.get(key) ?? { used: 0n, reserved: 0n };
        await addReserved(trx, key, state, delta);
      }
      await trx
        .insertInto('spend_reservations')
        .values({
          id: args.id,
          dapp_id: args.dappId,
          chain_id: args.chainId,
          user_op_hash: args.userOpHash ?? null,
          status: 'reserved',
          charges: JSON.stringify(sorted.map((c) => ({ key: c.key, unit: c.unit, amount: c.amount.toString() }))),
          expires_at: args.expiresAt,
          created_at: args.now,
          closed_at: null,
          actual_wei: null,
        })
        .execute();
      return { ok: true } as const;
    });
  return {
    async reserve(args) {
      const negative = args.charges.find((c) => c.amount < 0n || c.limit < 0n);
      if (negative !== undefined) throw new Error(`spend ledger: a negative amount or limit for ${negative.key}`);
      try {
        return (await reserveSync?.(args)) ?? (await reserveOnce(args));
      } catch (err) {
        // The same id again (the same op signed twice: the caller keys reservations by chain and userOpHash) is
        // reserved once; the second attempt rolled back whole.
        if (isUniqueViolation(err)) return { ok: true } as const;
        throw err;
      }
    },

    async settle({ id, actualWei, actualUsdMicros, now }) {
      const usedOf = (c: StoredCharge) =>
        c.unit === 'wei' ? actualWei : c.unit === 'ops' ? 1n : (actualUsdMicros ?? BigInt(c.amount));
      const settle = { id, now, status: 'settled', actualWei, usedOf } as const;
      // An op included after its reservation was released as expired (submitted at the very end of its
      // validity, its receipt read late) still counts: its cost is added, nothing is released twice.
      return (
        (await close(db, kind, { ...settle, from: 'reserved' })) || close(db, kind, { ...settle, from: 'released' })
      );
    },

    release({ id, now }) {
      return close(db, kind, { id, now, from: 'reserved', status: 'released', usedOf: () => 0n });
    },

    async releaseExpired({ before, now }) {
      const open = await db
        .selectFrom('spend_reservations')
        .select('id')
        .where('status', '=', 'reserved')
        .where('expires_at', '<', before)
        .orderBy('expires_at')
        .limit(1000)
        .execute();
      let released = 0;
      for (const r of open) {
        if (await close(db, kind, { id: r.id, now, from: 'reserved', status: 'released', usedOf: () => 0n })) {
          released++;
        }
      }
      return released;
    },

    async counters(keys) {
      if (keys.length === 0) return new Map();
      const rows = await db
        .selectFrom('spend_counters')
        .select(['key', 'used', 'reserved'])
        .where('key', 'in', [...keys])
        .execute();
      return new Map(rows.map((r) => [r.key, { used: BigInt(r.used), reserved: BigInt(r.reserved) }]));
    },
  };
}

/** An included op's cost, as the settlement follower read it from its `UserOperationEvent`. */
export interface SettleUserOpArgs {
  readonly chainId: number;
  /** The EntryPoint's userOpHash (any case; stored lower-case). */
  readonly userOpHash: string;
  readonly actualWei: bigint;
  readonly actualUsdMicros: bigint | undefined;
  readonly now: number;
}

export interface UserOpSettlement {
  /**
   * Settles the reservation of the op `userOpHash` on `chainId` by its actual cost (see `settle`); false when
   * none is open or released (already settled, or Patron reserved nothing for it). Idempotent: the same event
   * read twice (a restart, a reorg re-read, two processes) counts once.
   */
  settleUserOp(args: SettleUserOpArgs): Promise<boolean>;
}

/**
 * The ledger with `settleUserOp`. An op is included at most once, and the signing path keys its reservation by
 * (chain, userOpHash); should two rows ever share a hash, the earliest (by creation, then id) is the one settled,
 * always the same one, so a second read of the event finds it settled instead of settling another (the rest are
 * released by the expiry sweeper).
 */
export function withUserOpSettlement(
  db: Kysely<Database>,
  ledger: SpendLedgerRepository,
): SpendLedgerRepository & UserOpSettlement {
  return {
    ...ledger,
    async settleUserOp({ chainId, userOpHash, actualWei, actualUsdMicros, now }) {
      const first = await db
        .selectFrom('spend_reservations')
        .select('id')
        .where('chain_id', '=', chainId)
        .where('user_op_hash', '=', userOpHash.toLowerCase())
        .orderBy('created_at')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      if (first === undefined) return false;
      return ledger.settle({ id: first.id, actualWei, actualUsdMicros, now });
    },
  };
}
