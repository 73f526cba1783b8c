import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * How far the settlement follower has read a chain's EntryPoint logs for one paymaster (table chain_cursors,
 * migration 0008). Several processes may follow the same chain on one database, so every write is conditional:
 * `advance` only ever moves forward (a slower process cannot pull the cursor back over blocks another already
 * settled), and `rewind` (after a reorg) only replaces the exact cursor its caller found wrong.
 */
export interface ChainCursorKey {
  readonly chainId: number;
  readonly entryPoint: string;
  /** The paymaster followed, or the sender (an MEE gas tank) when `follows` is 'sender'. */
  readonly paymaster: string;
  /**
   * Which topic of the UserOperationEvent `paymaster` is (default 'paymaster'). A sender's cursor is stored under
   * `sender:<address>`, which no address equals: it can never be a paymaster's cursor, whatever the addresses.
   */
  readonly follows?: 'paymaster' | 'sender' | undefined;
}

export interface ChainCursor {
  /** The last block whose events are settled. */
  readonly blockNumber: bigint;
  /** That block's hash when it was read: a different hash now means a reorg replaced it. */
  readonly blockHash: string;
}

export interface ChainCursorRepository {
  get(key: ChainCursorKey): Promise<ChainCursor | undefined>;
  /** Sets the first cursor of a chain; false (and nothing changed) when one exists already. */
  initialize(args: ChainCursorKey & { readonly to: ChainCursor; readonly now: number }): Promise<boolean>;
  /**
   * Sets the cursor to `to` when there is none or the stored one is at a lower block; true when it moved. A
   * cursor already at or past that block (another process was faster) is left alone.
   */
  advance(args: ChainCursorKey & { readonly to: ChainCursor; readonly now: number }): Promise<boolean>;
  /** Sets the cursor back to `to` only if it is still exactly `from`; true when it was replaced. */
  rewind(
    args: ChainCursorKey & { readonly from: ChainCursor; readonly to: ChainCursor; readonly now: number },
  ): Promise<boolean>;
}

/** The row's key columns (the `follows` flag is part of the stored `paymaster`, not a column of its own). */
const lower = (key: ChainCursorKey) => ({
  chain_id: key.chainId,
  entry_point: key.entryPoint.toLowerCase(),
  paymaster: key.follows === 'sender' ? `sender:${key.paymaster.toLowerCase()}` : key.paymaster.toLowerCase(),
});

/**
 * The cursor set back to `to` only if it is still exactly `from`; true when it was replaced. On `db` or inside a
 * caller's transaction (userOpSettlement.ts rewinds the cursor and reopens the ledger's rows in one).
 */
export async function rewindCursor(
  db: Kysely<Database>,
  {
    from,
    to,
    now,
    ...key
  }: ChainCursorKey & { readonly from: ChainCursor; readonly to: ChainCursor; readonly now: number },
): Promise<boolean> {
  const k = lower(key);
  const result = await db
    .updateTable('chain_cursors')
    .set({ block_number: Number(to.blockNumber), block_hash: to.blockHash.toLowerCase(), updated_at: now })
    .where('chain_id', '=', k.chain_id)
    .where('entry_point', '=', k.entry_point)
    .where('paymaster', '=', k.paymaster)
    .where('block_number', '=', Number(from.blockNumber))
    .where('block_hash', '=', from.blockHash.toLowerCase())
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export function createChainCursorRepository(db: Kysely<Database>): ChainCursorRepository {
  return {
    async get(key) {
      const k = lower(key);
      const row = await db
        .selectFrom('chain_cursors')
        .select(['block_number', 'block_hash'])
        .where('chain_id', '=', k.chain_id)
        .where('entry_point', '=', k.entry_point)
        .where('paymaster', '=', k.paymaster)
        .executeTakeFirst();
      return row && { blockNumber: BigInt(row.block_number), blockHash: row.block_hash };
    },

    async initialize({ to, now, ...key }) {
      const result = await db
        .insertInto('chain_cursors')
        .values({
          ...lower(key),
          block_number: Number(to.blockNumber),
          block_hash: to.blockHash.toLowerCase(),
          updated_at: now,
        })
        .onConflict((oc) => oc.columns(['chain_id', 'entry_point', 'paymaster']).doNothing())
        .executeTakeFirst();
      return result.numInsertedOrUpdatedRows !== undefined && result.numInsertedOrUpdatedRows > 0n;
    },

    async advance({ to, now, ...key }) {
      // One statement on both back ends: the upsert's WHERE makes "only forward" atomic without a lock.
      const result = await db
        .insertInto('chain_cursors')
        .values({
          ...lower(key),
          block_number: Number(to.blockNumber),
          block_hash: to.blockHash.toLowerCase(),
          updated_at: now,
        })
        .onConflict((oc) =>
          oc
            .columns(['chain_id', 'entry_point', 'paymaster'])
            .doUpdateSet((eb) => ({
              block_number: eb.ref('excluded.block_number'),
              block_hash: eb.ref('excluded.block_hash'),
              updated_at: eb.ref('excluded.updated_at'),
            }))
            .whereRef('chain_cursors.block_number', '<', 'excluded.block_number'),
        )
        .executeTakeFirst();
      return result.numInsertedOrUpdatedRows !== undefined && result.numInsertedOrUpdatedRows > 0n;
    },

    rewind: (args) => rewindCursor(db, args),
  };
}
