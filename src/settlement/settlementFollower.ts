import type { Address, Hex, PublicClient } from 'viem';
import { tokenTransfersOfOp } from '../chain/tokenTransfersOfOp.js';
import {
  blockAt,
  blockHashAt,
  headBlockNumber,
  readTokenCharged,
  readUserOperationEvents,
  type TokenChargedLog,
  type UserOperationEventLog,
} from '../chain/userOperationEvents.js';
import { errorSummary } from '../errors/errorSummary.js';
import { usdMicrosOfWei } from '../pricing/usdMicrosOfWei.js';
import type { ChainCursor, ChainCursorRepository } from '../store/chainCursorRepository.js';
import type { SpendLedgerRepository } from '../store/spendLedgerRepository.js';
import type { UserOpSettlement } from '../store/userOpSettlement.js';

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
  readonly ledger: UserOpSettlement & Pick<SpendLedgerRepository, 'releaseClosed'>;
  /**
   * The chain starts from genesis with this process (the embedded dev chain): a stored cursor that its blocks do
   * not match is a previous run's chain, not a reorg, and is replaced by the head quietly on the first round.
   */
  readonly freshChain?: boolean;
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
  /**
   * Told of a reorg before the cursor and the reservations are rewound below `aboveBlock` (so a crash in between
   * tells it again next round): `hashAt` gives the canonical hash at a height, to tell which earlier inclusions the
   * new branch removed. Idempotent; its failure fails the round (retried), as the rewind's would.
   */
  readonly onReorg?: (args: {
    readonly chainId: number;
    readonly aboveBlock: bigint;
    readonly hashAt: (blockNumber: bigint) => Promise<Hex | undefined>;
  }) => Promise<void>;
  /**
   * Told of a token-mode op's charge (its TokenCharged, and the prefund and refund its receipt shows) after its
   * onIncluded; the slice's TokenCharged logs are then read (one eth_getLogs per slice holding ops). Idempotent,
   * and its failure is logged without holding the round, as onIncluded's.
   */
  readonly onTokenCharged?: (args: {
    readonly chainId: number;
    readonly event: UserOperationEventLog;
    readonly charge: {
      readonly token: string;
      readonly charged: bigint;
      readonly prefunded: bigint;
      readonly refunded: bigint;
    };
  }) => Promise<void>;
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

