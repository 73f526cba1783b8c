import type BetterSqlite3 from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import type { DatabaseKind } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { isUniqueViolation } from '../db/uniqueViolation.js';
import { writeExpiredEvents } from '../events/lifecycleEventWrites.js';
import { addReserved, close, ensureCounters, lockCounters, policyVersionIn, type Trx } from './ledgerRows.js';
import {
  type ClosingBlock,
  type CounterState,
  HOLD_KEY_PREFIX,
  type IncludedIn,
  type ReserveArgs,
  type ReserveResult,
} from './ledgerTypes.js';
import { createPgReserveBatcher } from './pgReserveBatch.js';
import {
  fitCharges,
  newReservationRow,
  planMerge,
  type StoredCharge,
  type StoredReservation,
  sortedByKey,
  usageOf,
  windowOf,
} from './reservationMerge.js';
import { createSqliteReserve } from './sqliteReserve.js';
import { spendTokenUse } from './tokenUseRows.js';

/**
 * The spend ledger: reservations against policy caps, exact under concurrency on SQLite and PostgreSQL and
 * across processes. Every operation is one transaction that first writes (so SQLite takes its write lock before
 * reading, and PostgreSQL creates missing counter rows), then locks the counter rows it touches in key order
 * (`FOR UPDATE` on PostgreSQL; SQLite's write lock covers the database), checks and adds with bigints, and
 * writes back. The check and the reservation are one step: under any number of concurrent requests against a
 * cap that admits N, exactly N are reserved. Locks are always taken in one order: the dApp's policy version
 * row, a reservation row, the counter rows (a rewind: the cursor row first).
 *
 * A reservation is closed by the chain only: settled at its op's cost when settlement reads its event, released
 * when the settlement cursor of its paymaster is past its signed window (`releaseClosed`), reopened when a reorg
 * rewinds the cursor below the block that closed it (`rewindSettlement`).
 */
export type {
  ChainWindow,
  ClosingBlock,
  CounterState,
  IncludedIn,
  LedgerCharge,
  LedgerItemFacts,
  LedgerUnit,
  ReservationKind,
  ReserveArgs,
  ReserveResult,
} from './ledgerTypes.js';

export interface SpendLedgerRepository {
  /** Reserves every charge (used + reserved + amount ≤ limit for each) or none. */
  reserve(args: ReserveArgs): Promise<ReserveResult>;
  /**
   * Replaces an open reservation by what the op really cost: each charge's reserved amount is released and its
   * actual amount (wei: `actualWei`, or the reserved amount when it is undefined; usd: `actualUsdMicros`, or the
   * reserved amount when no price is given; ops: 1) is added to `used`. A reservation already released is settled
   * too (its cost added, nothing released again). False when it is already settled or unknown.
   */
  settle(args: {
    readonly id: string;
    /**
     * What Patron's paymaster deposit paid (the op's actualGasCost). Undefined: the deposit paid nothing and each wei
     * charge keeps its reserved amount (an MEE tank's payment: a fixed transfer, its gas paid by the MEE node).
     */
    readonly actualWei: bigint | undefined;
    readonly actualUsdMicros: bigint | undefined;
    readonly now: number;
    readonly block?: ClosingBlock | undefined;
    readonly paymaster?: string | undefined;
    /** The transaction that included the op (the itemized ledger shows it). */
    readonly included?: IncludedIn | undefined;
  }): Promise<boolean>;
  /** Releases an open reservation whole (its op can no longer be included, or the user paid for it). */
  release(args: {
    readonly id: string;
    readonly now: number;
    readonly block?: ClosingBlock | undefined;
    readonly paymaster?: string | undefined;
    /** A guarantee the user paid: the transaction that included the op. */
    readonly included?: IncludedIn | undefined;
    /** A guarantee the user paid: what the op took from the paymaster's deposit all the same (its actualGasCost). */
    readonly depositWei?: bigint | undefined;
  }): Promise<boolean>;
  /**
   * Releases every open reservation of `paymaster` on `chainId` whose signed window closed before the settlement
   * cursor's block: its timestamp past `validUntil`, its number past a block window's last block. Everything up
   * to the cursor is settled and no later block can include such a signature. Returns how many.
   */
  releaseClosed(args: {
    readonly chainId: number;
    readonly paymaster: string;
    /**
     * Only the rows of exactly `paymaster`. Default: also the rows made before migration 0011 (no paymaster), which
     * any follower of a paymaster releases; an MEE tank's follower reads only its tank's ops, so they are not its.
     */
    readonly exactPaymaster?: boolean | undefined;
    readonly cursorBlock: bigint;
    readonly cursorTimestamp: bigint;
    readonly now: number;
  }): Promise<number>;
  counters(keys: readonly string[]): Promise<Map<string, CounterState>>;
  /**
   * Deletes the hold counters (policies/holdCharges.ts) that hold nothing: one per caller and cap, so a long-lived
   * cap met by many IPs would keep a row for each. A reservation recreates its row (ensureCounters); one made while
   * its row is deleted counts a hold short by its amount at most, never a cap. Returns how many.
   */
  sweepIdleHolds(): Promise<number>;
}

