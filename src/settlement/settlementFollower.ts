import { blockAt, headBlockNumber } from '../chain/userOperationEvents.js';
import { errorSummary } from '../errors/errorSummary.js';
import { hashOf } from './ChainMovedError.js';
import { checkedCursor } from './checkedCursor.js';
import type { SettlementFollowerDeps } from './settlementFollowerDeps.js';
import { settleSlice } from './settleSlice.js';

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
  /** Cursors found replaced by a reorg deeper than the confirmations. */
  readonly reorgs: number;
  /** Reservations released by this process since it started: the chain passed their window unincluded. */
  readonly released: number;
  /** Whether this process follows the chain (it holds its lease), or stands by while another does. */
  readonly following: boolean;
}

export interface RoundReport {
  /** The blocks read this round; undefined when there was nothing new to read. */
  readonly fromBlock: bigint | undefined;
  readonly toBlock: bigint | undefined;
  readonly settled: number;
  readonly unmatched: number;
  readonly reorg: boolean;
}

/**
 * Follows one chain's EntryPoint for Patron's paymaster: each round settles, in the spend ledger, the ops
 * included from the block after the stored cursor up to `head − confirmations`, then moves the cursor there.
 * Settle first, cursor second: a crash in between re-reads those blocks, and settling is idempotent. README.md
 * beside this file explains depth, restarts, reorgs, several processes and the first start.
 */
export interface SettlementFollower {
  /** One round; rejects on an RPC or database failure (nothing half-done survives it: see above). */
  runOnce(): Promise<RoundReport>;
  /** Another process follows the chain: no round, nothing read or written; the status says so. */
  standBy(): RoundReport;
  status(): FollowerStatus;
}

export function createSettlementFollower(deps: SettlementFollowerDeps): SettlementFollower {
  const { chain, cursors, logger } = deps;
  // A tank's cursor is its own (chainCursorRepository.ts: stored as `sender:<tank>`, never a paymaster's).
  const key = {
    chainId: chain.chainId,
    entryPoint: chain.entryPoint,
    paymaster: chain.paymaster,
    follows: chain.follows,
  };
  const depth = BigInt(deps.confirmations);
  let state: Omit<FollowerStatus, 'chainId' | 'confirmations' | 'lag'> = {
    cursorBlock: undefined,
    head: undefined,
    lastRoundAt: undefined,
    lastError: undefined,
    settled: 0,
    unmatched: 0,
    reorgs: 0,
    released: 0,
    following: false,
  };
  /** The cursor block the last release ran at (releaseClosed runs again only once the cursor moved). */
  let releasedAt: bigint | undefined;
  let firstRound = true;

  /** Releases what the chain can no longer include, once per cursor block (README.md, "Releases"). */
  async function releaseClosed(cursor: bigint, known?: { readonly timestamp: bigint }): Promise<void> {
    if (releasedAt === cursor) return;
    const timestamp = known?.timestamp ?? (await blockAt(chain.client, cursor))?.timestamp;
    if (timestamp === undefined) return;
    const released = await deps.ledger.releaseClosed({
      chainId: chain.chainId,
      paymaster: chain.paymaster,
      // A tank's follower read no other op: the rows with no paymaster (before migration 0011) are not its.
      exactPaymaster: chain.follows === 'sender',
      cursorBlock: cursor,
      cursorTimestamp: timestamp,
      now: deps.now(),
    });
    releasedAt = cursor;
    state = { ...state, released: state.released + released };
    if (released > 0) {
      logger.info(
        { chainId: chain.chainId, released, cursor: cursor.toString() },
        'settlement: released reservations the chain can no longer include',
      );
    }
  }

  async function round(): Promise<RoundReport> {
    const head = await headBlockNumber(chain.client);
    const safe = head - depth;
    const report = { fromBlock: undefined, toBlock: undefined, settled: 0, unmatched: 0, reorg: false };
    if (safe < 0n) return report;
    const { cursor, reorg } = await checkedCursor({ deps, key, safe, firstRound });
    firstRound = false;
    if (reorg) state = { ...state, reorgs: state.reorgs + 1 };
    if (cursor === undefined) {
      // First start on this chain: from the safe head on (see README.md, "First start"). Never over a cursor
      // another process set meanwhile.
      const first = { blockNumber: safe, blockHash: await hashOf({ chain, blockNumber: safe }) };
      if (await cursors.initialize({ ...key, to: first, now: deps.now() })) {
        logger.info({ chainId: chain.chainId, block: safe.toString() }, 'settlement: following from this block');
      }
      state = { ...state, cursorBlock: (await cursors.get(key))?.blockNumber, head };
      return { ...report, reorg };
    }
    let from = cursor.blockNumber + 1n;
    let last: { readonly timestamp: bigint } | undefined;
    while (from <= safe && deps.stopped?.() !== true) {
      const to = from + deps.maxBlockRange - 1n < safe ? from + deps.maxBlockRange - 1n : safe;
      const slice = await settleSlice({ deps, key, from, to });
      last = slice;
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
    await releaseClosed(from - 1n, from - 1n === cursor.blockNumber ? undefined : last);
    if (from - 1n === cursor.blockNumber) return { ...report, reorg };
    return { ...report, fromBlock: cursor.blockNumber + 1n, toBlock: from - 1n, reorg };
  }

  return {
    async runOnce() {
      state = { ...state, following: true };
      try {
        const report = await round();
        state = { ...state, lastRoundAt: deps.now(), lastError: undefined };
        return report;
      } catch (err) {
        state = { ...state, lastError: errorSummary(err) };
        throw err;
      }
    },
    standBy() {
      state = { ...state, following: false };
      return { fromBlock: undefined, toBlock: undefined, settled: 0, unmatched: 0, reorg: false };
    },
    status() {
      const { cursorBlock, head } = state;
      const lag = cursorBlock === undefined || head === undefined ? undefined : head - cursorBlock;
      return { chainId: chain.chainId, confirmations: deps.confirmations, ...state, lag };
    },
  };
}
