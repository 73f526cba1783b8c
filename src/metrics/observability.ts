import cluster from 'node:cluster';
import type { ChainRegistry } from '../chain/chainRegistry.js';
import type { UserOperationEventLog } from '../chain/userOperationEvents.js';
import type { Config } from '../config/config.js';
import type { KeeperObserver } from '../keeper/keeperRound.js';
import type { TankWatch } from '../mee/tankWatch.js';
import type { RateLimiter } from '../rateLimit/rateLimiter.js';
import type { RequestLogRecorder } from '../requestLog/requestLogRecorder.js';
import type { OnCall } from '../rpc/callReport.js';
import type { SigningGate } from '../solvency/signingGate.js';
import type { StorageHealth } from '../store/db/storageHealth.js';
import type { TokenCatalog } from '../tokens/tokenCatalog.js';
import { clusterWorkerMetrics } from './clusterMetrics.js';
import { metricsOnCall } from './metricsOnCall.js';
import { createPatronMetrics, type PatronMetrics, type SettlementLag } from './patronMetrics.js';

/**
 * The metrics as deps.ts builds them: they observe finished paymaster calls, included ops and settlement's rounds,
 * and read the state of what was built before them (the signing gate's deposits and signer watch, the request log's
 * losses, the rate limiter's refusals, the prices' age) rather than reading the chain again. They only observe: the
 * gate is built before the services that ask it (solvency/signingGate.ts), settlement after the metrics, which it
 * tells of what it sees.
 */
export interface Observability {
  /** Undefined unless PATRON_METRICS=on. */
  readonly metrics: PatronMetrics | undefined;
  /** `others` (the request log, the signing gate's) and then the metrics, each told of every finished call. */
  onCall(...others: readonly OnCall[]): OnCall;
  /** Settlement's `onIncluded`: an op of the paymaster was included (idempotent, as settlement requires). */
  onIncluded(args: { readonly chainId: number; readonly event: UserOperationEventLog }): void;
  /** Settlement's `onStatus`, after each round: every follower's lag, which the lag gauge shows until the next. */
  onSettlementStatus(followers: readonly SettlementLag[]): void;
  /** The deposit keeper's outcomes and funder balances (built after the metrics, it tells them). */
  readonly keeper: KeeperObserver;
}

export interface ObservabilityDeps {
  readonly config: Pick<Config, 'metrics' | 'workers'>;
  readonly chains: Pick<ChainRegistry, 'list'>;
  /** What the metrics read of the signing gate at scrape time. */
  readonly gate: Pick<SigningGate, 'solvency' | 'signerWatch' | 'alerts'>;
  readonly logger: { error(obj: object, msg: string): void };
  /** The request log's entries dropped (buffer full) and lost to failed writes since start (read at scrape time). */
  readonly requestLog: Pick<RequestLogRecorder, 'stats'>;
  /** Rate-limited spends per limit since start (read at scrape time). */
  readonly rateLimiter: Pick<RateLimiter, 'refusals'>;
  /** When each chain's native coin's USD price was last read (its age, read at scrape time). */
  readonly tokenCatalog: Pick<TokenCatalog, 'nativePriceUpdatedAtMs'>;
  /** The storage's fault and fault counts (read at scrape time). */
  readonly storageHealth: Pick<StorageHealth, 'current' | 'began'>;
  /** The MEE gas tanks' last read figures (read at scrape time). */
  readonly meeTanks?: Pick<TankWatch, 'state'> | undefined;
  readonly now: () => number;
}

export function createObservability(deps: ObservabilityDeps): Observability {
  const { config, gate, now } = deps;
  const processMetrics = config.metrics.enabled
    ? createPatronMetrics({
        chainIds: deps.chains.list().map((c) => c.chainId),
        solvency: () => gate.solvency.state(),
        priceAgeSeconds: (chainId) => {
          const at = deps.tokenCatalog.nativePriceUpdatedAtMs(chainId);
          return at === undefined ? undefined : Math.max(0, (now() - at) / 1000);
        },
        requestLogLosses: () => deps.requestLog.stats(),
        signerAccepted: () => gate.signerWatch.state(),
        rateLimitRefusals: () => deps.rateLimiter.refusals(),
        storage: () => ({ faultKind: deps.storageHealth.current()?.kind, began: deps.storageHealth.began() }),
        alertDeliveries: () => gate.alerts?.deliveries() ?? [],
        meeTanks: () => deps.meeTanks?.state() ?? [],
      })
    : undefined;
  // A cluster worker's scrape reports every worker's metrics, aggregated by the primary (clusterMetrics.ts).
  const metrics =
    processMetrics !== undefined && config.workers > 1 && cluster.isWorker
      ? clusterWorkerMetrics(processMetrics)
      : processMetrics;
  // The solvency guard counts signatures as they are issued (admitSignature), not when the call is reported.
  const own: OnCall[] = metrics === undefined ? [] : [metricsOnCall(metrics)];
  return {
    metrics,
    onCall(...others) {
      const all = [...others, ...own];
      return (report) => {
        // One observer's fault must not keep the others from hearing of the call, nor reach the caller.
        for (const observe of all) {
          try {
            observe(report);
          } catch (err) {
            deps.logger.error({ err }, 'a call observer failed');
          }
        }
      };
    },
    onIncluded({ chainId, event }) {
      metrics?.observeIncluded({ chainId, userOpHash: event.userOpHash, actualGasCost: event.actualGasCost });
    },
    onSettlementStatus(followers) {
      metrics?.observeSettlementLag(followers);
    },
    keeper: {
      onOutcome: (o) => metrics?.observeKeeperOutcome(o),
      onFunderBalance: (f) => metrics?.observeKeeperFunder(f),
    },
  };
}
