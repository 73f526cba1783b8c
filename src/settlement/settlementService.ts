import type { ChainCursorRepository } from '../store/chainCursorRepository.js';
import type { SpendLedgerRepository, UserOpSettlement } from '../store/spendLedgerRepository.js';
import { createExpirySweeper } from './expirySweeper.js';
import { type PollLoop, startPollLoop } from './pollLoop.js';
import {
  createSettlementFollower,
  type FollowedChain,
  type FollowerStatus,
  type RoundReport,
  type SettlementFollowerDeps,
  type SettlementLogger,
} from './settlementFollower.js';

/**
 * Settlement as the service runs it: one follower per served chain, each on its own poll loop (an RPC that is
 * down slows only its chain, with backoff), and the expiry sweeper on another. Built by deps.ts after everything
 * else and stopped first on close.
 */
export interface Settlement {
  /** One round on every chain (after any running one); rejects with the first chain's failure. Tests use it. */
  runOnce(): Promise<readonly RoundReport[]>;
  /** One sweep of expired reservations now; returns how many were released. */
  sweepOnce(): Promise<number>;
  /** Per chain: cursor, head, lag, last error (for /metrics and the dashboard). */
  status(): readonly FollowerStatus[];
  /** Settles when every chain's first round has, whether it succeeded or not. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface SettlementDeps {
  readonly chains: readonly { readonly chain: FollowedChain; readonly confirmations: number }[];
  readonly cursors: ChainCursorRepository;
  readonly ledger: UserOpSettlement & Pick<SpendLedgerRepository, 'releaseExpired'>;
  readonly nativeUsdMicros: (chainId: number) => bigint | undefined;
  readonly pollMs: number;
  readonly maxBlockRange: bigint;
  readonly expiryGraceMs: number;
  readonly logger: SettlementLogger;
  readonly now: () => number;
  readonly onIncluded?: SettlementFollowerDeps['onIncluded'];
}

/** Failing RPCs are retried at most this far apart. */
const MAX_BACKOFF_MS = 60_000;
/** Reservations expire by the minute at most (signatures last minutes); sweeping more often buys nothing. */
const SWEEP_INTERVAL_MS = 60_000;

export function startSettlement(deps: SettlementDeps): Settlement {
  let stopped = false;
  const followers = deps.chains.map(({ chain, confirmations }) =>
    createSettlementFollower({
      chain,
      confirmations,
      cursors: deps.cursors,
      ledger: deps.ledger,
      nativeUsdMicros: deps.nativeUsdMicros,
      maxBlockRange: deps.maxBlockRange,
      logger: deps.logger,
      now: deps.now,
      ...(deps.onIncluded === undefined ? {} : { onIncluded: deps.onIncluded }),
      stopped: () => stopped,
    }),
  );
  const loops: PollLoop<RoundReport>[] = followers.map((follower, i) =>
    startPollLoop({
      intervalMs: deps.pollMs,
      maxBackoffMs: Math.max(MAX_BACKOFF_MS, deps.pollMs),
      // The first round is started below, right away (on a first start the cursor is set before ops are signed).
      firstDelayMs: deps.pollMs,
      tick: () => follower.runOnce(),
      onError: (err, retryInMs) =>
        deps.logger.warn({ err, chainId: deps.chains[i]?.chain.chainId, retryInMs }, 'settlement round failed'),
    }),
  );
  const firstRounds = Promise.all(loops.map((l) => l.runNow().catch(() => undefined))).then(() => undefined);
  const sweeper = createExpirySweeper({ ledger: deps.ledger, graceMs: deps.expiryGraceMs, now: deps.now });
  const sweepLoop = startPollLoop({
    intervalMs: SWEEP_INTERVAL_MS,
    maxBackoffMs: 10 * SWEEP_INTERVAL_MS,
    // Not at start: a restart storm should not add a sweep per process; the first one runs a minute in.
    firstDelayMs: SWEEP_INTERVAL_MS,
    tick: async () => {
      const released = await sweeper.sweep();
      if (released > 0) deps.logger.info({ released }, 'settlement: expired reservations released');
      return released;
    },
    onError: (err, retryInMs) => deps.logger.warn({ err, retryInMs }, 'settlement: expiry sweep failed'),
  });

  return {
    async runOnce() {
      const results = await Promise.allSettled(loops.map((l) => l.runNow()));
      const failed = results.find((r) => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      return results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    },
    sweepOnce: () => sweepLoop.runNow(),
    status: () => followers.map((f) => f.status()),
    ready: () => firstRounds,
    async close() {
      stopped = true;
      await Promise.all([...loops.map((l) => l.stop()), sweepLoop.stop()]);
    },
  };
}

/**
 * PATRON_SETTLEMENT=false: this process neither follows nor releases (so one process of several can be the one
 * that does). If none does, reservations are never released: caps then count every signature at its worst case.
 */
export const settlementOff: Settlement = {
  runOnce: async () => [],
  sweepOnce: async () => 0,
  status: () => [],
  ready: async () => {},
  close: async () => {},
};
