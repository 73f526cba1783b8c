import { type PollLoop, startPollLoop } from '../async/pollLoop.js';
import { alwaysHeld, type FollowerLease } from '../store/db/followerLease.js';
import type { ChainCursorRepository } from '../store/ledger/chainCursorRepository.js';
import type { SpendLedgerRepository } from '../store/ledger/spendLedgerRepository.js';
import type { UserOpSettlement } from '../store/ledger/userOpSettlement.js';
import {
  createSettlementFollower,
  type FollowerStatus,
  type RoundReport,
  type SettlementFollower,
} from './settlementFollower.js';
import type { FollowedChain, SettlementFollowerDeps, SettlementLogger } from './settlementFollowerDeps.js';
import { createTankFollowers, type ListTanks, type TanksRoundReport } from './tankFollowers.js';

/**
 * Settlement as the service runs it: one follower per served chain, each on its own poll loop (an RPC that is
 * down slows only its chain, with backoff); each round settles the new blocks and releases the reservations its
 * cursor is past. Built by deps.ts after everything else and stopped first on close.
 */
export interface Settlement {
  /**
   * One round on every chain, and over every chain's MEE gas tanks (after any running one); rejects with the first
   * failure. Answers the paymasters' followers' reports (the tanks' rounds are logged). Tests use it.
   */
  runOnce(): Promise<readonly RoundReport[]>;
  /** Per chain: cursor, head, lag, last error (for the dashboard and the tests; the metrics are told by onStatus). */
  status(): readonly FollowerStatus[];
  /** Settles when every chain's first round has, whether it succeeded or not. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface SettlementDeps {
  readonly chains: readonly {
    readonly chain: FollowedChain;
    readonly confirmations: number;
    /** The embedded dev chain, new with this process (settlementFollowerDeps.ts). */
    readonly freshChain?: boolean;
    /** settlementFollowerDeps.ts `includedSignature`, for this chain's deployment. */
    readonly includedSignature?: SettlementFollowerDeps['includedSignature'];
  }[];
  readonly cursors: ChainCursorRepository;
  readonly ledger: UserOpSettlement & Pick<SpendLedgerRepository, 'releaseClosed'>;
  readonly nativeUsdMicros: (chainId: number) => bigint | undefined;
  readonly pollMs: number;
  readonly maxBlockRange: bigint;
  readonly logger: SettlementLogger;
  readonly now: () => number;
  readonly onIncluded?: SettlementFollowerDeps['onIncluded'];
  readonly onReorg?: SettlementFollowerDeps['onReorg'];
  readonly onTokenCharged?: SettlementFollowerDeps['onTokenCharged'];
  readonly beforeClose?: SettlementFollowerDeps['beforeClose'];
  /**
   * Told every follower's status after each round of any of them, failed or not (the metrics' lag gauge): pushed,
   * since what reads it is built before settlement. Must not throw.
   */
  readonly onStatus?: (status: readonly FollowerStatus[]) => void;
  /**
   * Which process follows each chain when several serve one database (store/db/followerLease.ts, owned and closed by
   * the store); a fresh chain (the embedded one, this process's own) is never leased. Default: this process follows
   * every chain.
   */
  readonly lease?: FollowerLease;
  /**
   * MEE gas tanks (tankFollowers.ts): a poll loop per chain for its tanks, told of each included op by their own
   * `onIncluded` (the lifecycle events: the metrics, the solvency guard and the request log count the ops of
   * Patron's paymaster, which a tank's payment is not).
   */
  readonly tanks?: {
    readonly listTanks: ListTanks;
    readonly chains: readonly {
      readonly chain: Omit<FollowedChain, 'paymaster' | 'follows'>;
      readonly confirmations: number;
      readonly freshChain?: boolean;
    }[];
    readonly onIncluded?: SettlementFollowerDeps['onIncluded'];
  };
}

/** Failing RPCs are retried at most this far apart. */
const MAX_BACKOFF_MS = 60_000;

