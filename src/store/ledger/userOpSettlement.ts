import { type Kysely, sql } from 'kysely';
import type { DatabaseKind } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { writeExpiredEvents } from '../events/lifecycleEventWrites.js';
import { attribute, distinctDapps, type OpKeyRow, openRows } from './attribution.js';
import { type ChainCursor, type ChainCursorKey, rewindCursor } from './chainCursorRepository.js';
import { close, ensureCounters, lockCounters, parseCharges } from './ledgerRows.js';
import type { ClosingBlock, IncludedIn, SpendLedgerRepository } from './spendLedgerRepository.js';

/** An included op's cost, as the settlement follower read it from its `UserOperationEvent`. */
export interface SettleUserOpArgs {
  readonly chainId: number;
  /** The EntryPoint's userOpHash (any case; stored lower-case). */
  readonly userOpHash: string;
  /** chain/opKey.ts of the event's (chain, EntryPoint, sender, nonce): what a reservation is found by. */
  readonly opKey: string;
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
  /**
   * Asked only when more than one dApp signed the op key: the fingerprint (paymaster/requestFacts.ts) of the
   * paymaster signature the included op carries, read from its transaction; undefined when it cannot be read.
   */
  readonly includedSignature?: (() => Promise<string | undefined>) | undefined;
  /**
   * An MEE gas tank's op, read by the tank's follower (`paymaster` is the tank; src/settlement/README.md, "MEE gas
   * tanks"): only the rows of the tank are closed, the op key's others being their own paymasters' to close; each
   * is settled at its reserved amounts (the payment is a fixed transfer, its gas paid by the MEE node's paymaster,
   * not Patron's deposit), or released when the op reverted (`included.success` false: the transfer did not happen).
   */
  readonly fixedPayment?: boolean | undefined;
}

/** What settling an event did: whether a reservation closed now, and the dApps whose signature the op carried. */
export interface SettledOp {
  readonly settled: boolean;
  /** The dApps charged for the op (or whose user paid), now or at an earlier read of the same event. */
  readonly dappIds: readonly string[];
}

