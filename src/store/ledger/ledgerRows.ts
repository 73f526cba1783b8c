import type { Kysely, Transaction } from 'kysely';
import type { DatabaseKind } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { type ClosingBlock, type CounterState, HOLD_KEY_PREFIX, type IncludedIn } from './ledgerTypes.js';
import { type StoredCharge, storedChargesSchema } from './reservationMerge.js';

/**
 * The spend ledger's row work inside a transaction, in the lock order spendLedgerRepository.ts states: counter rows
 * created, locked in key order and moved; a reservation closed (claimed by its status, its charges released, its
 * cost added and recorded with the closing block); the dApp's policy version read under a share lock.
 */

export type Trx = Transaction<Database>;

export async function lockCounters(
  trx: Trx,
  kind: DatabaseKind,
  keys: readonly string[],
): Promise<Map<string, CounterState>> {
  const sorted = [...new Set(keys)].sort();
  if (sorted.length === 0) return new Map();
  const query = trx.selectFrom('spend_counters').select(['key', 'used', 'reserved']).where('key', 'in', sorted);
  // On SQLite the transaction's first write already holds the database's write lock; FOR UPDATE is PostgreSQL's.
  const rows = await (kind === 'postgres' ? query.orderBy('key').forUpdate() : query).execute();
  return new Map(rows.map((r) => [r.key, { used: BigInt(r.used), reserved: BigInt(r.reserved) }]));
}

export async function addReserved(trx: Trx, key: string, state: CounterState, delta: bigint, usedDelta = 0n) {
  await trx
    .updateTable('spend_counters')
    .set({ reserved: (state.reserved + delta).toString(), used: (state.used + usedDelta).toString() })
    .where('key', '=', key)
    .execute();
}

export async function ensureCounters(
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

export const parseCharges = (json: string): StoredCharge[] => storedChargesSchema.parse(JSON.parse(json));

/**
 * Closes a reservation: flips its status (only from one of `from`, which also claims it against a racer), then
 * releases what it still holds and adds `usedOf` each charge to `used`, remembering what it added and the block
 * that closed it.
 */
export async function close(
  db: Kysely<Database>,
  kind: DatabaseKind,
  args: {
    id: string;
    now: number;
    from: 'reserved' | 'released';
    /** 'superseded': its op key's nonce was used by another op (settlement), so none of its signatures can be included. */
    status: 'settled' | 'released' | 'superseded';
    actualWei?: bigint | undefined;
    /** What the op took from the paymaster's deposit (an inclusion's actualGasCost, migration 0028). */
    depositWei?: bigint | undefined;
    /** The itemized ledger's view of the closing event (migration 0019). */
    actualUsdMicros?: bigint | undefined;
    included?: IncludedIn | undefined;
    block?: ClosingBlock | undefined;
    paymaster?: string | undefined;
    usedOf(c: StoredCharge): bigint;
    /** Runs in the transaction once the reservation is closed (the outbox's event of the close). */
    onClosed?: ((trx: Trx) => Promise<void>) | undefined;
  },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    // Write first (see above).
    const claimed = await trx
      .updateTable('spend_reservations')
      .set((eb) => ({
        status: args.status,
        closed_at: args.now,
        actual_wei: args.actualWei === undefined ? null : args.actualWei.toString(),
        deposit_wei: args.depositWei === undefined ? null : args.depositWei.toString(),
        actual_usd_micros: args.actualUsdMicros === undefined ? null : args.actualUsdMicros.toString(),
        tx_hash: args.included?.txHash.toLowerCase() ?? null,
        success: args.included === undefined ? null : args.included.success ? 1 : 0,
        settled_block: args.block === undefined ? null : Number(args.block.number),
        settled_block_hash: args.block === undefined ? null : args.block.hash.toLowerCase(),
        // A row made before migration 0011 learns its paymaster from the follower that closed it.
        paymaster: eb.fn.coalesce('paymaster', eb.val(args.paymaster?.toLowerCase() ?? null)),
      }))
      .where('id', '=', args.id)
      .where('status', '=', args.from)
      .returning(['charges', 'dapp_id'])
      .executeTakeFirst();
    if (claimed === undefined) return false;
    const charges = parseCharges(claimed.charges);
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
    const used: Record<string, string> = {};
    for (const c of charges) {
      const state = states.get(c.key) ?? { used: 0n, reserved: 0n };
      const amount = releases ? BigInt(c.amount) : 0n;
      // Never below zero, whatever happened to the row.
      const release = amount > state.reserved ? state.reserved : amount;
      // A hold counter (policies/holdCharges.ts) only ever holds: released, never spent.
      const add = c.key.startsWith(HOLD_KEY_PREFIX) ? 0n : args.usedOf(c);
      await addReserved(trx, c.key, state, -release, add);
      states.set(c.key, { used: state.used + add, reserved: state.reserved - release });
      used[c.key] = (BigInt(used[c.key] ?? '0') + add).toString();
    }
    // What a reorg takes back out (rewindSettlement): only when an event closed it.
    if (args.block !== undefined) {
      await trx
        .updateTable('spend_reservations')
        .set({ used_charges: JSON.stringify(used) })
        .where('id', '=', args.id)
        .execute();
    }
    await args.onClosed?.(trx);
    return true;
  });
}

/** The dApp's policy version under a share lock (PostgreSQL) or the write lock the transaction holds (SQLite). */
export async function policyVersionIn(trx: Trx, kind: DatabaseKind, dappId: string): Promise<number> {
  const query = trx.selectFrom('policy_versions').select('version').where('dapp_id', '=', dappId);
  const row = await (kind === 'postgres' ? query.forShare() : query).executeTakeFirst();
  return Number(row?.version ?? 0);
}
