import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database, DepositTopupsTable } from '../db/schema.js';

/**
 * The deposit keeper's ledger (table deposit_topups, migration 0027; src/keeper/README.md): every top-up of a
 * paymaster's EntryPoint deposit sent, dry-run or proposed to the owner's Safe, with its state. The keeper's daily
 * limit is summed from it (`sentSince`), so the limit holds across restarts and across instances.
 */
export type TopupMode = 'sent' | 'dry_run' | 'proposed';
/**
 * `pending`: sent and not yet mined, or a proposal not yet met (the deposit still under the mark); `confirmed`: mined
 * (a proposal: the deposit back at the mark); `failed`: reverted, dropped or refused by the node.
 */
export type TopupState = 'pending' | 'confirmed' | 'failed';

export interface DepositTopup {
  readonly id: string;
  readonly chainId: number;
  /** Lower-case 0x hex, as every address here. */
  readonly paymaster: string;
  readonly entryPoint: string;
  readonly amountWei: bigint;
  /** The funding key's address; the owner (the Safe) for a proposal. */
  readonly funder: string | undefined;
  readonly mode: TopupMode;
  readonly txHash: string | undefined;
  readonly state: TopupState;
  /** Why (the mark it fell under), and how it ended when it failed. */
  readonly reason: string;
  /** The deposit, mark and target when it was decided. */
  readonly depositWei: bigint;
  readonly markWei: bigint;
  readonly targetWei: bigint;
  /** The Safe transaction and its Transaction Builder batch (mode `proposed`). */
  readonly proposal: unknown;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface DepositTopupRepository {
  insert(row: Omit<DepositTopup, 'updatedAt'>): Promise<void>;
  /** Moves a pending row to `state` (with its tx hash or the reason it ended); false when it was no longer pending. */
  settle(args: {
    readonly id: string;
    readonly state: Exclude<TopupState, 'pending'>;
    readonly reason?: string;
    readonly now: number;
  }): Promise<boolean>;
  /** Wei sent to the paymaster's deposit (mode `sent`, not failed) since `since` (unix ms): the daily limit's use. */
  sentSince(args: { readonly chainId: number; readonly paymaster: string; readonly since: number }): Promise<bigint>;
  /** The paymaster's pending rows (sent and not yet mined, or open proposals), oldest first. */
  pending(args: { readonly chainId: number; readonly paymaster: string }): Promise<readonly DepositTopup[]>;
  /** Newest first, at most `limit`, optionally of one chain or paymaster, created before `before` (unix ms). */
  list(args: {
    readonly chainId?: number | undefined;
    readonly paymaster?: string | undefined;
    readonly before?: number | undefined;
    readonly limit: number;
  }): Promise<readonly DepositTopup[]>;
}

const modeSchema = z.enum(['sent', 'dry_run', 'proposed']);
const stateSchema = z.enum(['pending', 'confirmed', 'failed']);

function toTopup(r: DepositTopupsTable): DepositTopup {
  return {
    id: r.id,
    chainId: Number(r.chain_id),
    paymaster: r.paymaster,
    entryPoint: r.entry_point,
    amountWei: BigInt(r.amount_wei),
    funder: r.funder ?? undefined,
    mode: modeSchema.parse(r.mode),
    txHash: r.tx_hash ?? undefined,
    state: stateSchema.parse(r.state),
    reason: r.reason,
    depositWei: BigInt(r.deposit_wei),
    markWei: BigInt(r.mark_wei),
    targetWei: BigInt(r.target_wei),
    proposal: r.proposal === null ? undefined : JSON.parse(r.proposal),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

export function createDepositTopupRepository(db: Kysely<Database>): DepositTopupRepository {
  return {
    async insert(t) {
      await db
        .insertInto('deposit_topups')
        .values({
          id: t.id,
          chain_id: t.chainId,
          paymaster: t.paymaster.toLowerCase(),
          entry_point: t.entryPoint.toLowerCase(),
          amount_wei: t.amountWei.toString(),
          funder: t.funder?.toLowerCase() ?? null,
          mode: t.mode,
          tx_hash: t.txHash?.toLowerCase() ?? null,
          state: t.state,
          reason: t.reason,
          deposit_wei: t.depositWei.toString(),
          mark_wei: t.markWei.toString(),
          target_wei: t.targetWei.toString(),
          proposal: t.proposal === undefined ? null : JSON.stringify(t.proposal),
          created_at: t.createdAt,
          updated_at: t.createdAt,
        })
        .execute();
    },

    async settle({ id, state, reason, now }) {
      const result = await db
        .updateTable('deposit_topups')
        .set({ state, updated_at: now, ...(reason === undefined ? {} : { reason }) })
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async sentSince({ chainId, paymaster, since }) {
      // A handful of rows a day per paymaster: summed here, exactly, in bigints (amounts are decimal text).
      const rows = await db
        .selectFrom('deposit_topups')
        .select('amount_wei')
        .where('chain_id', '=', chainId)
        .where('paymaster', '=', paymaster.toLowerCase())
        .where('mode', '=', 'sent')
        .where('state', '!=', 'failed')
        .where('created_at', '>=', since)
        .execute();
      return rows.reduce((sum, r) => sum + BigInt(r.amount_wei), 0n);
    },

    async pending({ chainId, paymaster }) {
      const rows = await db
        .selectFrom('deposit_topups')
        .selectAll()
        .where('chain_id', '=', chainId)
        .where('paymaster', '=', paymaster.toLowerCase())
        .where('state', '=', 'pending')
        .orderBy('created_at', 'asc')
        .execute();
      return rows.map(toTopup);
    },

    async list({ chainId, paymaster, before, limit }) {
      let q = db.selectFrom('deposit_topups').selectAll();
      if (chainId !== undefined) q = q.where('chain_id', '=', chainId);
      if (paymaster !== undefined) q = q.where('paymaster', '=', paymaster.toLowerCase());
      if (before !== undefined) q = q.where('created_at', '<', before);
      const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toTopup);
    },
  };
}
