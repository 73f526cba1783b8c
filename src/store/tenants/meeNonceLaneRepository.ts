import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * The 2D-nonce lanes of Patron's MEE gas tanks (migration 0030, src/mee/README.md). A lane is allocated to one dApp
 * for one quote; the nonce read from the EntryPoint for its key is stored with it; signing claims it once. Every
 * step is one conditional statement, so two instances on one database never hand out or sign the same lane.
 */
export interface MeeNonceLane {
  readonly tankId: string;
  readonly lane: number;
  readonly dappId: string;
  readonly nonce: bigint;
  readonly allocatedAt: number;
}

/** A Nexus nonce key leaves 3 bytes for the lane (the rest names the validation mode and the validator). */
export const MEE_LANES_PER_TANK = 2 ** 24;

export interface MeeNonceLaneRepository {
  /**
   * The tank's next lane, handed to `dappId`: the tank's allocation count moved by one in the statement that reads it,
   * so concurrent callers on any instance get different lanes (the count modulo MEE_LANES_PER_TANK: a lane comes back
   * after 16.7 million quotes, by then long signed or expired). Its nonce is recorded with `recordNonce`.
   */
  allocate(args: { readonly tankId: string; readonly dappId: string; readonly now: number }): Promise<number>;
  /** The nonce the EntryPoint gave for the lane's key, stored for the sign step to compare. */
  recordNonce(args: { readonly tankId: string; readonly lane: number; readonly nonce: bigint }): Promise<void>;
  /**
   * Claims the lane for one signature: true only for the first caller, only for the dApp it was handed to, only with
   * the nonce recorded for it, and only while it was allocated after `allocatedAfter` (unix ms).
   */
  claim(args: {
    readonly tankId: string;
    readonly lane: number;
    readonly dappId: string;
    readonly nonce: bigint;
    readonly allocatedAfter: number;
    readonly now: number;
  }): Promise<boolean>;
  get(args: { readonly tankId: string; readonly lane: number }): Promise<MeeNonceLane | undefined>;
}

export function createMeeNonceLaneRepository(db: Kysely<Database>): MeeNonceLaneRepository {
  return {
    allocate: ({ tankId, dappId, now }) =>
      db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('mee_nonce_counters')
          .values({ tank_id: tankId, allocated: 1 })
          .onConflict((oc) =>
            oc.column('tank_id').doUpdateSet((eb) => ({ allocated: eb('mee_nonce_counters.allocated', '+', 1) })),
          )
          .returning('allocated')
          .executeTakeFirstOrThrow();
        const lane = Number(row.allocated) % MEE_LANES_PER_TANK;
        // A lane handed out again (after a full turn of the counter) starts afresh: its old quote is long gone.
        await trx
          .insertInto('mee_nonce_lanes')
          .values({ tank_id: tankId, lane, dapp_id: dappId, nonce: '', allocated_at: now, signed_at: null })
          .onConflict((oc) =>
            oc
              .columns(['tank_id', 'lane'])
              .doUpdateSet({ dapp_id: dappId, nonce: '', allocated_at: now, signed_at: null }),
          )
          .execute();
        return lane;
      }),
    async recordNonce({ tankId, lane, nonce }) {
      await db
        .updateTable('mee_nonce_lanes')
        .set({ nonce: nonce.toString() })
        .where('tank_id', '=', tankId)
        .where('lane', '=', lane)
        .execute();
    },
    async claim({ tankId, lane, dappId, nonce, allocatedAfter, now }) {
      const result = await db
        .updateTable('mee_nonce_lanes')
        .set({ signed_at: now })
        .where('tank_id', '=', tankId)
        .where('lane', '=', lane)
        .where('dapp_id', '=', dappId)
        .where('nonce', '=', nonce.toString())
        .where('signed_at', 'is', null)
        .where('allocated_at', '>', allocatedAfter)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async get({ tankId, lane }) {
      const row = await db
        .selectFrom('mee_nonce_lanes')
        .selectAll()
        .where('tank_id', '=', tankId)
        .where('lane', '=', lane)
        .executeTakeFirst();
      if (row === undefined || row.nonce === '') return undefined;
      return {
        tankId: row.tank_id,
        lane: Number(row.lane),
        dappId: row.dapp_id,
        nonce: BigInt(row.nonce),
        allocatedAt: Number(row.allocated_at),
      };
    },
  };
}