export function createSpendLedgerRepository(
  db: Kysely<Database>,
  kind: DatabaseKind,
  sqlite?: BetterSqlite3.Database,
): SpendLedgerRepository {
  const reserveSync = sqlite === undefined ? undefined : createSqliteReserve(sqlite);

  /** The same id again, under the transaction's locks: see reservationMerge.ts. */
  const mergeInto = async (trx: Trx, args: ReserveArgs, existing: StoredReservation): Promise<ReserveResult> => {
    const sorted = sortedByKey(args.charges);
    await ensureCounters(trx, args.dappId, sorted);
    const states = await lockCounters(
      trx,
      kind,
      sorted.map((c) => c.key),
    );
    const plan = planMerge({
      existing,
      incoming: sorted,
      window: windowOf(args),
      expiresAt: args.expiresAt,
      kind: args.kind ?? 'sponsored',
      signature: args.signature,
      counters: states,
    });
    if (!plan.ok) return plan;
    if (!(await spendTokenIn(trx, args))) return { ok: false, tokenReplayed: true };
    for (const [key, delta] of plan.add) {
      await addReserved(trx, key, states.get(key) ?? { used: 0n, reserved: 0n }, delta);
    }
    if (plan.row !== undefined) {
      await trx
        .updateTable('spend_reservations')
        .set({
          ...plan.row,
          status: 'reserved',
          closed_at: null,
          actual_wei: null,
          deposit_wei: null,
          actual_usd_micros: null,
          tx_hash: null,
          success: null,
        })
        .where('id', '=', args.id)
        .execute();
    }
    return { ok: true, ...usageOf({ report: args.reportUsage, add: plan.add, counters: states }) };
  };

  /**
   * One attempt in one transaction. A new id (nearly every request) pays no read of its reservation row: its
   * insert finds a taken id, or a refusal checks for one (without a lock: the counters are locked by then, and
   * the reservation row is always locked before them), and the caller goes again with `existingFirst`, which
   * locks the row first and merges into it.
   */
  const reserveOnce = (args: ReserveArgs, existingFirst: boolean): Promise<ReserveResult | typeof AGAIN> =>
    db.transaction().execute(async (trx): Promise<ReserveResult | typeof AGAIN> => {
      // PostgreSQL: the version first, under a share lock that a policy write's UPDATE waits for (and that waits
      // for it): a write acknowledged before this reads the new version; one after it waits until this commits.
      if (kind === 'postgres' && args.policyVersion !== undefined) {
        const current = await policyVersionIn(trx, kind, args.dappId);
        if (current !== args.policyVersion) return { ok: false, policyVersion: current };
      }
      // Write first: create missing rows (and, on SQLite, take the write lock before any read).
      const sorted = sortedByKey(args.charges);
      await ensureCounters(trx, args.dappId, sorted);
      if (kind === 'sqlite' && args.policyVersion !== undefined) {
        const current = await policyVersionIn(trx, kind, args.dappId);
        if (current !== args.policyVersion) return { ok: false, policyVersion: current };
      }
      if (existingFirst) {
        const existingQuery = trx
          .selectFrom('spend_reservations')
          .select(['status', 'charges', 'valid_until', 'last_block', 'expires_at', 'kind', 'signatures'])
          .where('id', '=', args.id);
        const existing = await (kind === 'postgres' ? existingQuery.forUpdate() : existingQuery).executeTakeFirst();
        if (existing !== undefined) return mergeInto(trx, args, existing);
      }
      const states = await lockCounters(
        trx,
        kind,
        sorted.map((c) => c.key),
      );
      const fit = fitCharges(sorted, states);
      if (!fit.ok) {
        if (!existingFirst) {
          const taken = await trx
            .selectFrom('spend_reservations')
            .select('id')
            .where('id', '=', args.id)
            .executeTakeFirst();
          if (taken !== undefined) return AGAIN;
        }
        return fit;
      }
      // The token after the caps (a refusal leaves it usable), before any write it must not go without.
      if (!(await spendTokenIn(trx, args))) return { ok: false, tokenReplayed: true };
      for (const [key, delta] of fit.add) {
        const state = states.get(key) ?? { used: 0n, reserved: 0n };
        await addReserved(trx, key, state, delta);
      }
      await trx.insertInto('spend_reservations').values(newReservationRow(args, sorted)).execute();
      return { ok: true, ...usageOf({ report: args.reportUsage, add: fit.add, counters: states }) };
    });

  const releaseOne = (
    id: string,
    now: number,
    extra: {
      block?: ClosingBlock;
      paymaster?: string;
      included?: IncludedIn;
      depositWei?: bigint;
      onClosed?: (trx: Trx) => Promise<void>;
    } = {},
  ) => close(db, kind, { id, now, from: 'reserved', status: 'released', usedOf: () => 0n, ...extra });

  /** One request on its own: SQLite's synchronous transaction, or PostgreSQL's single-request one with merges. */
  const reserveAlone = async (args: ReserveArgs): Promise<ReserveResult> => {
    let existingFirst = false;
    for (let attempt = 0; ; attempt++) {
      try {
        const result = (await reserveSync?.(args)) ?? (await reserveOnce(args, existingFirst));
        if (result !== AGAIN) return result;
      } catch (err) {
        // The id is taken (the same op signed again, or two first reservations of it racing): the attempt rolled
        // back whole, and the next merges into the row.
        if (!isUniqueViolation(err) || attempt >= 3) throw err;
      }
      if (attempt >= 3) throw new Error(`spend ledger: reservation ${args.id} could not be merged`);
      existingFirst = true;
    }
  };
  // PostgreSQL: the requests waiting in this process share one transaction (pgReserveBatch.ts).
  const reserveBatched = kind === 'postgres' ? createPgReserveBatcher({ db, alone: reserveAlone }) : undefined;

  return {
    async reserve(args) {
      const negative = args.charges.find((c) => c.amount < 0n || c.limit < 0n);
      if (negative !== undefined) throw new Error(`spend ledger: a negative amount or limit for ${negative.key}`);
      return reserveBatched === undefined ? reserveAlone(args) : reserveBatched(args);
    },

    async settle({ id, actualWei, actualUsdMicros, now, block, paymaster, included }) {
      const usedOf = (c: StoredCharge) =>
        c.unit === 'wei'
          ? (actualWei ?? BigInt(c.amount))
          : c.unit === 'ops'
            ? 1n
            : (actualUsdMicros ?? BigInt(c.amount));
      const settle = {
        id,
        now,
        status: 'settled',
        actualWei,
        // What the deposit paid: the same as what the dApp's caps are charged, for a settled op.
        depositWei: actualWei,
        actualUsdMicros,
        included,
        usedOf,
        block,
        paymaster,
      } as const;
      // An op included after its reservation was released (read late, or a reservation released by hand) still
      // counts: its cost is added, nothing is released twice.
      return (
        (await close(db, kind, { ...settle, from: 'reserved' })) || close(db, kind, { ...settle, from: 'released' })
      );
    },

    release({ id, now, block, paymaster, included, depositWei }) {
      return releaseOne(id, now, {
        ...(block === undefined ? {} : { block }),
        ...(paymaster === undefined ? {} : { paymaster }),
        ...(included === undefined ? {} : { included }),
        ...(depositWei === undefined ? {} : { depositWei }),
      });
    },

    async releaseClosed({ chainId, paymaster, exactPaymaster, cursorBlock, cursorTimestamp, now }) {
      let released = 0;
      for (let batch = 0; batch < 100; batch++) {
        const query = { chainId, paymaster, exactPaymaster, cursorBlock, cursorTimestamp };
        const open = await openReservationsQuery(db, query).limit(RELEASE_BATCH).execute();
        // Released unused: `sponsorship.expired` commits with the release (store/events/lifecycleEventWrites.ts).
        for (const r of open) {
          const onClosed = (trx: Trx) => writeExpiredEvents(trx, { reservationId: r.id, now });
          if (await releaseOne(r.id, now, { onClosed })) released++;
        }
        if (open.length < RELEASE_BATCH) break;
      }
      return released;
    },

    async sweepIdleHolds() {
      const r = await db
        .deleteFrom('spend_counters')
        .where('key', 'like', `${HOLD_KEY_PREFIX}%`)
        .where('reserved', '=', '0')
        .where('used', '=', '0')
        .executeTakeFirst();
      return Number(r.numDeletedRows);
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

/**
 * The reservations of a chain still open whose signed window the chain has passed (the settlement follower
 * releases them). Exported for the test that holds it to the partial index over open rows (migration 0021).
 */
export function openReservationsQuery(
  db: Kysely<Database>,
  args: {
    chainId: number;
    paymaster: string;
    exactPaymaster?: boolean | undefined;
    cursorBlock: bigint;
    cursorTimestamp: bigint;
  },
) {
  const paymaster = args.paymaster.toLowerCase();
  return (
    db
      .selectFrom('spend_reservations')
      .select('id')
      .where('chain_id', '=', args.chainId)
      // A literal, not a parameter: the partial index over open rows is used only for this very term (0021).
      .where('status', '=', sql.lit('reserved'))
      .where((eb) =>
        args.exactPaymaster === true
          ? eb('paymaster', '=', paymaster)
          : eb.or([eb('paymaster', '=', paymaster), eb('paymaster', 'is', null)]),
      )
      .where((eb) => eb.or([eb('valid_until', 'is not', null), eb('last_block', 'is not', null)]))
      .where((eb) => eb.or([eb('valid_until', 'is', null), eb('valid_until', '<', Number(args.cursorTimestamp))]))
      .where((eb) => eb.or([eb('last_block', 'is', null), eb('last_block', '<', Number(args.cursorBlock))]))
  );
}

/** The request's token spent in the reservation's transaction: true when spent now or when it carries none. */
const spendTokenIn = (trx: Trx, args: ReserveArgs): Promise<boolean> =>
  args.tokenUse === undefined ? Promise.resolve(true) : spendTokenUse(trx, { dappId: args.dappId, ...args.tokenUse });

/** An attempt that found its id taken: go again, merging (reserveOnce). */
const AGAIN = Symbol('again');

/** Reservations released per query by releaseClosed (it goes on until a batch is not full). */
export const RELEASE_BATCH = 1000;
