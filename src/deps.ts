import type { Logger } from 'pino';
import type { AccountService } from './accounts/accountService.js';
import { buildAccounts } from './accounts/buildAccounts.js';
import { masterKeySource, verifyMasterKey } from './accounts/masterKey.js';
import type { SessionService } from './accounts/sessionService.js';
import { withClosers } from './async/closers.js';
import { cachePolicy } from './cache/cachePolicy.js';
import { buildChains } from './chain/buildChains.js';
import type { ChainRegistry, ChainRuntime } from './chain/chainRegistry.js';
import type { DevChain } from './chain/embeddedChain.js';
import { createFeeOracle, type FeeOracle } from './chain/feeOracle.js';
import type { Config } from './config/config.js';
import { type CryptoBackend, selectCryptoBackend } from './crypto/cryptoBackend.js';
import { createSecretBox, loadMasterKey } from './crypto/secretBox.js';
import {
  buildLifecycleEvents,
  type EventDeliveryTuning,
  type LifecycleEvents,
} from './lifecycleEvents/buildLifecycleEvents.js';
import { createObservability } from './metrics/observability.js';
import type { PatronMetrics } from './metrics/patronMetrics.js';
import type { BoundsResolver } from './paymaster/boundsResolver.js';
import { buildPaymaster } from './paymaster/buildPaymaster.js';
import { loadPaymasterSigner } from './paymaster/signer/loadPaymasterSigner.js';
import { createPaymasterSigner, type PaymasterSigner } from './paymaster/signer/paymasterSigner.js';
import type { SponsorshipService } from './paymaster/sponsored/sponsorshipService.js';
import type { TokenPaymasterService } from './paymaster/token/tokenPaymasterService.js';
import { knownAccountsOf } from './policies/knownAccounts.js';
import { createPolicyService, type PolicyService } from './policies/policyService.js';
import { createRateLimiter, type RateLimiter } from './rateLimit/rateLimiter.js';
import { createRequestLimits, type RequestLimits } from './rateLimit/requestLimits.js';
import { buildRequestLog } from './requestLog/buildRequestLog.js';
import { requestLogOnCall } from './requestLog/requestLogOnCall.js';
import type { RequestLogRecorder } from './requestLog/requestLogRecorder.js';
import type { OnCall } from './rpc/callReport.js';
import { buildSettlement } from './settlement/buildSettlement.js';
import type { Settlement } from './settlement/settlementService.js';
import type { SignerWatch } from './solvency/signerWatch.js';
import { startSigningGate } from './solvency/signingGate.js';
import type { SolvencyGuard } from './solvency/solvencyGuard.js';
import { buildSponsorshipTokens } from './sponsorshipTokens/buildSponsorshipTokens.js';
import { JTI_SWEEP_MARGIN_SECONDS, type SponsorshipTokenGate } from './sponsorshipTokens/sponsorshipTokenGate.js';
import { openStore, type Store } from './store/store.js';
import { buildTokenCatalog } from './tokens/buildTokenCatalog.js';
import type { ChainTokenSettings, TokenCatalog } from './tokens/tokenCatalog.js';
import { cachingResolver } from './webhooks/cachingResolver.js';
import { createWebhookCaller, type WebhookCaller } from './webhooks/webhookCaller.js';
import { createWebhookService, type WebhookService } from './webhooks/webhookService.js';
import {
  createWebhookUrlPolicy,
  type HostResolver,
  systemResolver,
  type WebhookUrlPolicy,
} from './webhooks/webhookUrlPolicy.js';

