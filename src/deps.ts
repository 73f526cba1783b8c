import type { Logger } from 'pino';
import type { AccountService } from './accounts/accountService.js';
import { buildAccounts } from './accounts/buildAccounts.js';
import { checkedMasterKey } from './accounts/masterKey.js';
import type { MemberService } from './accounts/memberService.js';
import type { SessionService } from './accounts/sessionService.js';
import { withClosers } from './async/closers.js';
import { type Sweep, startSweeps } from './async/startSweeps.js';
import { cachePolicy } from './cache/cachePolicy.js';
import { buildChains } from './chain/buildChains.js';
import type { ChainRegistry, ChainRuntime } from './chain/chainRegistry.js';
import type { DevChain } from './chain/embeddedChain.js';
import type { FeeOracle } from './chain/feeOracle.js';
import type { Config } from './config/config.js';
import { type CryptoBackend, selectCryptoBackend } from './crypto/cryptoBackend.js';
import { createSecretBox } from './crypto/secretBox.js';
import type { DevBundlerStatus } from './devBundler/devBundler.js';
import { buildKeeper } from './keeper/buildKeeper.js';
import type { DepositKeeper } from './keeper/depositKeeper.js';
import {
  buildLifecycleEvents,
  type EventDeliveryTuning,
  type LifecycleEvents,
} from './lifecycleEvents/buildLifecycleEvents.js';
import { buildMeeSponsor } from './mee/buildMeeSponsor.js';
import { buildMeeTanks, type MeeTankSources, NO_MEE_TANKS } from './mee/buildMeeTanks.js';
import type { MeeSponsorService } from './mee/meeSponsorService.js';
import type { TankSigners } from './mee/tankSigner.js';
import type { TankWatch } from './mee/tankWatch.js';
import { createObservability } from './metrics/observability.js';
import type { PatronMetrics } from './metrics/patronMetrics.js';
import type { BoundsResolver } from './paymaster/boundsResolver.js';
import { buildPaymaster } from './paymaster/buildPaymaster.js';
import { loadPaymasterSigner } from './paymaster/signer/loadPaymasterSigner.js';
import type { PaymasterSigner } from './paymaster/signer/paymasterSigner.js';
import type { SponsorshipService } from './paymaster/sponsored/sponsorshipService.js';
import type { TokenPaymasterService } from './paymaster/token/tokenPaymasterService.js';
import { knownAccountsOf } from './policies/knownAccounts.js';
import { createPolicyService, type PolicyService } from './policies/policyService.js';
import { buildRequestLimits } from './rateLimit/buildRequestLimits.js';
import type { RateLimiter } from './rateLimit/rateLimiter.js';
import type { RequestLimits } from './rateLimit/requestLimits.js';
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
import { type SponsorshipTokenGate, sweepSpentTokenIds } from './sponsorshipTokens/sponsorshipTokenGate.js';
import type { OnMigration } from './store/db/migrate.js';
import { storageAwareLogger } from './store/db/storageAwareLogger.js';
import { createStorageHealth, type StorageHealth } from './store/db/storageHealth.js';
import { openStore, type Store } from './store/store.js';
import { buildTokenCatalog } from './tokens/buildTokenCatalog.js';
import type { ChainTokenSettings, TokenCatalog } from './tokens/tokenCatalog.js';
import { buildWebhooks } from './webhooks/buildWebhooks.js';
import type { WebhookCaller } from './webhooks/webhookCaller.js';
import type { WebhookService } from './webhooks/webhookService.js';
import { type HostResolver, systemResolver, type WebhookUrlPolicy } from './webhooks/webhookUrlPolicy.js';

/**
 * Ended dashboard sessions and old sign-in failures, spent sponsorship-token ids and idle hold counters are deleted
 * this often, in the background.
 */
const SWEEP_EVERY_MS = 10 * 60_000;

