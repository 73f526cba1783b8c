import { type Aggregator, Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { TankBalanceState } from '../mee/tankWatch.js';
import type { CallReport } from '../rpc/callReport.js';
import { newestMigration } from '../store/db/migrate.js';
import { patronVersion } from '../version.js';
import { callLabels } from './callLabels.js';

/**
 * Patron's Prometheus metrics (docs/reference/metrics.md, "Metrics"), in a Registry of their own per app: never prom-client's global
 * default, so two apps in one process (the tests) never share or clash. Every label comes from a fixed set
 * (callLabels.ts; chains from the configured ones, else "other"), so the series are bounded whatever the
 * traffic. Wei amounts are Prometheus floats: exact up to 2^53 wei (~0.009 ETH), then to 15-16 significant
 * digits, which is what a dashboard or an alert needs.
 */

/** One chain's state as the solvency guard sees it (src/solvency/solvencyGuard.ts), read at scrape time. */
export interface ChainGaugeState {
  readonly chainId: number;
  readonly paymaster: string;
  readonly depositWei: bigint | undefined;
  readonly liabilitiesWei: bigint;
  readonly signing: boolean;
  readonly runwaySeconds: number | undefined;
  readonly lowWaterWei: bigint;
  /** The operator alerts' level, with hysteresis (src/solvency/alertHysteresis.ts). */
  readonly alertLevel: 'ok' | 'low' | 'halted';
}

/** What the scrape-time gauges read; each returns the current value, no I/O (the loops that read the chain own it). */
export interface MetricsSources {
  readonly chainIds: readonly number[];
  readonly solvency?: () => readonly ChainGaugeState[];
  readonly priceAgeSeconds?: (chainId: number) => number | undefined;
  /** The request log's losses since start (requestLogRecorder.ts stats): read at scrape time. */
  readonly requestLogLosses?: () => { readonly dropped: number; readonly failed: number };
  /** Rate-limited spends since start, per limit name (rateLimiter.ts), read at scrape time. */
  readonly rateLimitRefusals?: () => ReadonlyMap<string, number>;
  /** Whether each paymaster accepts this service's key, as the signer watch last read it (undefined: not yet). */
  readonly signerAccepted?: () => readonly {
    readonly chainId: number;
    readonly paymaster: string;
    readonly accepted: boolean | undefined;
  }[];
  /** The storage's current fault (undefined: none) and how often each kind began (db/storageHealth.ts). */
  readonly storage?: () => {
    readonly faultKind: string | undefined;
    readonly began: ReadonlyMap<string, number>;
  };
  /** The operator alerts' delivery outcomes since start, per destination (src/solvency/alerts/alertPoster.ts). */
  readonly alertDeliveries?: () => readonly {
    readonly destination: string;
    readonly outcome: string;
    readonly count: number;
  }[];
  /** The MEE gas tanks' balances, runways and alert levels, as the tank watch last read them (src/mee/tankWatch.ts). */
  readonly meeTanks?: () => readonly TankBalanceState[];
  /** Collect prom-client's process metrics (CPU, memory, event loop lag, GC); tests may leave them out. */
  readonly processMetrics?: boolean;
}

export interface PatronMetrics {
  readonly registry: Registry;
  /** One finished paymaster call: O(1) counter updates, on the request path. */
  observeCall(report: CallReport): void;
  /** An op of Patron's paymaster included on chain (settlement's onIncluded); an event seen twice counts once. */
  observeIncluded(args: {
    readonly chainId: number;
    readonly userOpHash: string;
    readonly actualGasCost: bigint;
  }): void;
  /**
   * Settlement's report after each round: every follower's lag (head − cursor). The gauge shows the last report:
   * settlement tells the metrics (it is built after them), rather than being read at scrape time.
   */
  observeSettlementLag(followers: readonly SettlementLag[]): void;
  /** A deposit keeper round's outcome for a paymaster (src/keeper/depositKeeper.ts): topped up, refused, failed, … */
  observeKeeperOutcome(args: { readonly chainId: number; readonly paymaster: string; readonly outcome: string }): void;
  /** The keeper's funding key's balance on a chain, as a round last read it. */
  observeKeeperFunder(args: { readonly chainId: number; readonly funder: string; readonly balanceWei: bigint }): void;
  /** The text format, as /metrics serves it. */
  render(): Promise<{ readonly contentType: string; readonly body: string }>;
}

/** One settlement follower's lag, as settlement reports it (settlementFollower.ts FollowerStatus). */
export interface SettlementLag {
  readonly chainId: number;
  readonly lag: bigint | undefined;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Recently counted inclusions, against settlement's replays after a restart or a reorg. */
const SEEN_INCLUSIONS = 10_000;

export function createPatronMetrics(sources: MetricsSources): PatronMetrics {
  const registry = new Registry();
  const known = new Set(sources.chainIds);
  const chain = (chainId: number) => (known.has(chainId) ? String(chainId) : 'other');
  const registers = [registry];

  const requests = new Counter({
    name: 'patron_rpc_requests_total',
    help: 'Paymaster JSON-RPC calls by method, mode, outcome and denial rule',
    labelNames: ['method', 'mode', 'outcome', 'rule'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'patron_rpc_request_duration_seconds',
    help: 'Paymaster JSON-RPC call duration',
    labelNames: ['method', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const webhookCalls = new Counter({
    name: 'patron_webhook_calls_total',
    help: "Sponsorship webhook checks by outcome (allowed, denied, or the failure's reason)",
    labelNames: ['outcome'] as const,
    registers,
  });
  const webhookDuration = new Histogram({
    name: 'patron_webhook_duration_seconds',
    help: 'Sponsorship webhook check duration (all of a dApp’s webhooks)',
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const signatures = new Counter({
    name: 'patron_signatures_total',
    help: 'paymasterAndData signatures issued',
    labelNames: ['chain', 'mode'] as const,
    registers,
  });
  const reservedWei = new Counter({
    name: 'patron_reserved_wei_total',
    help: 'Worst-case wei of every signature issued (what the EntryPoint may charge the paymaster)',
    labelNames: ['chain'] as const,
    registers,
  });
  const settledWei = new Counter({
    name: 'patron_settled_wei_total',
    help: "Wei the EntryPoint charged the paymaster for included ops (UserOperationEvent's actualGasCost)",
    labelNames: ['chain'] as const,
    registers,
  });
  const keeperTopups = new Counter({
    name: 'patron_keeper_topups_total',
    help: 'Deposit keeper actions per paymaster by outcome (confirmed, failed, dry_run, proposed, limit_reached, funder_insufficient)',
    labelNames: ['chain', 'paymaster', 'outcome'] as const,
    registers,
  });
  const keeperFunder = new Gauge({
    name: 'patron_keeper_funder_balance_wei',
    help: "The deposit keeper's funding key's balance on the chain, as its last round read it",
    labelNames: ['chain', 'funder'] as const,
    // The same key on the same chain in every worker: the last read of any.
    aggregator: 'max',
    registers,
  });
  let settlementLags: readonly SettlementLag[] = [];
  registerGauges(registry, { ...sources, settlementLag: () => settlementLags }, chain);
  if (sources.processMetrics !== false) collectDefaultMetrics({ register: registry });

  const seen = new Set<string>();
  return {
    registry,
    observeCall(report) {
      const l = callLabels(report);
      requests.inc({ method: l.method, mode: l.mode, outcome: l.outcome, rule: l.rule });
      duration.observe({ method: l.method, outcome: l.outcome }, report.latencyMs / 1000);
      for (const fact of report.facts) {
        if (fact.kind === 'webhook') {
          webhookCalls.inc({ outcome: fact.allowed ? 'allowed' : webhookReason(fact.reason) });
          webhookDuration.observe(fact.latencyMs / 1000);
        } else if (fact.kind === 'signed') {
          signatures.inc({ chain: chain(fact.chainId), mode: fact.mode });
          reservedWei.inc({ chain: chain(fact.chainId) }, Number(fact.worstCaseWei));
        }
      }
    },
    observeIncluded({ chainId, userOpHash, actualGasCost }) {
      const key = `${chainId}:${userOpHash.toLowerCase()}`;
      if (seen.has(key)) return;
      if (seen.size >= SEEN_INCLUSIONS) seen.clear();
      seen.add(key);
      settledWei.inc({ chain: chain(chainId) }, Number(actualGasCost));
    },
    observeSettlementLag(followers) {
      settlementLags = followers;
    },
    observeKeeperOutcome({ chainId, paymaster, outcome }) {
      keeperTopups.inc({ chain: chain(chainId), paymaster: paymaster.toLowerCase(), outcome });
    },
    observeKeeperFunder({ chainId, funder, balanceWei }) {
      keeperFunder.set({ chain: chain(chainId), funder: funder.toLowerCase() }, Number(balanceWei));
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/** The webhook caller's failure reasons (webhookCaller.ts WebhookFailureReason); anything else is "other". */
const WEBHOOK_REASONS: ReadonlySet<string> = new Set([
  'denied',
  'timeout',
  'http_status',
  'redirect',
  'invalid_response',
  'response_too_large',
  'connection_failed',
  'forbidden_address',
]);

function webhookReason(reason: string | undefined): string {
  return reason !== undefined && WEBHOOK_REASONS.has(reason) ? reason : 'other';
}

/** Gauges read at scrape time from the sources: no timer of their own, nothing stale between scrapes. */
function registerGauges(
  registry: Registry,
  sources: MetricsSources & { readonly settlementLag: () => readonly SettlementLag[] },
  chain: (chainId: number) => string,
): void {
  const registers = [registry];
  const { solvency, settlementLag, priceAgeSeconds } = sources;
  // Each gauge says how a PATRON_WORKERS scrape combines its workers' values (clusterMetrics.ts): a chain's deposit
  // is the same in every worker, their liabilities add up, the guard that refuses and the shortest runway count.
  const fromSolvency = (
    name: string,
    help: string,
    labelNames: string[],
    aggregator: Aggregator,
    set: (g: Gauge, s: ChainGaugeState) => void,
  ) =>
    new Gauge({
      name,
      help,
      labelNames,
      aggregator,
      registers,
      collect() {
        this.reset();
        for (const s of solvency?.() ?? []) set(this, s);
      },
    });
  fromSolvency(
    'patron_paymaster_deposit_wei',
    "The paymaster's EntryPoint deposit, as last read",
    ['chain', 'paymaster'],
    'max',
    (g, s) => {
      if (s.depositWei !== undefined) g.set({ chain: chain(s.chainId), paymaster: s.paymaster }, Number(s.depositWei));
    },
  );
  fromSolvency(
    'patron_live_liabilities_wei',
    'Worst case of the signatures not yet included nor expired (src/solvency/README.md)',
    ['chain', 'paymaster'],
    'sum',
    (g, s) => g.set({ chain: chain(s.chainId), paymaster: s.paymaster }, Number(s.liabilitiesWei)),
  );
  // Per paymaster too: a chain has one per EntryPoint version, each held on its own deposit.
  fromSolvency(
    'patron_solvency_signing',
    '1 while the solvency guard lets the paymaster sign, else 0',
    ['chain', 'paymaster'],
    'min',
    (g, s) => g.set({ chain: chain(s.chainId), paymaster: s.paymaster }, s.signing ? 1 : 0),
  );
  fromSolvency(
    'patron_runway_seconds',
    "Time until deposit − liabilities × margin reaches the floor (signing stops) at the last 24 h's included spend, from the ledger (absent without spend)",
    ['chain', 'paymaster'],
    'min',
    (g, s) => {
      if (s.runwaySeconds !== undefined) g.set({ chain: chain(s.chainId), paymaster: s.paymaster }, s.runwaySeconds);
    },
  );
  fromSolvency(
    'patron_solvency_low_water_wei',
    "The paymaster's low-water mark (PATRON_SOLVENCY_LOW_WATER_WEI): below it, deposit − liabilities × margin warns",
    ['chain', 'paymaster'],
    'max',
    (g, s) => g.set({ chain: chain(s.chainId), paymaster: s.paymaster }, Number(s.lowWaterWei)),
  );
  // With the alerts' hysteresis: a deposit held on the mark does not flap this either.
  fromSolvency(
    'patron_solvency_low',
    '1 from the low-water mark down until the deposit has stayed clear of it (the low and halted alerts), else 0',
    ['chain', 'paymaster'],
    'max',
    (g, s) => g.set({ chain: chain(s.chainId), paymaster: s.paymaster }, s.alertLevel === 'ok' ? 0 : 1),
  );
  registerTankGauges(registry, sources.meeTanks, chain);
  new Gauge({
    name: 'patron_build_info',
    help: "1, labelled with this build's version, its newest database migration (the schema) and the Node.js version",
    labelNames: ['version', 'schema', 'node'],
    // The same in every worker of a process; instances of different builds show as separate series.
    aggregator: 'max',
    registers,
  }).set({ version: patronVersion(), schema: newestMigration(), node: process.version }, 1);
  new Gauge({
    name: 'patron_signer_accepted',
    help: "1 while the paymaster accepts this service's signing key (its signer set, read every PATRON_SIGNER_CHECK_MS), 0 once it does not: Patron then signs nothing for it",
    labelNames: ['chain', 'paymaster'],
    // Every instance reads the same contract; a scrape shows the worst answer.
    aggregator: 'min',
    registers,
    collect() {
      this.reset();
      for (const s of sources.signerAccepted?.() ?? []) {
        if (s.accepted !== undefined) this.set({ chain: chain(s.chainId), paymaster: s.paymaster }, s.accepted ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'patron_settlement_lag_blocks',
    help: "Blocks between a chain's head and the settlement cursor",
    labelNames: ['chain'],
    // Only the process that follows the chain reports it.
    aggregator: 'max',
    registers,
    collect() {
      this.reset();
      // One follower per paymaster deployment of a chain: the chain's lag is its slowest follower's.
      const lags = new Map<number, bigint>();
      for (const s of settlementLag()) {
        const known = lags.get(s.chainId);
        if (s.lag !== undefined && (known === undefined || s.lag > known)) lags.set(s.chainId, s.lag);
      }
      for (const [chainId, lag] of lags) this.set({ chain: chain(chainId) }, Number(lag));
    },
  });
  new Counter({
    name: 'patron_rate_limited_total',
    help: 'Requests refused by a rate limit (429 / -32005), per limit (calls.perKey, calls.perIp, signIn.perIp, ...)',
    labelNames: ['limit'],
    registers,
    collect() {
      const refusals = sources.rateLimitRefusals?.();
      if (refusals === undefined) return;
      this.reset();
      for (const [limit, n] of refusals) this.inc({ limit }, n);
    },
  });
  new Counter({
    name: 'patron_alert_deliveries_total',
    help: 'Operator alert posts per destination (webhook, alertmanager, slack, pagerduty) and outcome (delivered; retried: an attempt failed and another follows; failed: given up)',
    labelNames: ['destination', 'outcome'],
    registers,
    collect() {
      const deliveries = sources.alertDeliveries?.();
      if (deliveries === undefined) return;
      this.reset();
      for (const d of deliveries) this.inc({ destination: d.destination, outcome: d.outcome }, d.count);
    },
  });
  // Counters whose value the recorder keeps (a scrape sets them to it): they only grow while the process runs.
  const losses = sources.requestLogLosses;
  const lossCounter = (name: string, help: string, read: (l: { dropped: number; failed: number }) => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        if (losses === undefined) return;
        this.reset();
        this.inc(read(losses()));
      },
    });
  lossCounter(
    'patron_request_log_dropped_total',
    'Request log entries dropped because the buffer was full (the database fell behind)',
    (l) => l.dropped,
  );
  lossCounter('patron_request_log_failed_total', 'Request log entries lost to failed writes', (l) => l.failed);
  new Gauge({
    name: 'patron_storage_up',
    help: 'Whether the storage takes writes (1), or 0 while a storage fault is current (disk full, read-only, locked, corrupt, unreachable: the log names it and the path; /readyz answers 503)',
    // A scrape of a cluster shows the worst worker.
    aggregator: 'min',
    registers,
    collect() {
      const storage = sources.storage?.();
      if (storage !== undefined) this.set(storage.faultKind === undefined ? 1 : 0);
    },
  });
  new Counter({
    name: 'patron_storage_faults_total',
    help: 'Storage faults that began since start, per kind (disk_full, read_only, locked, corrupt, io, cannot_open, unreachable)',
    labelNames: ['kind'],
    registers,
    collect() {
      const storage = sources.storage?.();
      if (storage === undefined) return;
      this.reset();
      for (const [kind, n] of storage.began) this.inc({ kind }, n);
    },
  });
  new Gauge({
    name: 'patron_price_age_seconds',
    help: "Age of the native coin's USD price (absent while unknown)",
    labelNames: ['chain'],
    aggregator: 'max',
    registers,
    collect() {
      this.reset();
      for (const chainId of sources.chainIds) {
        const age = priceAgeSeconds?.(chainId);
        if (age !== undefined) this.set({ chain: chain(chainId) }, age);
      }
    },
  });
}

/**
 * The MEE gas tanks' gauges, one series per active tank (tanks are operator objects: their number is the operator's,
 * not the traffic's). Token amounts in the token's base units, as the deposit's are in wei; every instance reads the
 * same balance (max), the shortest runway and any instance's alert count.
 */
function registerTankGauges(
  registry: Registry,
  tanks: (() => readonly TankBalanceState[]) | undefined,
  chain: (chainId: number) => string,
): void {
  const fromTanks = (
    name: string,
    help: string,
    aggregator: Aggregator,
    value: (t: TankBalanceState) => number | undefined,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['chain', 'tank', 'token', 'dapp'],
      aggregator,
      registers: [registry],
      collect() {
        this.reset();
        for (const t of tanks?.() ?? []) {
          const v = value(t);
          const labels = {
            chain: chain(t.chainId),
            tank: t.tank.toLowerCase(),
            token: t.token.toLowerCase(),
            dapp: t.dappId,
          };
          if (v !== undefined) this.set(labels, v);
        }
      },
    });
  fromTanks(
    'patron_mee_tank_token_balance',
    "The MEE gas tank's balance of its token, in the token's base units (USDC: millionths), as last read",
    'max',
    (t) => Number(t.balance),
  );
  fromTanks(
    'patron_mee_tank_runway_seconds',
    "Time until the MEE gas tank's balance runs out at its spend of the last 24 h (absent without spend)",
    'min',
    (t) => t.runwaySeconds,
  );
  fromTanks(
    'patron_mee_tank_low',
    "1 from the tank's low mark down (its low-balance threshold, or a runway under PATRON_MEE_TANK_RUNWAY_FLOOR_SECONDS) until it has stayed clear of it, else 0",
    'max',
    (t) => (t.low ? 1 : 0),
  );
}
