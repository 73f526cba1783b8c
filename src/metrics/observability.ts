import cluster from 'node:cluster';
import type { ChainRuntime } from '../chain/chainRegistry.js';
import type { UserOperationEventLog } from '../chain/userOperationEvents.js';
import type { Config } from '../config/config.js';
import type { OnCall } from '../rpc/callReport.js';
import type { SigningGate } from '../solvency/signingGate.js';
import { clusterWorkerMetrics } from './clusterMetrics.js';
import { metricsOnCall } from './metricsOnCall.js';
import { createPatronMetrics, type PatronMetrics } from './patronMetrics.js';

/**
 * The metrics as deps.ts builds them: they observe finished paymaster calls and included ops, and read the signing
 * gate's state (deposits, the signer watch) rather than reading the chain again. They only observe: the gate is
 * built before the services that ask it (solvency/signingGate.ts).
 */
export interface Observability {
  /** Undefined unless PATRON_METRICS=on. */
  readonly metrics: PatronMetrics | undefined;
  /** `others` (the request log, the signing gate's) and then the metrics, each told of every finished call. */
  onCall(...others: readonly OnCall[]): OnCall;
  /** Settlement's `onIncluded`: an op of the paymaster was included (idempotent, as settlement requires). */
  onIncluded(args: { readonly chainId: number; readonly event: UserOperationEventLog }): void;
}

export interface ObservabilityDeps {
  readonly config: Pick<Config, 'metrics' | 'workers'>;
  readonly chains: readonly ChainRuntime[];
  /** What the metrics read of the signing gate at scrape time. */
  readonly gate: Pick<SigningGate, 'solvency' | 'signerWatch'>;
  readonly logger: { error(obj: object, msg: string): void };
  /** Settlement's per-chain lag (read at scrape time; settlement is built after this). */
  readonly settlementLag?: () => readonly { readonly chainId: number; readonly lag: bigint | undefined }[];
  /** Seconds since the native coin's USD price was read (read at scrape time), when known. */
  readonly priceAgeSeconds?: (chainId: number) => number | undefined;
  /** Rate-limited spends per limit since start (read at scrape time). */
  readonly rateLimitRefusals?: () => ReadonlyMap<string, number>;
  /** The request log's entries dropped (buffer full) and lost to failed writes since start (read at scrape time). */
  readonly requestLogLosses?: () => { readonly dropped: number; readonly failed: number };
}

export function createObservability(deps: ObservabilityDeps): Observability {
  const { config, gate } = deps;
  const processMetrics = config.metrics.enabled
    ? createPatronMetrics({
        chainIds: deps.chains.map((c) => c.chainId),
        solvency: () => gate.solvency.state(),
        ...(deps.settlementLag === undefined ? {} : { settlementLag: deps.settlementLag }),
        ...(deps.priceAgeSeconds === undefined ? {} : { priceAgeSeconds: deps.priceAgeSeconds }),
        ...(deps.requestLogLosses === undefined ? {} : { requestLogLosses: deps.requestLogLosses }),
        signerAccepted: () => gate.signerWatch.state(),
        ...(deps.rateLimitRefusals === undefined ? {} : { rateLimitRefusals: deps.rateLimitRefusals }),
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
  };
}