/** Every dependency, built once and passed down explicitly; nothing below reads globals. */
export interface Deps {
  readonly config: Config;
  readonly logger: Logger;
  readonly store: Store;
  /** The storage's current fault, named once in the log, failing /readyz until a probe passes (db/storageHealth.ts). */
  readonly storageHealth: StorageHealth;
  readonly accounts: AccountService;
  readonly webhooks: WebhookService;
  /** The outbound webhook check's HTTP client (keep-alive pools); closed with the rest. */
  readonly webhookCaller: WebhookCaller;
  readonly crypto: { readonly backend: CryptoBackend; readonly reason: string };
  readonly signer: PaymasterSigner;
  readonly chains: ChainRegistry;
  /** The in-process dev chain, when this process runs one. */
  readonly devChain: DevChain | undefined;
  /** The dev stack's bundler, for /readyz: main.ts adds it once built (it runs beside the process, not in it). */
  readonly devBundler?: { status(): DevBundlerStatus } | undefined;
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
  /** The people of each account's team and their roles. */
  readonly members: MemberService;
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
  /** Tops up the opted-in paymasters' EntryPoint deposits (src/keeper/README.md); idle when none is listed. */
  readonly keeper: DepositKeeper;
  /** Whether each paymaster still accepts the signer; signing stops for one that does not (signerWatch.ts). */
  readonly signerWatch: SignerWatch;
  /** The Prometheus metrics (docs/reference/metrics.md); undefined unless PATRON_METRICS=on. */
  readonly metrics: PatronMetrics | undefined;
  /** The dApps' lifecycle events: endpoint settings and the outbox's background deliverer. */
  readonly lifecycleEvents: LifecycleEvents;
  /** The dApps' sponsorship tokens on the paymaster path (docs/guides/sponsorship-tokens.md). */
  readonly tokenGate: SponsorshipTokenGate;
  /** The MEE gas tanks' owner keys, by their refs (src/mee/tankSigner.ts); opened on first use. */
  readonly tankSigners: TankSigners;
  /** The MEE gas tanks' balances, runways and low-balance alerts (src/mee/tankWatch.ts); idle without tanks. */
  readonly tankWatch: TankWatch;
  /** The MEE sponsor endpoints' service: nonce lanes, quotes checked and signed from the dApps' tanks. */
  readonly meeSponsor: MeeSponsorService;
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
  /** The MEE gas tanks and their spend (tests), instead of none (until the tanks' repository is wired here). */
  readonly meeTanks?: MeeTankSources;
}

