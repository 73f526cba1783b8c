import type { Address, Hex, PublicClient } from 'viem';
import {
  blockHashAt,
  headBlockNumber,
  readUserOperationEvents,
  type UserOperationEventLog,
} from '../chain/userOperationEvents.js';
import { usdMicrosOfWei } from '../pricing/usdMicrosOfWei.js';
import type { ChainCursor, ChainCursorRepository } from '../store/chainCursorRepository.js';
import type { UserOpSettlement } from '../store/spendLedgerRepository.js';

/**
 * Follows one chain's EntryPoint for Patron's paymaster: each round settles, in the spend ledger, the ops
 * included from the block after the stored cursor up to `head − confirmations`, then moves the cursor there.
 * Settle first, cursor second: a crash in between re-reads those blocks, and settling is idempotent. README.md
 * beside this file explains depth, restarts, reorgs, several processes and the first start.
 */
export interface SettlementLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface FollowedChain {
  readonly chainId: number;
  readonly client: PublicClient;
  readonly entryPoint: Address;
  readonly paymaster: Address;
}

export interface SettlementFollowerDeps {
  readonly chain: FollowedChain;
  readonly cursors: ChainCursorRepository;
  readonly ledger: UserOpSettlement;
  /** The native coin's price in micro-USD per whole coin, fresh, or undefined (the ledger keeps the reservation). */
  readonly nativeUsdMicros: (chainId: number) => bigint | undefined;
  /** Blocks an event must be under the head before it is settled; a reorg shallower than this is never seen. */
  readonly confirmations: number;
  /** Blocks per eth_getLogs, and per cursor step. */
  readonly maxBlockRange: bigint;
  readonly logger: SettlementLogger;
  readonly now: () => number;
  /**
   * Told of every event after its settlement and before the cursor moves (metrics, the request log's cost); it
   * may see an event again after a restart or a reorg, so it must be idempotent. Its failure is logged and does
   * not hold the round: the ledger must not wait on a secondary record.
   */
  readonly onIncluded?: (args: { readonly chainId: number; readonly event: UserOperationEventLog }) => Promise<void>;
  /** Checked between slices, so stopping does not wait for a long catch-up. */
  readonly stopped?: () => boolean;
}

export interface FollowerStatus {
  readonly chainId: number;
  readonly confirmations: number;
  /** The last settled block (undefined before the first round succeeded). */
  readonly cursorBlock: bigint | undefined;
  /** The chain's head at the last successful round. */
  readonly head: bigint | undefined;
  /** head − cursorBlock: confirmations when caught up, more when behind. */
  readonly lag: bigint | undefined;
  /** Unix ms of the last round that completed. */
  readonly lastRoundAt: number | undefined;
  /** The last round's failure, cleared by the next success. */
  readonly lastError: string | undefined;
  /** Reservations settled by this process since it started. */
  readonly settled: number;
  /** Events of Patron's paymaster with no reservation left to settle (already settled, or none was made). */
  readonly unmatched: number;
  /** Cursors found replaced by a reorg deeper than the confirmations (or a restarted dev chain). */
  readonly reorgs: number;
}

export interface RoundReport {
  /** The blocks read this round; undefined when there was nothing new to read. */
  readonly fromBlock: bigint | undefined;
  readonly toBlock: bigint | undefined;
  readonly settled: number;
  readonly unmatched: number;
  readonly reorg: boolean;
}

export interface SettlementFollower {
  /** One round; rejects on an RPC or database failure (nothing half-done survives it: see above). */
  runOnce(): Promise<RoundReport>;
  status(): FollowerStatus;
}

/** Below this a rewind would not reach before blocks a dev chain (0 confirmations) just replaced. */
const MIN_REWIND_BLOCKS = 16n;
/** A reorg deeper than this is an incident for an operator; re-reading more would not make it right. */
const MAX_REWIND_BLOCKS = 10_000n;

export class ChainMovedError extends Error {
  override readonly name = 'ChainMovedError';
}