export interface SettlementFollower {
  /** One round; rejects on an RPC or database failure (nothing half-done survives it: see above). */
  runOnce(): Promise<RoundReport>;
  /** Another process follows the chain: no round, nothing read or written; the status says so. */
  standBy(): RoundReport;
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
    released: 0,
    following: false,
  };
  /** The cursor block the last release ran at (releaseClosed runs again only once the cursor moved). */
  let releasedAt: bigint | undefined;
  let firstRound = true;

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
    if (deps.freshChain === true && firstRound) {
      // A new dev chain on a kept database: its history starts here, nothing of the old one is re-read.
      const to = { blockNumber: safe, blockHash: await hashOf(safe) };
      logger.info(
        { chainId: chain.chainId, previous: cursor.blockNumber.toString(), block: safe.toString() },
        'settlement: a new dev chain; following it from its head',
      );
      const reset = await cursors.rewind({ ...key, from: cursor, to, now: deps.now() });
      return { cursor: reset ? to : await cursors.get(key), reorg: false };
    }
    const twice = 2n * depth;
    const step = twice < MIN_REWIND_BLOCKS ? MIN_REWIND_BLOCKS : twice > MAX_REWIND_BLOCKS ? MAX_REWIND_BLOCKS : twice;
    // A cursor past the safe head (a node resynced from scratch) steps back from there.
    const top = cursor.blockNumber < safe ? cursor.blockNumber : safe;
    const back = top - step < 0n ? 0n : top - step;
    const to = { blockNumber: back, blockHash: await hashOf(back) };
    await deps.onReorg?.({
      chainId: chain.chainId,
      aboveBlock: back,
      hashAt: (n) => blockHashAt(chain.client, n),
    });
    // Only if no other process moved it meanwhile; with the cursor, every reservation closed by an event above
    // `back` is reopened, so the blocks read again settle it at the canonical branch's cost.
    const { rewound, reopened } = await deps.ledger.rewindSettlement({ ...key, from: cursor, to, now: deps.now() });
    logger.error(
      {
        chainId: chain.chainId,
        cursor: cursor.blockNumber.toString(),
        rewoundTo: back.toString(),
        found: onChain,
        reopened,
      },
      'settlement: the cursor block was replaced (a reorg deeper than the confirmations); re-reading',
    );
    return { cursor: rewound ? to : await cursors.get(key), reorg: true };
  }

  /** Releases what the chain can no longer include, once per cursor block (README.md, "Releases"). */
  async function releaseClosed(cursor: bigint, known?: { readonly timestamp: bigint }): Promise<void> {
    if (releasedAt === cursor) return;
    const timestamp = known?.timestamp ?? (await blockAt(chain.client, cursor))?.timestamp;
    if (timestamp === undefined) return;
    const released = await deps.ledger.releaseClosed({
      chainId: chain.chainId,
      paymaster: chain.paymaster,
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

  async function settleSlice(
    from: bigint,
    to: bigint,
  ): Promise<{ settled: number; unmatched: number; timestamp: bigint }> {
    const before = await blockAt(chain.client, to);
    if (before === undefined) throw new ChainMovedError(`block ${to} of chain ${chain.chainId} is gone`);
    const events = await readUserOperationEvents({ ...chain, fromBlock: from, toBlock: to });
    // The logs and the hash the cursor will carry must come from one chain: re-read it after the logs.
    const hashAfter = await hashOf(to);
    const mixed = events.some((e) => e.blockNumber === to && e.blockHash.toLowerCase() !== hashAfter.toLowerCase());
    if (before.hash !== hashAfter || mixed) throw new ChainMovedError(`block ${to} changed while it was read`);
    const price = deps.nativeUsdMicros(chain.chainId);
    // The paymaster's TokenCharged logs of the slice, read once and only if a guarantee asks (README.md).
    let charged: Promise<TokenChargedLog[]> | undefined;
    // The op's postOp runs between the previous op's UserOperationEvent in the transaction and its own.
    const previousOf = (e: UserOperationEventLog, i: number) =>
      events
        .slice(0, i)
        .reverse()
        .find((p) => p.transactionHash === e.transactionHash);
    const chargeOf = async (e: UserOperationEventLog, i: number) => {
      charged ??= readTokenCharged({ client: chain.client, paymaster: chain.paymaster, fromBlock: from, toBlock: to });
      const previous = previousOf(e, i);
      return (await charged).find(
        (l) =>
          l.transactionHash === e.transactionHash &&
          l.account.toLowerCase() === e.sender.toLowerCase() &&
          l.logIndex < e.logIndex &&
          (previous === undefined || l.logIndex > previous.logIndex),
      );
    };
    const paidByUser = (e: UserOperationEventLog, i: number) => async () => (await chargeOf(e, i)) !== undefined;
    /** token.charged's source (onTokenCharged): the op's TokenCharged, and its transfers from the receipt. */
    const tellTokenCharge = async (e: UserOperationEventLog, i: number) => {
      if (deps.onTokenCharged === undefined) return;
      const log = await chargeOf(e, i);
      if (log === undefined) return;
      const moved = await tokenTransfersOfOp({
        client: chain.client,
        entryPoint: chain.entryPoint,
        paymaster: chain.paymaster,
        token: log.token,
        account: e.sender,
        transactionHash: e.transactionHash,
        opLogIndex: e.logIndex,
        previousOpLogIndex: previousOf(e, i)?.logIndex,
      });
      await deps.onTokenCharged({
        chainId: chain.chainId,
        event: e,
        charge: { token: log.token, charged: log.charge, ...moved },
      });
    };
    let settled = 0;
    for (const [i, e] of events.entries()) {
      const settle = (userOpHash: string) =>
        deps.ledger.settleUserOp({
          chainId: chain.chainId,
          userOpHash,
          actualWei: e.actualGasCost,
          actualUsdMicros: price === undefined ? undefined : usdMicrosOfWei(e.actualGasCost, price),
          now: deps.now(),
          block: { number: e.blockNumber, hash: e.blockHash },
          paymaster: chain.paymaster,
          paidByUser: paidByUser(e, i),
          included: { txHash: e.transactionHash, success: e.success },
        });
      // A signature made before the op's gas was final is reserved under its op key (chain/opKey.ts).
      const ok = (await settle(e.userOpHash)) || (await settle(e.opKey));
      if (ok) settled++;
      await deps.onIncluded?.({ chainId: chain.chainId, event: e }).catch((err: unknown) => {
        logger.warn({ err, chainId: chain.chainId, userOpHash: e.userOpHash }, 'settlement: onIncluded failed');
      });
      await tellTokenCharge(e, i).catch((err: unknown) => {
        logger.warn({ err, chainId: chain.chainId, userOpHash: e.userOpHash }, 'settlement: onTokenCharged failed');
      });
      logger.debug(
        { chainId: chain.chainId, userOpHash: e.userOpHash, actualGasCost: e.actualGasCost.toString(), settled: ok },
        'settlement: UserOperationEvent',
      );
    }
    await cursors.advance({ ...key, to: { blockNumber: to, blockHash: hashAfter }, now: deps.now() });
    return { settled, unmatched: events.length - settled, timestamp: before.timestamp };
  }

  async function round(): Promise<RoundReport> {
    const head = await headBlockNumber(chain.client);
    const safe = head - depth;
    const report = { fromBlock: undefined, toBlock: undefined, settled: 0, unmatched: 0, reorg: false };
    if (safe < 0n) return report;
    const { cursor, reorg } = await checkedCursor(safe);
    firstRound = false;
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
    let last: { readonly timestamp: bigint } | undefined;
    while (from <= safe && deps.stopped?.() !== true) {
      const to = from + deps.maxBlockRange - 1n < safe ? from + deps.maxBlockRange - 1n : safe;
      const slice = await settleSlice(from, to);
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