export async function createDeps(config: Config, logger: Logger, overrides: DepsOverrides = {}): Promise<Deps> {
  // What the start opens is closed by close(), last opened first, and by a start that fails on the way.
  return withClosers(logger, async (closers) => {
    const { guards, tokenChains, eventDelivery: tuning, chains: given } = overrides;
    const now = overrides.now ?? Date.now;
    // Each migration a start applies is logged as it runs (the schema a build leaves is /healthz's `schema`).
    const onMigration: OnMigration = ({ name, ms }) =>
      logger.info({ migration: name, ms: Math.round(ms) }, 'applied a database migration');
    const store = closers.own(overrides.store ?? (await openStore({ storage: config.storage, onMigration })));
    const storageHealth = closers.own(
      createStorageHealth({ location: store.location, probe: () => store.probe(), logger, now }),
    );
    // What most builders take: the configuration, the logger, the clock, the store and its health.
    const ground = { config, logger, now, store, storageHealth };
    // What the background loops take: their storage failures go to the storage's health, named there once.
    const background = { ...ground, logger: storageAwareLogger(logger, storageHealth) };
    // Once per start, before anything opens a secret: a wrong key is refused here, not by the first request.
    const { key } = await checkedMasterKey({ ...ground, key: overrides.masterKey });
    const secretBox = createSecretBox(key);
    const resolve = overrides.resolver ?? systemResolver;
    const { cacheTtlMs: ttlMs, cacheMaxEntries: maxEntries } = config;
    const cache = cachePolicy({ ttlMs, maxEntries, externalChanges: store.externalChanges, now });
    const { urlPolicy, webhooks, webhookCaller } = buildWebhooks({ ...ground, secretBox, cache, resolve });
    closers.own(webhookCaller);
    const crypto = selectCryptoBackend();
    // The configured back end (a key here, a PKCS#11 token, AWS KMS); the dev chain's paymasters name its address.
    // A signer the caller opened is the caller's to close.
    const { signer: setting } = config.paymaster;
    const signer =
      overrides.signer ??
      closers.own(
        await loadPaymasterSigner({ setting, crypto: crypto.backend, privateKey: overrides.signerKey, logger }),
      );
    const { devChain, chains, fees } = await buildChains({ ...ground, signer, chains: given, fees: guards?.fees });
    closers.defer(() => devChain?.close());
    // A chain whose accounts give a canonical address or code hash another kind throws here, before anything is served.
    for (const c of chains.list()) knownAccountsOf(c);
    const servedChainIds = overrides.servedChainIds ?? chains.list().map((c) => c.chainId);
    const { accounts, sessions, members } = buildAccounts({ ...ground, secretBox, cache, servedChainIds });
    const policies = createPolicyService({ store, cache, now });
    const { limits, rateLimiter } = buildRequestLimits({ ...ground, rateLimiter: guards?.rateLimiter });
    const { tokenCatalog, nativeUsdMicros } = await buildTokenCatalog({ ...ground, chains, devChain, tokenChains });
    closers.own(tokenCatalog);
    // Before the policy gate, which tells them of thresholds; their delivery loop starts last (below).
    const lifecycleEvents = closers.own(
      buildLifecycleEvents({ ...background, secretBox, urlPolicy, resolve, nativeUsdMicros, tuning }),
    );
    // Whether Patron may sign for a paymaster at all (the signer watch and the solvency guard), before the modes that
    // ask it; on PostgreSQL several instances may sign, each within its share of the deposit (store.solvencyClaims).
    const gate = closers.own(startSigningGate({ ...background, chains, signer, fees }));
    const { sponsorship, tokenPaymaster, bounds, policyGate, chainReads } = buildPaymaster({
      ...ground,
      signer,
      crypto: crypto.backend,
      fees,
      bounds: guards?.bounds,
      tokenCatalog,
      nativeUsdMicros,
      gate,
      policies,
      onThreshold: lifecycleEvents.onThreshold,
      webhooks: { service: webhooks, caller: webhookCaller },
    });
    const tokenGate = buildSponsorshipTokens({ ...ground, crypto: crypto.backend, resolve });
    const requestLog = closers.own(buildRequestLog(background));
    const sweeps: readonly Sweep[] = [
      ['could not prune dashboard sessions', () => sessions.prune()],
      ['could not sweep spent sponsorship tokens', () => sweepSpentTokenIds(store.sponsorshipTokenUses, now())],
      ['could not sweep idle hold counters', () => store.spendLedger.sweepIdleHolds()],
    ];
    closers.own(startSweeps({ everyMs: SWEEP_EVERY_MS, sweeps, logger: background.logger }));
    // After the gate, whose alert sender posts the tanks' alerts; before the metrics, which read their figures.
    const { tankSigners, tankWatch } = closers.own(
      buildMeeTanks({
        ...background,
        chains,
        crypto: crypto.backend,
        alert: gate.alerts,
        sources: overrides.meeTanks ?? {
          listTanks: () => store.meeTanks.list(),
          // The ledger keeps a tank's payments in USD, wei and ops, not token units: no runway until it does.
          tankSpend24h: NO_MEE_TANKS.tankSpend24h,
        },
      }),
    );
    // The MEE sponsor endpoints (src/mee/README.md): the same policy gate and ledger as every sponsorship.
    const meeSponsor = buildMeeSponsor({
      tanks: store.meeTanks,
      lanes: store.meeNonceLanes,
      chains,
      chainReads,
      tokenCatalog,
      policies: policyGate,
      signRoot: async ({ tank, root }) => {
        const signer = await tankSigners.signerFor(tank.signer);
        // A key swapped under the reference would sign for a tank it does not own: nothing the validator accepts.
        if (signer.address.toLowerCase() !== tank.owner.toLowerCase()) {
          throw new Error(`gas tank ${tank.id}'s signer opens ${signer.address}, not its owner ${tank.owner}`);
        }
        return signer.signRoot(root);
      },
      trustedNodes: config.meeNodes,
      now,
      cursors: store.chainCursors,
    });
    // Before settlement, which tells them of included ops and of each round's lag.
    const observability = createObservability({
      ...ground,
      chains,
      gate,
      requestLog,
      rateLimiter,
      tokenCatalog,
      meeTanks: tankWatch,
    });
    // After the gate (its guard's liabilities, its alert sender) and the metrics it tells; closed before both.
    const keeper = closers.own(
      await buildKeeper({
        ...background,
        chains,
        gate,
        crypto: crypto.backend,
        signer,
        observer: observability.keeper,
      }),
    );
    // Last but the delivery loop, once every chain client and the store exist (src/settlement/README.md).
    const settlement = closers.own(
      await buildSettlement({
        ...background,
        chains,
        nativeUsdMicros,
        observers: [gate, observability, lifecycleEvents],
        events: lifecycleEvents,
        onStatus: (status) => observability.onSettlementStatus(status),
      }),
    );
    // Last: a start that fails on the way never had a delivery loop running.
    lifecycleEvents.deliverer.start();
    return {
      config,
      logger,
      store,
      storageHealth,
      crypto,
      signer,
      devChain,
      chains,
      fees,
      tokenCatalog,
      accounts,
      sessions,
      members,
      policies,
      webhooks,
      webhookCaller,
      urlPolicy,
      limits,
      sponsorship,
      tokenPaymaster,
      bounds,
      tokenGate,
      solvency: gate.solvency,
      keeper,
      tankSigners,
      tankWatch,
      meeSponsor,
      signerWatch: gate.signerWatch,
      requestLog,
      lifecycleEvents,
      metrics: observability.metrics,
      settlement,
      // With the request log off (retention 0) no entry is built for a call only to be dropped.
      onCall: observability.onCall(
        lifecycleEvents.onCall,
        ...(config.requestLog.retentionDays > 0 ? [requestLogOnCall(requestLog)] : []),
      ),
      now,
      close: () => closers.closeAll(),
    };
  });
}