export function createSettlementFollower(deps: SettlementFollowerDeps): SettlementFollower {
  const { chain, cursors, logger } = deps;
  const key = { chainId: chain.chainId, entryPoint: chain.entryPoint, paymaster: chain.paymaster };
  const depth = BigInt(deps.confirmations);
  let state: Omit<FollowerStatus, 'chainId' | 'confirmations' | 'lag'> = {
    cursorBlock: undefined,
    head: undefined,
    lastRoundAt: undefined,
    lastError: undefined,
    settled: 0,
    unmatched: 0,
    reorgs: 0,
  };

  async function hashOf(blockNumber: bigint): Promise<Hex> {
    const hash = await blockHashAt(chain.client, blockNumber);
    if (hash === undefined) throw new ChainMovedError(`block ${blockNumber} of chain ${chain.chainId} is gone`);
    return hash;
  }

  /** The stored cursor, stepped back first when the chain no longer has its block. */
  async function checkedCursor(safe: bigint): Promise<{ cursor: ChainCursor | undefined; reorg: boolean }> {
    const cursor = await cursors.get(key);
    if (cursor === undefined) return { cursor, reorg: false };
    const onChain = await blockHashAt(chain.client, cursor.blockNumber);
    if (onChain !== undefined && onChain.toLowerCase() === cursor.blockHash.toLowerCase()) {
      return { cursor, reorg: false };
    }
    const twice = 2n * depth;
    const step = twice < MIN_REWIND_BLOCKS ? MIN_REWIND_BLOCKS : twice > MAX_REWIND_BLOCKS ? MAX_REWIND_BLOCKS : twice;
    // A cursor past the safe head (a restarted dev chain, a node resynced from scratch) steps back from there.
    const top = cursor.blockNumber < safe ? cursor.blockNumber : safe;
    const back = top - step < 0n ? 0n : top - step;
    const to = { blockNumber: back, blockHash: await hashOf(back) };
    logger.error(
      { chainId: chain.chainId, cursor: cursor.blockNumber.toString(), rewoundTo: back.toString(), found: onChain },
      'settlement: the cursor block was replaced (a reorg deeper than the confirmations, or a new chain); re-reading',
    );
    // Only if no other process moved it meanwhile; if one did, its cursor is read again next round.
    const rewound = await cursors.rewind({ ...key, from: cursor, to, now: deps.now() });
    return { cursor: rewound ? to : await cursors.get(key), reorg: true };
  }

  async function settleSlice(from: bigint, to: bigint): Promise<{ settled: number; unmatched: number }> {
    const hashBefore = await hashOf(to);
    const events = await readUserOperationEvents({ ...chain, fromBlock: from, toBlock: to });
    // The logs and the hash the cursor will carry must come from one chain: re-read it after the logs.
    const hashAfter = await hashOf(to);
    const mixed = events.some((e) => e.blockNumber === to && e.blockHash.toLowerCase() !== hashAfter.toLowerCase());
    if (hashBefore !== hashAfter || mixed) throw new ChainMovedError(`block ${to} changed while it was read`);
    const price = deps.nativeUsdMicros(chain.chainId);
    let settled = 0;
    for (const e of events) {
      const settle = (userOpHash: string) =>
        deps.ledger.settleUserOp({
          chainId: chain.chainId,
          userOpHash,
          actualWei: e.actualGasCost,
          actualUsdMicros: price === undefined ? undefined : usdMicrosOfWei(e.actualGasCost, price),
          now: deps.now(),
        });
      // A signature made before the op's gas was final is reserved under its op key (chain/opKey.ts).
      const ok = (await settle(e.userOpHash)) || (await settle(e.opKey));
      if (ok) settled++;
      await deps.onIncluded?.({ chainId: chain.chainId, event: e }).catch((err: unknown) => {
        logger.warn({ err, chainId: chain.chainId, userOpHash: e.userOpHash }, 'settlement: onIncluded failed');
      });
      logger.debug(
        { chainId: chain.chainId, userOpHash: e.userOpHash, actualGasCost: e.actualGasCost.toString(), settled: ok },
        'settlement: UserOperationEvent',
      );
    }
    await cursors.advance({ ...key, to: { blockNumber: to, blockHash: hashAfter }, now: deps.now() });
    return { settled, unmatched: events.length - settled };
  }

  async function round(): Promise<RoundReport> {
    const head = await headBlockNumber(chain.client);
    const safe = head - depth;
    const report = { fromBlock: undefined, toBlock: undefined, settled: 0, unmatched: 0, reorg: false };
    if (safe < 0n) return report;
    const { cursor, reorg } = await checkedCursor(safe);
    if (reorg) state = { ...state, reorgs: state.reorgs + 1 };
    if (cursor === undefined) {
      // First start on this chain: from the safe head on (see README.md, "First start"). Never over a cursor
      // another process set meanwhile.
      const first = { blockNumber: safe, blockHash: await hashOf(safe) };
      if (await cursors.initialize({ ...key, to: first, now: deps.now() })) {
        logger.info({ chainId: chain.chainId, block: safe.toString() }, 'settlement: following from this block');
      }
      state = { ...state, cursorBlock: (await cursors.get(key))?.blockNumber, head };
      return { ...report, reorg };
    }
    let from = cursor.blockNumber + 1n;
    while (from <= safe && deps.stopped?.() !== true) {
      const to = from + deps.maxBlockRange - 1n < safe ? from + deps.maxBlockRange - 1n : safe;
      const slice = await settleSlice(from, to);
      report.settled += slice.settled;
      report.unmatched += slice.unmatched;
      state = {
        ...state,
        cursorBlock: to,
        head,
        settled: state.settled + slice.settled,
        unmatched: state.unmatched + slice.unmatched,
      };
      from = to + 1n;
    }
    state = { ...state, cursorBlock: from - 1n, head };
    if (from - 1n === cursor.blockNumber) return { ...report, reorg };
    return { ...report, fromBlock: cursor.blockNumber + 1n, toBlock: from - 1n, reorg };
  }

  return {
    async runOnce() {
      try {
        const report = await round();
        state = { ...state, lastRoundAt: deps.now(), lastError: undefined };
        return report;
      } catch (err) {
        state = { ...state, lastError: err instanceof Error ? err.message : String(err) };
        throw err;
      }
    },
    status() {
      const { cursorBlock, head } = state;
      const lag = cursorBlock === undefined || head === undefined ? undefined : head - cursorBlock;
      return { chainId: chain.chainId, confirmations: deps.confirmations, ...state, lag };
    },
  };
}