/** Every dependency, built once and passed down explicitly; nothing below reads globals. */
export interface Deps {
  readonly config: Config;
  readonly logger: Logger;
  readonly store: Store;
  readonly accounts: AccountService;
  readonly webhooks: WebhookService;
  /** The outbound webhook check's HTTP client (keep-alive pools); closed with the rest. */
  readonly webhookCaller: WebhookCaller;
  readonly crypto: { readonly backend: CryptoBackend; readonly reason: string };
  readonly signer: PaymasterSigner;
  readonly chains: ChainRegistry;
  /** The in-process dev chain, when this process runs one. */
  readonly devChain: DevChain | undefined;
  readonly sponsorship: SponsorshipService;
  /** Each chain's current base fee and tip, read at most once per refresh interval. */
  readonly fees: FeeOracle;
  /** The signing bounds of a dApp on a chain: deployment, chain and dApp settings merged. */
  readonly bounds: BoundsResolver;
  /** Fee tokens per chain with background-refreshed prices. */
  readonly tokenCatalog: TokenCatalog;
  /** The token mode: quotes and token-paid paymasterAndData. */
  readonly tokenPaymaster: TokenPaymasterService;
  /** Dashboard sign-in and sessions. */
  readonly sessions: SessionService;
  /** The paymaster request log (batched writes off the request path); flushed on close. */
  readonly requestLog: RequestLogRecorder;
  /** The rate limits (docs/guides/rate-limits.md, "Rate limits"). */
  readonly limits: RequestLimits;
  /** Told of every finished paymaster call: the request log (and the metrics). rpc/callReport.ts. */
  readonly onCall: OnCall;
  /** The dApps' sponsorship policies (src/policies/README.md). */
  readonly policies: PolicyService;
  /** Settles the spend ledger from each chain's UserOperationEvents; releases expired reservations. */
  readonly settlement: Settlement;
  /** Holds signing on a chain whose deposit cannot cover its liabilities (src/solvency/README.md). */
  readonly solvency: SolvencyGuard;
  /** Whether each paymaster still accepts the signer; signing stops for one that does not (signerWatch.ts). */
  readonly signerWatch: SignerWatch;
  /** The Prometheus metrics (docs/reference/metrics.md); undefined unless PATRON_METRICS=on. */
  readonly metrics: PatronMetrics | undefined;
  /** The dApps' lifecycle events: endpoint settings and the outbox's background deliverer. */
  readonly lifecycleEvents: LifecycleEvents;
  /** The dApps' sponsorship tokens on the paymaster path (docs/guides/sponsorship-tokens.md). */
  readonly tokenGate: SponsorshipTokenGate;
  /** The tenant URL rules (webhooks/webhookUrlPolicy.ts): webhook URLs, and the JWKS URLs a dApp registers. */
  readonly urlPolicy: WebhookUrlPolicy;
  readonly now: () => number;
  close(): Promise<void>;
}

export interface DepsOverrides {
  /**
   * A store opened by the caller (tests use in-memory SQLite or a per-test PostgreSQL schema), handed over: closed
   * with the rest, and by a start that fails.
   */
  readonly store?: Store;
  readonly resolver?: HostResolver;
  readonly now?: () => number;
  /** A fixed master key (tests), instead of config / the data directory. */
  readonly masterKey?: Buffer;
  /** A fixed signer key (tests), instead of the configured source. */
  readonly signerKey?: Uint8Array;
  /** A signer opened by the caller (tests of the PKCS#11 and KMS back ends), which closes it. */
  readonly signer?: PaymasterSigner;
  /** Chains built by the caller (tests start their own dev chain), instead of the configured ones. */
  readonly chains?: readonly ChainRuntime[];
  /**
   * The chains dApps may list, instead of the served ones (tests whose deployment serves no chain but whose dApps
   * stand on the dev chain's id).
   */
  readonly servedChainIds?: readonly number[];
  /** Fee tokens of the caller's chains (tests), instead of the configured ones. */
  readonly tokenChains?: readonly ChainTokenSettings[];
  /**
   * The chains' fees, the bounds resolver and the rate limiter, instead of the chain reads, the configured
   * bounds and the configured rate limits: for the
   * benchmark's guard-less reference server (bench/sponsorServer.ts), which measures what the guards cost.
   */
  readonly guards?: { readonly fees: FeeOracle; readonly bounds: BoundsResolver; readonly rateLimiter: RateLimiter };
  /** The lifecycle events' delivery pace (tests: `intervalMs: 0`, rounds by `runOnce()`; a short backoff). */
  readonly eventDelivery?: EventDeliveryTuning;
}

