import type { Kysely } from 'kysely';
import type { ChainCursor, ChainCursorKey } from './chainCursorRepository.js';
import type { DatabaseKind } from './database.js';
import { ensureCounters, lockCounters, parseCharges } from './ledgerRows.js';
import type { Database } from './schema.js';
import type { ClosingBlock, IncludedIn, SpendLedgerRepository } from './spendLedgerRepository.js';

/** An included op's cost, as the settlement follower read it from its `UserOperationEvent`. */
export interface SettleUserOpArgs {
  readonly chainId: number;
  /** The EntryPoint's userOpHash (any case; stored lower-case). */
  readonly userOpHash: string;
  readonly actualWei: bigint;
  readonly actualUsdMicros: bigint | undefined;
  readonly now: number;
  /** The block the event is in: a reorg that rewinds below it reopens the reservation. */
  readonly block?: ClosingBlock | undefined;
  /** The paymaster whose event this is. */
  readonly paymaster?: string | undefined;
  /**
   * Asked only when the reservation is a guarantee: whether the user paid (the paymaster's TokenCharged for the
   * op's sender in the op's transaction). Yes: released; no: settled at the op's cost (the deposit paid).
   */
  readonly paidByUser?: (() => Promise<boolean>) | undefined;
  /** The transaction that included the op, and whether the op succeeded (the itemized ledger shows both). */
  readonly included?: IncludedIn | undefined;
}

export interface UserOpSettlement {
  /**
   * Settles the reservation of the op `userOpHash` on `chainId` by its actual cost (see `settle`), or releases a
   * guarantee the user paid; false when none is open or released (already settled, or Patron reserved nothing for
   * it). Idempotent: the same event read twice (a restart, a re-read, two processes) counts once.
   */
  settleUserOp(args: SettleUserOpArgs): Promise<boolean>;
  /**
   * After a reorg: moves the cursor back from `from` to `to` only if it is still exactly `from`, and in the same
   * transaction reopens every reservation of `paymaster` on the chain closed by an event in a block above `to`:
   * its recorded cost is taken out of `used` and its worst case reserved again, so reading the blocks again settles
   * it at the canonical branch's cost, or leaves it open (released once the chain is past its window). False when
   * the cursor had moved (another process rewound or advanced it): nothing changed.
   */
  rewindSettlement(
    args: ChainCursorKey & { readonly from: ChainCursor; readonly to: ChainCursor; readonly now: number },
  ): Promise<{ readonly rewound: boolean; readonly reopened: number }>;
}

/**
 * The ledger with settlement. An op is included at most once, and the signing path keys its reservation by
 * (chain, userOpHash) or op key; should two rows ever share a hash, the earliest (by creation, then id) is the one
 * settled, always the same one, so a second read of the event finds it settled instead of settling another.
 */
export function withUserOpSettlement(
  db: Kysely<Database>,
  kind: DatabaseKind,
  ledger: SpendLedgerRepository,
): SpendLedgerRepository & UserOpSettlement {
  return {
    ...ledger,
    async settleUserOp({
      chainId,
      userOpHash,
      actualWei,
      actualUsdMicros,
      now,
      block,
      paymaster,
      paidByUser,
      included,
    }) {
      const first = await db
        .selectFrom('spend_reservations')
        .select(['id', 'kind', 'status'])
        .where('chain_id', '=', chainId)
        .where('user_op_hash', '=', userOpHash.toLowerCase())
        .orderBy('created_at')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      if (first === undefined) return false;
      if (
        first.kind === 'guarantee' &&
        first.status === 'reserved' &&
        paidByUser !== undefined &&
        (await paidByUser())
      ) {
        return ledger.release({ id: first.id, now, block, paymaster, included });
      }
      return ledger.settle({ id: first.id, actualWei, actualUsdMicros, now, block, paymaster, included });
    },

    rewindSettlement({ from, to, now, ...key }) {
      const k = {
        chain_id: key.chainId,
        entry_point: key.entryPoint.toLowerCase(),
        paymaster: key.paymaster.toLowerCase(),
      };
      return db.transaction().execute(async (trx) => {
        // Write first, and the cursor row first: a second rewinder waits here, then finds it moved.
        const moved = await trx
          .updateTable('chain_cursors')
          .set({ block_number: Number(to.blockNumber), block_hash: to.blockHash.toLowerCase(), updated_at: now })
          .where('chain_id', '=', k.chain_id)
          .where('entry_point', '=', k.entry_point)
          .where('paymaster', '=', k.paymaster)
          .where('block_number', '=', Number(from.blockNumber))
          .where('block_hash', '=', from.blockHash.toLowerCase())
          .executeTakeFirst();
        if (moved.numUpdatedRows === 0n) return { rewound: false, reopened: 0 };
        const query = trx
          .selectFrom('spend_reservations')
          .select(['id', 'dapp_id', 'charges', 'used_charges'])
          .where('chain_id', '=', key.chainId)
          .where('paymaster', '=', k.paymaster)
          .where('settled_block', '>', Number(to.blockNumber))
          .orderBy('id');
        const closed = await (kind === 'postgres' ? query.forUpdate() : query).execute();
        if (closed.length === 0) return { rewound: true, reopened: 0 };
        const all = closed.flatMap((r) => parseCharges(r.charges).map((c) => ({ ...c, dappId: r.dapp_id })));
        for (const c of all) await ensureCounters(trx, c.dappId, [{ key: c.key, windowEnd: undefined }]);
        const states = await lockCounters(
          trx,
          kind,
          all.map((c) => c.key),
        );
        const delta = new Map<string, { used: bigint; reserved: bigint }>();
        for (const r of closed) {
          const used = JSON.parse(r.used_charges ?? '{}') as Record<string, string>;
          for (const c of parseCharges(r.charges)) {
            const d = delta.get(c.key) ?? { used: 0n, reserved: 0n };
            delta.set(c.key, { used: d.used + BigInt(used[c.key] ?? '0'), reserved: d.reserved + BigInt(c.amount) });
          }
        }
        for (const [counterKey, d] of delta) {
          const s = states.get(counterKey) ?? { used: 0n, reserved: 0n };
          await trx
            .updateTable('spend_counters')
            .set({
              used: (s.used > d.used ? s.used - d.used : 0n).toString(),
              reserved: (s.reserved + d.reserved).toString(),
            })
            .where('key', '=', counterKey)
            .execute();
        }
        await trx
          .updateTable('spend_reservations')
          .set({
            status: 'reserved',
            closed_at: null,
            actual_wei: null,
            settled_block: null,
            settled_block_hash: null,
            used_charges: null,
            // The itemized ledger's view of the undone inclusion goes with it.
            actual_usd_micros: null,
            tx_hash: null,
            success: null,
          })
          .where(
            'id',
            'in',
            closed.map((r) => r.id),
          )
          .execute();
        return { rewound: true, reopened: closed.length };
      });
    },
  };
}