export interface UserOpSettlement {
  /**
   * Settles the op's reservation by its actual cost (see `settle`), or releases a guarantee the user paid, for the
   * dApp whose signature the op carried (attribution.ts); every other dApp's reservation of the op key is closed
   * as superseded (its signature can never be included: the nonce is used). Idempotent: the same event read twice
   * (a restart, a re-read, two processes) counts once and answers the same dApps.
   */
  settleUserOp(args: SettleUserOpArgs): Promise<SettledOp>;
  /**
   * Closes every open reservation of the op key as superseded: an op of the same (sender, nonce) was included that
   * Patron's paymaster did not pay for (another paymaster, or the account itself), so none of its signatures can be
   * included any more. Returns how many.
   */
  supersedeOpKey(args: {
    readonly opKey: string;
    /** The paymaster that paid for the op (zero address: none): its own rows are its follower's to settle. */
    readonly paidBy: string;
    /** The op's sender: the rows whose `paymaster` it is (an MEE tank's payments) are its own follower's to settle. */
    readonly sender: string;
    readonly now: number;
    readonly block: ClosingBlock;
    readonly included: IncludedIn;
  }): Promise<number>;
  /**
   * The senders of the chain's open reservations of `paymaster` (lower-case 0x hex), at most `limit`: settlement
   * reads their ops paid by anyone else (supersedeOpKey).
   */
  openSenders(args: {
    readonly chainId: number;
    readonly paymaster: string;
    readonly limit: number;
  }): Promise<string[]>;
  /** Whether a reservation of exactly `paymaster` is open on the chain (a retired MEE tank is followed until none is). */
  hasOpenReservations(args: { readonly chainId: number; readonly paymaster: string }): Promise<boolean>;
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
 * The earliest row made before migration 0022 (no op key) for (chain, userOpHash or op key): read from the partial
 * index over exactly those rows (migration 0024), which new rows no longer enter.
 */
export const legacyRowQuery = (db: Kysely<Database>, args: { readonly chainId: number; readonly hash: string }) =>
  db
    .selectFrom('spend_reservations')
    .select(['id', 'dapp_id', 'kind', 'status', 'signatures', 'settled_block', 'tx_hash'])
    .where('chain_id', '=', args.chainId)
    .where('user_op_hash', '=', args.hash.toLowerCase())
    .where('op_key', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1);

/**
 * The ledger with settlement. A reservation is its dApp's row for the op key (reservationMerge.ts); the rows of one
 * op key are found by it (migration 0022), rows made before by (chain, userOpHash) or the op key in user_op_hash,
 * the earliest first, so a second read of the event finds it settled instead of settling another.
 */
export function withUserOpSettlement(
  db: Kysely<Database>,
  kind: DatabaseKind,
  ledger: SpendLedgerRepository,
): SpendLedgerRepository & UserOpSettlement {
  /** The row's close for this event: released if its user paid (a guarantee or token op), else settled. */
  const closeChosen = async (row: OpKeyRow, args: SettleUserOpArgs): Promise<boolean> => {
    const { actualWei, actualUsdMicros, now, block, paymaster, included } = args;
    if (args.fixedPayment === true) {
      // The tank's transfer happened exactly as reserved, or (reverted) not at all.
      return included?.success === false
        ? ledger.release({ id: row.id, now, block, paymaster, included })
        : ledger.settle({
            id: row.id,
            actualWei: undefined,
            actualUsdMicros: undefined,
            now,
            block,
            paymaster,
            included,
          });
    }
    const paid =
      row.kind !== 'sponsored' &&
      row.status === 'reserved' &&
      args.paidByUser !== undefined &&
      (await args.paidByUser());
    return paid
      ? // The user repaid the dApp, not the deposit's ether: the op's gas is still spend of the deposit.
        ledger.release({ id: row.id, now, block, paymaster, included, depositWei: actualWei })
      : ledger.settle({ id: row.id, actualWei, actualUsdMicros, now, block, paymaster, included });
  };

  /** Closed as superseded (nothing added to `used`; what it still holds is released), with its expiry event. */
  const supersede = (
    row: { readonly id: string; readonly status: string },
    args: { now: number; block: ClosingBlock | undefined; included: IncludedIn | undefined },
  ) =>
    close(db, kind, {
      id: row.id,
      now: args.now,
      from: row.status === 'released' ? 'released' : 'reserved',
      status: 'superseded',
      usedOf: () => 0n,
      block: args.block,
      included: args.included,
      onClosed: (trx) => writeExpiredEvents(trx, { reservationId: row.id, now: args.now, reason: 'nonceUsed' }),
    });

  const rowsOfOpKey = (opKey: string) =>
    db
      .selectFrom('spend_reservations')
      .select(['id', 'dapp_id', 'kind', 'status', 'signatures', 'settled_block', 'tx_hash', 'paymaster'])
      .where('op_key', '=', opKey.toLowerCase())
      .orderBy('created_at')
      .orderBy('id')
      .execute();

  /** Rows made before migration 0022 (no op key): by the userOpHash, else the op key they were reserved under. */
  const settleLegacy = async (args: SettleUserOpArgs): Promise<SettledOp> => {
    for (const hash of [args.userOpHash, args.opKey]) {
      const first = await legacyRowQuery(db, { chainId: args.chainId, hash }).executeTakeFirst();
      if (first !== undefined) return { settled: await closeChosen(first, args), dappIds: [first.dapp_id] };
    }
    return { settled: false, dappIds: [] };
  };

  return {
    ...ledger,
    async settleUserOp(args) {
      const all = await rowsOfOpKey(args.opKey);
      const tank = args.fixedPayment === true ? args.paymaster?.toLowerCase() : undefined;
      const rows = tank === undefined ? all : all.filter((r) => r.paymaster === tank);
      // A tank's payments were never reserved before migration 0022: no row of its is a legacy one.
      if (rows.length === 0) return tank === undefined ? settleLegacy(args) : { settled: false, dappIds: [] };
      const txHash = args.included?.txHash.toLowerCase();
      // Read before: the rows this very event closed (a restart, a re-read) answer the same dApps.
      const earlier = rows.filter((r) => r.tx_hash !== null && r.tx_hash === txHash && r.status !== 'superseded');
      const open = openRows(rows);
      if (open.length === 0) return { settled: false, dappIds: distinctDapps(earlier) };
      const fingerprint = distinctDapps(open).length > 1 ? await args.includedSignature?.() : undefined;
      const { chosen, superseded } = attribute({ open, fingerprint });
      let settled = false;
      for (const row of chosen) settled = (await closeChosen(row, args)) || settled;
      const closing = { now: args.now, block: args.block, included: args.included };
      for (const row of superseded) await supersede(row, closing);
      return { settled, dappIds: distinctDapps([...earlier, ...chosen]) };
    },

    async openSenders({ chainId, paymaster, limit }) {
      const rows = await db
        .selectFrom('spend_reservations')
        .select('sender')
        .distinct()
        .where('chain_id', '=', chainId)
        // A literal, not a parameter: the partial index over open rows (migration 0021).
        .where('status', '=', sql.lit('reserved'))
        .where((eb) => eb.or([eb('paymaster', '=', paymaster.toLowerCase()), eb('paymaster', 'is', null)]))
        .where('sender', 'is not', null)
        .limit(limit)
        .execute();
      return rows.flatMap((r) => (r.sender === null ? [] : [r.sender]));
    },

    async hasOpenReservations({ chainId, paymaster }) {
      const row = await db
        .selectFrom('spend_reservations')
        .select('id')
        .where('chain_id', '=', chainId)
        // A literal, not a parameter: the partial index over open rows (migration 0021).
        .where('status', '=', sql.lit('reserved'))
        .where('paymaster', '=', paymaster.toLowerCase())
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    async supersedeOpKey({ opKey, paidBy, sender, now, block, included }) {
      let closed = 0;
      const rows = await rowsOfOpKey(opKey);
      // A row of the paymaster that paid (another deployment of Patron's on the same EntryPoint) is settled by that
      // deployment's follower, which reads the same event; a row of the sender (an MEE tank's payment, whoever paid
      // its gas) by the tank's follower.
      const ownFollower = new Set([paidBy.toLowerCase(), sender.toLowerCase()]);
      for (const row of openRows(rows).filter((r) => r.paymaster === null || !ownFollower.has(r.paymaster))) {
        if (await supersede(row, { now, block, included })) closed++;
      }
      return closed;
    },

    rewindSettlement({ from, to, now, ...key }) {
      return db.transaction().execute(async (trx) => {
        // Write first, and the cursor row first: a second rewinder waits here, then finds it moved.
        if (!(await rewindCursor(trx, { ...key, from, to, now }))) return { rewound: false, reopened: 0 };
        const query = trx
          .selectFrom('spend_reservations')
          .select(['id', 'dapp_id', 'charges', 'used_charges'])
          .where('chain_id', '=', key.chainId)
          .where('paymaster', '=', key.paymaster.toLowerCase())
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
            deposit_wei: null,
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
