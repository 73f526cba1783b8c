import cluster from 'node:cluster';
import type { Address } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import { type ChainRuntime, deploymentViews } from '../chain/chainRegistry.js';
import { isPaymasterSigner } from '../chain/paymasterSigners.js';
import type { UserOperationEventLog } from '../chain/userOperationEvents.js';
import type { Config } from '../config/config.js';
import type { OnCall } from '../rpc/callReport.js';
import { createAlertSender } from '../solvency/alertWebhook.js';
import type { ChainHead } from '../solvency/liabilityTracker.js';
import { type SignerWatch, startSignerWatch } from '../solvency/signerWatch.js';
import { type SolvencyGuard, startSolvencyGuard } from '../solvency/solvencyGuard.js';
import type { SolvencyClaims } from '../store/ledger/solvencyClaims.js';
import { clusterWorkerMetrics } from './clusterMetrics.js';
import { metricsOnCall } from './metricsOnCall.js';
import { createPatronMetrics, type PatronMetrics } from './patronMetrics.js';

/**
 * The metrics and the solvency guard as deps.ts builds them: both observe the same two streams (finished
 * paymaster calls, included ops), and the metrics read the guard's deposits rather than reading the chain twice.
 */
export interface Observability {
  /** Undefined unless PATRON_METRICS=on. */
  readonly metrics: PatronMetrics | undefined;
  readonly solvency: SolvencyGuard;
  /** Whether each paymaster still accepts this service's key (src/paymaster/signer/signerWatch.ts). */
  readonly signerWatch: SignerWatch;
  /** `others` (the request log) and then the metrics and the guard, each told of every finished call. */
  onCall(...others: readonly OnCall[]): OnCall;
  /** Settlement's `onIncluded`: an op of the paymaster was included (idempotent, as settlement requires). */
  onIncluded(args: { readonly chainId: number; readonly event: UserOperationEventLog }): Promise<void>;
  close(): Promise<void>;
}

export interface ObservabilityDeps {
  readonly config: Pick<Config, 'metrics' | 'solvency' | 'workers' | 'paymaster'>;
  readonly chains: readonly ChainRuntime[];
  /** The address this service signs with: the signer watch asks each paymaster whether it still accepts it. */
  readonly signer: Address;
  readonly logger: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  readonly now: () => number;
  /** Settlement's per-chain lag (read at scrape time; settlement is built after this). */
  readonly settlementLag?: () => readonly { readonly chainId: number; readonly lag: bigint | undefined }[];
  /** Seconds since the native coin's USD price was read (read at scrape time), when known. */
  readonly priceAgeSeconds?: (chainId: number) => number | undefined;
  /** Rate-limited spends per limit since start (read at scrape time). */
  readonly rateLimitRefusals?: () => ReadonlyMap<string, number>;
  /** The request log's entries dropped (buffer full) and lost to failed writes since start (read at scrape time). */
  readonly requestLogLosses?: () => { readonly dropped: number; readonly failed: number };
  /** The chain's latest block as the service already reads it (the fee oracle), for the guard's expiry. */
  readonly chainHead?: (chain: ChainRuntime) => Promise<ChainHead | undefined>;
  /** Several instances on one PostgreSQL: their shares of each deposit (store/ledger/solvencyClaims.ts). */
  readonly solvencyClaims?: SolvencyClaims | undefined;
}

export function createObservability(deps: ObservabilityDeps): Observability {
  const { config } = deps;
  const alert = config.solvency.alert;
  // One sender for every operator alert; the solvency guard closes it.
  const alertSender =
    alert === undefined
      ? undefined
      : createAlertSender({
          url: alert.url,
          secret: alert.secret,
          // The operator's own URL: private addresses allowed, whatever the tenants' rule (alertWebhook.ts).
          logger: deps.logger,
          now: deps.now,
        });
  const signerWatch = startSignerWatch({
    paymasters: deps.chains.flatMap(deploymentViews).map((chain) => ({
      chainId: chain.chainId,
      paymaster: chain.paymaster,
      entryPointVersion: chain.entryPointVersion,
      isAccepted: () => isPaymasterSigner({ chain, signer: deps.signer }),
    })),
    signer: deps.signer,
    intervalMs: config.paymaster.signerCheckMs,
    alert: alertSender,
    logger: deps.logger,
    now: deps.now,
  });
  const solvency = startSolvencyGuard({
    chains: deps.chains.flatMap(deploymentViews).map((chain) => ({
      chainId: chain.chainId,
      paymaster: chain.paymaster,
      readDeposit: () =>
        chain.client.readContract({
          address: chain.entryPoint,
          abi: entryPoint06Abi,
          functionName: 'balanceOf',
          args: [chain.paymaster],
        }),
      // getDepositInfo through v0.6's ABI: the struct is all static words on every version (paymasterStatus.ts).
      readStaked: async () =>
        (
          await chain.client.readContract({
            address: chain.entryPoint,
            abi: entryPoint06Abi,
            functionName: 'getDepositInfo',
            args: [chain.paymaster],
          })
        ).staked,
      ...(deps.chainHead === undefined
        ? {}
        : { readHead: () => deps.chainHead?.(chain) ?? Promise.resolve(undefined) }),
    })),
    settings: config.solvency,
    enforce: config.solvency.enabled,
    claims: deps.solvencyClaims,
    // A claim outlives every window signed under it: the longest window and a minute of clock skew.
    claimWindowSeconds: config.paymaster.sponsorship.maxExpirySeconds + 60,
    alert: alertSender,
    logger: deps.logger,
    now: deps.now,
  });
  const processMetrics = config.metrics.enabled
    ? createPatronMetrics({
        chainIds: deps.chains.map((c) => c.chainId),
        solvency: () => solvency.state(),
        ...(deps.settlementLag === undefined ? {} : { settlementLag: deps.settlementLag }),
        ...(deps.priceAgeSeconds === undefined ? {} : { priceAgeSeconds: deps.priceAgeSeconds }),
        ...(deps.requestLogLosses === undefined ? {} : { requestLogLosses: deps.requestLogLosses }),
        signerAccepted: () => signerWatch.state(),
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
    solvency,
    signerWatch,
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
    async onIncluded({ chainId, event }) {
      const args = {
        chainId,
        paymaster: event.paymaster,
        userOpHash: event.userOpHash,
        actualGasCost: event.actualGasCost,
      };
      metrics?.observeIncluded(args);
      solvency.observeIncluded({ ...args, sender: event.sender, nonce: event.nonce });
    },
    async close() {
      await signerWatch.close();
      await solvency.close();
    },
  };
}