export function startSettlement(deps: SettlementDeps): Settlement {
  let stopped = false;
  /** What every follower is given, a paymaster's or a tank's. */
  const shared = {
    cursors: deps.cursors,
    ledger: deps.ledger,
    nativeUsdMicros: deps.nativeUsdMicros,
    maxBlockRange: deps.maxBlockRange,
    logger: deps.logger,
    now: deps.now,
    ...(deps.onReorg === undefined ? {} : { onReorg: deps.onReorg }),
    ...(deps.beforeClose === undefined ? {} : { beforeClose: deps.beforeClose }),
    stopped: () => stopped,
  };
  const followers = deps.chains.map((entry) => ({
    entry,
    follower: createSettlementFollower({
      ...shared,
      chain: entry.chain,
      confirmations: entry.confirmations,
      ...(entry.freshChain === true ? { freshChain: true } : {}),
      ...(entry.includedSignature === undefined ? {} : { includedSignature: entry.includedSignature }),
      ...(deps.onIncluded === undefined ? {} : { onIncluded: deps.onIncluded }),
      ...(deps.onTokenCharged === undefined ? {} : { onTokenCharged: deps.onTokenCharged }),
    }),
  }));
  /** A chain's poll loop: its rounds never overlap, and a failing RPC backs off up to a minute. */
  const loopOf = <T>(chainId: number, tick: () => Promise<T>, failed: string): PollLoop<T> =>
    startPollLoop({
      intervalMs: deps.pollMs,
      maxBackoffMs: Math.max(MAX_BACKOFF_MS, deps.pollMs),
      // The first round is started below, right away (on a first start the cursor is set before ops are signed).
      firstDelayMs: deps.pollMs,
      tick,
      onError: (err, retryInMs) => deps.logger.warn({ err, chainId, retryInMs }, failed),
    });
  const lease = deps.lease ?? alwaysHeld;
  const status = () => followers.map(({ follower }) => follower.status());
  /** A round by the lease's holder; the others stand by. Each process logs when its part changes. */
  const tickOf = (follower: SettlementFollower, entry: SettlementDeps['chains'][number]) => {
    const { chain } = entry;
    const key =
      entry.freshChain === true ? undefined : `${chain.chainId}:${chain.entryPoint}:${chain.paymaster}`.toLowerCase();
    let part: 'follows' | 'stands by' | undefined;
    const announce = (now: 'follows' | 'stands by') => {
      if (part === now || key === undefined) return;
      part = now;
      deps.logger.info(
        { chainId: chain.chainId, paymaster: chain.paymaster },
        now === 'follows'
          ? 'settlement: this process follows the chain'
          : 'settlement: another process follows the chain; standing by',
      );
    };
    const round = async (): Promise<RoundReport> => {
      if (key !== undefined && !(await lease.hold(key))) {
        announce('stands by');
        return follower.standBy();
      }
      announce('follows');
      return follower.runOnce();
    };
    return async (): Promise<RoundReport> => {
      try {
        return await round();
      } finally {
        deps.onStatus?.(status());
      }
    };
  };
  const loops: PollLoop<RoundReport>[] = followers.map(({ follower, entry }) =>
    loopOf(entry.chain.chainId, tickOf(follower, entry), 'settlement round failed'),
  );
  const tanks = deps.tanks;
  const tankLoops: PollLoop<TanksRoundReport>[] = (tanks?.chains ?? []).map((entry) => {
    const followed = createTankFollowers({
      ...shared,
      chain: entry.chain,
      confirmations: entry.confirmations,
      ...(entry.freshChain === true ? { freshChain: true } : {}),
      listTanks: tanks?.listTanks ?? (async () => []),
      lease,
      ...(tanks?.onIncluded === undefined ? {} : { onIncluded: tanks.onIncluded }),
    });
    return loopOf(entry.chain.chainId, () => followed.runOnce(), 'settlement round of the MEE tanks failed');
  });
  const every = [...loops, ...tankLoops];
  const firstRounds = Promise.all(every.map((l) => l.runNow().catch(() => undefined))).then(() => undefined);
  return {
    async runOnce() {
      const [results, tankResults] = await Promise.all([
        Promise.allSettled(loops.map((l) => l.runNow())),
        Promise.allSettled(tankLoops.map((l) => l.runNow())),
      ]);
      const failed = [...results, ...tankResults].find((r) => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      return results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    },
    status,
    ready: () => firstRounds,
    async close() {
      stopped = true;
      await Promise.all(every.map((l) => l.stop()));
    },
  };
}

/**
 * PATRON_SETTLEMENT=false: this process neither follows nor releases (so one process of several can be the one
 * that does). If none does, reservations are never released: caps then count every signature at its worst case.
 */
export const settlementOff: Settlement = {
  runOnce: async () => [],
  status: () => [],
  ready: async () => {},
  close: async () => {},
};