export async function createDeps(config: Config, logger: Logger, overrides: DepsOverrides = {}): Promise<Deps> {
  // What the start opens is closed by close(), last opened first, and by a start that fails on the way.
  return withClosers(
    async (closers) => {
      const now = overrides.now ?? Date.now;
      const masterKey =
        overrides.masterKey ?? loadMasterKey({ masterKeyHex: config.masterKeyHex, dataDir: config.dataDir });
      const store = closers.own(overrides.store ?? (await openStore({ storage: config.storage })));
      // Once per start, before anything opens a secret: a wrong key is refused here, not by the first request.
      await verifyMasterKey({
        secrets: store.sealedSecrets,
        key: masterKey,
        source: masterKeySource({ masterKeyHex: config.masterKeyHex, dataDir: config.dataDir }),
        now: now(),
      });
      const secretBox = createSecretBox(masterKey);
      const resolve = overrides.resolver ?? systemResolver;
      const cache = cachePolicy({
        ttlMs: config.cacheTtlMs,
        maxEntries: config.cacheMaxEntries,
        externalChanges: store.externalChanges,
        now,
      });
      const urlPolicy = createWebhookUrlPolicy({ allowPrivate: config.allowPrivateWebhookUrls, resolve });
      const webhooks = createWebhookService({
        store,
        urlPolicy,
        secretBox,
        maxWebhooksPerDapp: config.maxWebhooksPerDapp,
        cache,
        now,
      });
      const webhookCaller = closers.own(
        createWebhookCaller({
          timeoutMs: config.webhookTimeoutMs,
          maxResponseBytes: config.webhookMaxResponseBytes,
          allowPrivate: config.allowPrivateWebhookUrls,
          // Registration (the URL policy above) always asks DNS afresh; the per-sponsorship call reuses answers.
          resolve: cachingResolver(resolve, { ttlMs: config.webhookDnsCacheMs, now }),
          secretBox,
          now,
          logger,
        }),
      );
      const crypto = selectCryptoBackend();
      // The configured back end (a key here, a PKCS#11 token, AWS KMS); the dev chain's paymasters name its address.
      // A signer the caller opened is the caller's to close.
      const signer =
        overrides.signer ??
        closers.own(
          overrides.signerKey === undefined
            ? await loadPaymasterSigner({ setting: config.paymaster.signer, crypto: crypto.backend })
            : createPaymasterSigner({ privateKey: overrides.signerKey, crypto: crypto.backend }),
        );
      const { devChain, chains } = await buildChains({ config, signer: signer.address, chains: overrides.chains });
      closers.defer(() => devChain?.close());
      // A chain whose accounts give a canonical address or code hash another kind throws here, before anything is served.
      for (const c of chains.list()) knownAccountsOf(c);
      const { accounts, sessions } = buildAccounts({
        config,
        store,
        secretBox,
        cache,
        now,
        logger,
        servedChainIds: overrides.servedChainIds ?? chains.list().map((c) => c.chainId),
      });
      const policies = createPolicyService({ store, cache, now });
      const fees =
        overrides.guards?.fees ??
        createFeeOracle({
          ...config.paymaster.fees,
          now,
          onError: (chainId, err) => logger.warn({ err, chainId }, 'could not read the chain fees'),
        });
      const rateLimiter =
        overrides.guards?.rateLimiter ??
        createRateLimiter(
          config.rateLimits.store === 'database' && store.pgPool !== undefined
            ? { kind: 'postgres', pool: store.pgPool }
            : { kind: 'memory' },
        );
      const limits = createRequestLimits({ limiter: rateLimiter, settings: config.rateLimits.settings });
      const { tokenCatalog, nativeUsdMicros } = await buildTokenCatalog({
        config,
        chains,
        devChain,
        tokenChains: overrides.tokenChains,
        logger,
        now,
      });
      closers.own(tokenCatalog);
      // Before the policy gate, which tells it of thresholds; its delivery loop starts last (below).
      const lifecycleEvents = closers.own(
        buildLifecycleEvents({
          config,
          store,
          secretBox,
          urlPolicy,
          resolve,
          logger,
          now,
          tuning: overrides.eventDelivery,
          nativeUsdMicros,
        }),
      );
      // Whether Patron may sign for a paymaster at all (the signer watch and the solvency guard), before the services.
      const gate = closers.own(
        startSigningGate({
          config,
          chains: chains.list(),
          signer: signer.address,
          // On PostgreSQL several instances may sign: each within its share of the deposit.
          solvencyClaims: store.solvencyClaims,
          logger,
          now,
          // The fee oracle's latest block (read for the requests anyway; refreshed here only when it is stale).
          chainHead: async (chain) => {
            const f = await fees.get(chain);
            return f?.timestamp === undefined
              ? undefined
              : { timestamp: Number(f.timestamp), blockNumber: Number(f.blockNumber) };
          },
        }),
      );
      const { sponsorship, tokenPaymaster, bounds } = buildPaymaster({
        config,
        signer,
        crypto: crypto.backend,
        fees,
        bounds: overrides.guards?.bounds,
        tokens: tokenCatalog,
        gate,
        policies,
        ledger: store.spendLedger,
        nativeUsdMicros,
        onThreshold: lifecycleEvents.onThreshold,
        webhooks: { service: webhooks, caller: webhookCaller },
        now,
      });
      const tokenGate = buildSponsorshipTokens({
        replay: store.sponsorshipTokenUses,
        crypto: crypto.backend,
        resolve,
        allowPrivate: config.allowPrivateWebhookUrls,
        maxLifetimeSeconds: config.sponsorshipTokenMaxLifetimeSeconds,
      });
      const requestLog = closers.own(buildRequestLog({ config, store, logger, now }));
      // Ended sessions, old sign-in failures and spent sponsorship-token ids past their token's exp are deleted in the
      // background (unref: never keeps the process up). A spent jti is refused while its row lives, and a token is
      // accepted until exp + skew by the clock of the instance that spends it: rows go JTI_SWEEP_MARGIN_SECONDS after
      // that, so an instance whose clock runs behind another's still finds the row (sponsorshipTokenGate.ts).
      const sessionPruner = setInterval(() => {
        sessions.prune().catch((err: unknown) => logger.warn({ err }, 'could not prune dashboard sessions'));
        store.sponsorshipTokenUses
          .sweep(Math.floor(now() / 1000) - JTI_SWEEP_MARGIN_SECONDS)
          .catch((err: unknown) => logger.warn({ err }, 'could not sweep spent sponsorship tokens'));
        store.spendLedger
          .sweepIdleHolds()
          .catch((err: unknown) => logger.warn({ err }, 'could not sweep idle hold counters'));
      }, 10 * 60_000);
      sessionPruner.unref();
      closers.defer(() => clearInterval(sessionPruner));
      // Before settlement, which tells them of included ops and of each round's lag.
      const observability = createObservability({
        config,
        chains: chains.list(),
        gate,
        logger,
        requestLog,
        rateLimiter,
        tokenCatalog,
        now,
      });
      // Last but the delivery loop, once every chain client and the store exist (src/settlement/README.md).
      const settlement = closers.own(
        await buildSettlement({
          config,
          chains,
          store,
          nativeUsdMicros,
          observers: [gate, observability, lifecycleEvents],
          events: lifecycleEvents,
          onStatus: (status) => observability.onSettlementStatus(status),
          logger,
          now,
        }),
      );
      // Last: a start that fails on the way never had a delivery loop running.
      lifecycleEvents.deliverer.start();
      return {
        config,
        logger,
        store,
        accounts,
        webhooks,
        webhookCaller,
        crypto,
        signer,
        chains,
        devChain,
        sponsorship,
        fees,
        bounds,
        tokenCatalog,
        tokenPaymaster,
        sessions,
        requestLog,
        limits,
        policies,
        settlement,
        solvency: gate.solvency,
        signerWatch: gate.signerWatch,
        metrics: observability.metrics,
        lifecycleEvents,
        tokenGate,
        urlPolicy,
        // With the request log off (retention 0) no entry is built for a call only to be dropped.
        onCall: observability.onCall(
          lifecycleEvents.onCall,
          ...(config.requestLog.retentionDays > 0 ? [requestLogOnCall(requestLog)] : []),
        ),
        now,
        close: () => closers.closeAll(),
      };
    },
    (err) => logger.error({ err }, 'a start that failed could not close what it had opened'),
  );
}
