import path from 'node:path';
import type { Address } from 'viem';
import { z } from 'zod';
import { type AlertSettings, alertEnv, alertSettingsFrom } from './alertSettings.js';
import { boundsFromEnv } from './boundsSettings.js';
import { type ChainSettings, chainsFromEnv } from './chainSettings.js';
import {
  type DashboardSettings,
  dashboardEnv,
  dashboardSettingsFrom,
  type RequestLogSettings,
  requestLogSettingsFrom,
} from './dashboardSettings.js';
import { devChainForkEnv, devChainForkSettingsFrom } from './devChainForkSettings.js';
import { addressListFromEnv, DEFAULT_EIP7702_DELEGATES, eip7702DelegatesFromEnv } from './eip7702Delegates.js';
import { booleanFromEnv, integerFromEnv, productionFromEnv } from './envValues.js';
import { type KeeperSettings, keeperEnv, keeperSettingsFrom } from './keeperSettings.js';
import { unknownSettings } from './knownSettings.js';
import { DEFAULT_HOST, DEFAULT_PORT } from './listenAddress.js';
import { type MeeTankSettings, meeTankEnv, meeTankSettingsFrom } from './meeTankSettings.js';
import { type MetricsSettings, metricsEnv, metricsSettingsFrom } from './metricsSettings.js';
import { type RateLimitConfig, rateLimitsFromEnv } from './rateLimitSettings.js';
import { DEV_CHAIN_ID } from './servedChains.js';
import { type SettlementSettings, settlementEnv, settlementSettingsFrom } from './settlementSettings.js';
import { signerFromEnv } from './signerSettings.js';
import { type SolvencySettings, solvencyEnv, solvencySettingsFrom } from './solvencySettings.js';

/**
 * The whole configuration, parsed once from the environment at start-up and frozen.
 * This is the only module that reads process.env (see main.ts / cli): everything else receives a Config.
 */

/** What PATRON_MASTER_KEY takes (and `patron master-key rotate`'s PATRON_NEW_MASTER_KEY): 32 bytes in hex. */
export const MASTER_KEY_PATTERN = /^(0x)?[0-9a-fA-F]{64}$/;

const envSchema = z.object({
  PORT: integerFromEnv('PORT', 0, 65535),
  HOST: z.string().min(1, { error: 'HOST must not be empty' }).optional(),
  PATRON_DATA_DIR: z.string().min(1, { error: 'PATRON_DATA_DIR must not be empty' }).optional(),
  DATABASE_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || /^postgres(ql)?:\/\//.test(v), {
      error: 'DATABASE_URL must be a postgres:// or postgresql:// URL',
    }),
  NODE_ENV: z.string().optional(),
  PATRON_PRODUCTION: booleanFromEnv('PATRON_PRODUCTION'),
  PATRON_MASTER_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || MASTER_KEY_PATTERN.test(v), {
      error: 'PATRON_MASTER_KEY must be 32 bytes as 64 hex characters',
    }),
  PATRON_PUBLIC_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || URL.canParse(v), {
      error: 'PATRON_PUBLIC_URL must be an absolute URL',
    }),
  PATRON_CACHE_TTL_MS: integerFromEnv('PATRON_CACHE_TTL_MS', 0, 60_000),
  PATRON_CACHE_MAX_ENTRIES: integerFromEnv('PATRON_CACHE_MAX_ENTRIES', 100, 10_000_000),
  PATRON_GATING_CACHE_SECONDS: integerFromEnv('PATRON_GATING_CACHE_SECONDS', 0, 3600),
  PATRON_MAX_WEBHOOKS_PER_DAPP: integerFromEnv('PATRON_MAX_WEBHOOKS_PER_DAPP', 1, 1000),
  PATRON_ALLOW_PRIVATE_WEBHOOKS: booleanFromEnv('PATRON_ALLOW_PRIVATE_WEBHOOKS'),
  PATRON_WEBHOOK_TIMEOUT_MS: integerFromEnv('PATRON_WEBHOOK_TIMEOUT_MS', 100, 30_000),
  PATRON_WEBHOOK_DNS_CACHE_SECONDS: integerFromEnv('PATRON_WEBHOOK_DNS_CACHE_SECONDS', 0, 3600),
  PATRON_SPONSORSHIP_TOKEN_MAX_LIFETIME_SECONDS: integerFromEnv(
    'PATRON_SPONSORSHIP_TOKEN_MAX_LIFETIME_SECONDS',
    10,
    86_400,
  ),
  PATRON_DEV_CHAIN: booleanFromEnv('PATRON_DEV_CHAIN'),
  PATRON_DEV_BUNDLER: booleanFromEnv('PATRON_DEV_BUNDLER'),
  PATRON_DEV_BUNDLER_PORT: integerFromEnv('PATRON_DEV_BUNDLER_PORT', 1, 65_535),
  PATRON_WORKERS: integerFromEnv('PATRON_WORKERS', 1, 64),
  PATRON_CHAINS: chainsFromEnv,
  PATRON_EXPIRY_DEFAULT_SECONDS: integerFromEnv('PATRON_EXPIRY_DEFAULT_SECONDS', 30, 7 * 86_400),
  PATRON_EXPIRY_MAX_SECONDS: integerFromEnv('PATRON_EXPIRY_MAX_SECONDS', 30, 7 * 86_400),
  PATRON_VALID_AFTER_SKEW_SECONDS: integerFromEnv('PATRON_VALID_AFTER_SKEW_SECONDS', 0, 3600),
  PATRON_PRICE_REFRESH_SECONDS: integerFromEnv('PATRON_PRICE_REFRESH_SECONDS', 1, 3600),
  PATRON_FEE_REFRESH_MS: integerFromEnv('PATRON_FEE_REFRESH_MS', 100, 60_000),
  PATRON_SIGNER_CHECK_MS: integerFromEnv('PATRON_SIGNER_CHECK_MS', 100, 60_000),
  PATRON_FEE_MAX_AGE_SECONDS: integerFromEnv('PATRON_FEE_MAX_AGE_SECONDS', 1, 3600),
  PATRON_DB_POOL_SIZE: integerFromEnv('PATRON_DB_POOL_SIZE', 1, 200),
  PATRON_DEMO: booleanFromEnv('PATRON_DEMO'),
  PATRON_EIP7702_DELEGATES: eip7702DelegatesFromEnv,
  PATRON_MEE_NODES: addressListFromEnv('PATRON_MEE_NODES'),
  ...dashboardEnv,
  ...settlementEnv,
  ...metricsEnv,
  ...solvencyEnv,
  ...alertEnv,
  ...keeperEnv,
  ...meeTankEnv,
  ...devChainForkEnv,
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .optional(),
});

export type StorageConfig =
  | { readonly kind: 'sqlite'; readonly file: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly poolSize: number };

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly storage: StorageConfig;
  /** Strict production checks: SSRF guard on webhook URLs, master key from the environment, no demo data. */
  readonly production: boolean;
  /** 32-byte key that encrypts stored secrets; undefined means "use or create `<dataDir>/master.key`". */
  readonly masterKeyHex: string | undefined;
  readonly publicUrl: string | undefined;
  /** How long a process may serve a cached credential/webhook lookup: the bound on cross-process staleness. */
  readonly cacheTtlMs: number;
  /** Entries each credential/webhook cache holds before evicting the least recently used. */
  readonly cacheMaxEntries: number;
  /**
   * How long a gating rule's chain read (a balance, an NFT count, an attestation) is reused: the staleness a
   * policy accepts for one eth_call fewer per request (chain/gatingReads.ts); 0 reads every time.
   */
  readonly gatingCacheMs: number;
  readonly maxWebhooksPerDapp: number;
  /** Whether webhook URLs may point at loopback/private/link-local addresses. */
  readonly allowPrivateWebhookUrls: boolean;
  /** Budget of one outbound webhook call (DNS, connect, headers and body); past it the check fails closed. */
  readonly webhookTimeoutMs: number;
  /**
   * How long a webhook host's resolved addresses are reused by the call path (0: resolved on every call). The
   * addresses are still checked on every call and are the only ones connected to (webhooks/cachingResolver.ts).
   */
  readonly webhookDnsCacheMs: number;
  /** Largest webhook answer read, in bytes; a larger one fails the check. */
  readonly webhookMaxResponseBytes: number;
  /**
   * The longest a dApp's sponsorship token may still be valid when it arrives (its `exp` at most this far from
   * now): a stolen token is worth this long at most (docs/guides/sponsorship-tokens.md).
   */
  readonly sponsorshipTokenMaxLifetimeSeconds: number;
  /** Create a demo account and dApp on first start (embedded defaults only). */
  readonly demo: boolean;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Largest accepted request body, in bytes. */
  readonly bodyLimitBytes: number;
  /** Chains, the paymaster signer and the sponsorship validity window. */
  readonly paymaster: ChainSettings;
  /** Server processes (node:cluster) sharing the port; more than 1 needs PostgreSQL and no dev chain. */
  readonly workers: number;
  /**
   * alto, a real ERC-4337 bundler, run beside the embedded dev chain (docs/guides/dev-bundler.md): on with the dev
   * chain unless PATRON_DEV_BUNDLER=false; on `port`, else Patron's port + 1 (a free one when Patron's is 0).
   */
  readonly devBundler: { readonly enabled: boolean; readonly port: number | undefined };
  /** The web dashboard: base path, sessions, the deposit warning. */
  readonly dashboard: DashboardSettings;
  /** The paymaster request log's retention. */
  readonly requestLog: RequestLogSettings;
  /** Rate limits, where their counts live, and the proxies whose X-Forwarded-For is believed. */
  readonly rateLimits: RateLimitConfig;
  /** Following each chain's EntryPoint to settle the spend ledger, and releasing expired reservations. */
  readonly settlement: SettlementSettings;
  /** The Prometheus /metrics endpoint (docs/reference/metrics.md, "Metrics"). */
  readonly metrics: MetricsSettings;
  /** The solvency guard and the operator alert webhook (src/solvency/README.md). */
  readonly solvency: SolvencySettings;
  /** Where operator alerts go besides the signed webhook: Alertmanager, Slack, PagerDuty (src/solvency/alerts/). */
  readonly alerts: AlertSettings;
  /** The deposit keeper: per paymaster, opt-in top-ups of the EntryPoint deposit (src/keeper/README.md). */
  readonly keeper: KeeperSettings;
  /** The MEE gas tanks' balance watch and low-balance alerts (src/mee/README.md). */
  readonly meeTanks: MeeTankSettings;
  /** PATRON_MEE_NODES: the MEE nodes a gas tank's payment may go to; empty: none (no quote is signed). */
  readonly meeNodes: readonly Address[];
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * The configuration less the paymaster signer: what a process that never signs a sponsorship needs (the CLI's
 * storage commands, cli/main.ts). Production mode does not ask it for a signer.
 */
export type ConfigWithoutSigner = Omit<Config, 'paymaster'> & { readonly paymaster: Omit<ChainSettings, 'signer'> };

/** The service's whole configuration: everything, the signer included (required in production mode). */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const production = productionFromEnv(env);
  const signerSource = signerFromEnv({ env, production, dataDir: path.resolve(env.PATRON_DATA_DIR || './data') });
  // The signer's problems are reported with every other one, in one refusal.
  const rest = parseConfig(env, signerSource.problems);
  if (signerSource.signer === undefined) throw new ConfigError(signerSource.problems);
  return Object.freeze({ ...rest, paymaster: Object.freeze({ ...rest.paymaster, signer: signerSource.signer }) });
}

/**
 * Every setting but the signer's, checked as the service checks them (the CLI runs with the service's environment,
 * and a setting the service refuses is refused here too); PATRON_MASTER_KEY is still required in production mode,
 * as every storage command opens the database's secrets with it.
 */
export function loadConfigWithoutSigner(env: Readonly<Record<string, string | undefined>>): ConfigWithoutSigner {
  return parseConfig(env, []);
}

function parseConfig(
  env: Readonly<Record<string, string | undefined>>,
  signerProblems: readonly string[],
): ConfigWithoutSigner {
  const parsed = envSchema.safeParse(env);
  const bounds = boundsFromEnv(env);
  const rateLimits = rateLimitsFromEnv(env, (env.DATABASE_URL ?? '') === '' ? 'sqlite' : 'postgres');
  const problems = [
    ...(parsed.success ? [] : parsed.error.issues.map((i) => i.message)),
    ...bounds.problems,
    ...rateLimits.problems,
    ...unknownSettings(env),
  ];
  const metrics = parsed.success ? metricsSettingsFrom(parsed.data) : undefined;
  const solvency = parsed.success ? solvencySettingsFrom(parsed.data) : undefined;
  const alerts = parsed.success ? alertSettingsFrom(parsed.data) : undefined;
  const keeper = parsed.success ? keeperSettingsFrom(parsed.data, env) : undefined;
  problems.push(
    ...(metrics?.problems ?? []),
    ...(solvency?.problems ?? []),
    ...(alerts?.problems ?? []),
    ...(keeper?.problems ?? []),
  );
  // The cross-field rule reads the raw values, so it is reported together with every other problem.
  const production = productionFromEnv(env);
  if (production && (env.PATRON_MASTER_KEY ?? '') === '') {
    // Every process of a production deployment must decrypt the same secrets, so the key cannot live in one
    // machine's data directory.
    problems.push('PATRON_MASTER_KEY is required in production mode (32 bytes as 64 hex characters)');
  }
  problems.push(...signerProblems);
  if (
    !parsed.success ||
    metrics === undefined ||
    solvency === undefined ||
    alerts === undefined ||
    keeper === undefined ||
    problems.length > 0
  ) {
    throw new ConfigError(problems);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.PATRON_DATA_DIR ?? './data');
  const databaseUrl = e.DATABASE_URL === '' ? undefined : e.DATABASE_URL;
  const masterKeyHex =
    e.PATRON_MASTER_KEY === '' || e.PATRON_MASTER_KEY === undefined
      ? undefined
      : e.PATRON_MASTER_KEY.replace(/^0x/, '');
  const storage: StorageConfig =
    databaseUrl === undefined
      ? { kind: 'sqlite', file: path.join(dataDir, 'patron.sqlite') }
      : { kind: 'postgres', url: databaseUrl, poolSize: e.PATRON_DB_POOL_SIZE ?? 10 };
  // What the SDK flows need between Patron's answer and inclusion, with a person signing in between, and no more: an
  // abandoned signature holds its worst case against the dApp's caps for the whole window (issue 31; bench/README.md,
  // "Sign to inclusion": bundlers want 30 s left, the flows take ~2 s, a wallet prompt the rest).
  const defaultExpirySeconds = e.PATRON_EXPIRY_DEFAULT_SECONDS ?? 120;
  const maxExpirySeconds = e.PATRON_EXPIRY_MAX_SECONDS ?? 600;
  if (defaultExpirySeconds > maxExpirySeconds) {
    throw new ConfigError(['PATRON_EXPIRY_DEFAULT_SECONDS must not exceed PATRON_EXPIRY_MAX_SECONDS']);
  }
  const workers = e.PATRON_WORKERS ?? 1;
  const devChain = e.PATRON_DEV_CHAIN ?? !production;
  if (workers > 1 && (storage.kind !== 'postgres' || devChain)) {
    // Each worker would open its own SQLite writer and its own in-process chain: state must be shared.
    throw new ConfigError(['PATRON_WORKERS above 1 needs DATABASE_URL (PostgreSQL) and PATRON_DEV_CHAIN=false']);
  }
  const devBundler = e.PATRON_DEV_BUNDLER ?? devChain;
  if (devBundler && !devChain) {
    // The dev bundler serves the embedded chain only; a real chain has bundlers of its own.
    throw new ConfigError(['PATRON_DEV_BUNDLER=true needs the embedded dev chain (PATRON_DEV_CHAIN)']);
  }
  const fork = devChainForkSettingsFrom({ ...e, devChain });
  if (fork.problems.length > 0) throw new ConfigError(fork.problems);
  // A fork takes its chain id from the endpoint (read at start), so the check below is for the plain dev chain.
  const devChainTwice =
    devChain && fork.settings === undefined ? e.PATRON_CHAINS.findIndex((c) => c.chainId === DEV_CHAIN_ID) : -1;
  if (devChainTwice >= 0) {
    // Two chains under one id: the registry would keep one of them silently.
    throw new ConfigError([
      `PATRON_CHAINS[${devChainTwice}].chainId: ${DEV_CHAIN_ID} is the embedded dev chain's id, which runs too; set PATRON_DEV_CHAIN=false to serve another chain ${DEV_CHAIN_ID}`,
    ]);
  }
  return Object.freeze({
    port: e.PORT ?? DEFAULT_PORT,
    host: e.HOST ?? DEFAULT_HOST,
    dataDir,
    storage,
    production,
    masterKeyHex,
    publicUrl: e.PATRON_PUBLIC_URL === '' ? undefined : e.PATRON_PUBLIC_URL,
    cacheTtlMs: e.PATRON_CACHE_TTL_MS ?? 2000,
    cacheMaxEntries: e.PATRON_CACHE_MAX_ENTRIES ?? 100_000,
    gatingCacheMs: (e.PATRON_GATING_CACHE_SECONDS ?? 30) * 1000,
    maxWebhooksPerDapp: e.PATRON_MAX_WEBHOOKS_PER_DAPP ?? 10,
    allowPrivateWebhookUrls: e.PATRON_ALLOW_PRIVATE_WEBHOOKS ?? !production,
    webhookTimeoutMs: e.PATRON_WEBHOOK_TIMEOUT_MS ?? 2000,
    webhookDnsCacheMs: (e.PATRON_WEBHOOK_DNS_CACHE_SECONDS ?? 30) * 1000,
    webhookMaxResponseBytes: 64 * 1024,
    sponsorshipTokenMaxLifetimeSeconds: e.PATRON_SPONSORSHIP_TOKEN_MAX_LIFETIME_SECONDS ?? 600,
    demo: e.PATRON_DEMO ?? (!production && storage.kind === 'sqlite'),
    logLevel: e.LOG_LEVEL ?? 'info',
    bodyLimitBytes: 64 * 1024,
    workers,
    devBundler: Object.freeze({ enabled: devBundler, port: e.PATRON_DEV_BUNDLER_PORT }),
    dashboard: dashboardSettingsFrom(e),
    requestLog: requestLogSettingsFrom(e),
    rateLimits: rateLimits.config,
    settlement: settlementSettingsFrom(e),
    metrics: metrics.settings,
    solvency: solvency.settings,
    alerts: alerts.settings,
    keeper: keeper.settings,
    // No default: a gas tank pays only MEE nodes the operator named (src/mee/checkMeeQuote.ts).
    meeNodes: e.PATRON_MEE_NODES ?? [],
    meeTanks: meeTankSettingsFrom(e),
    paymaster: Object.freeze({
      devChain,
      devChainFork: fork.settings,
      chains: e.PATRON_CHAINS,
      priceRefreshSeconds: e.PATRON_PRICE_REFRESH_SECONDS ?? 30,
      // Within a block on Ethereum (12 s) and on 2 s L2s: one isSigner call per paymaster per second.
      signerCheckMs: e.PATRON_SIGNER_CHECK_MS ?? 1000,
      sponsorship: {
        defaultExpirySeconds,
        maxExpirySeconds,
        validAfterSkewSeconds: e.PATRON_VALID_AFTER_SKEW_SECONDS ?? 30,
        eip7702Delegates: e.PATRON_EIP7702_DELEGATES ?? DEFAULT_EIP7702_DELEGATES,
      },
      bounds: bounds.bounds,
      fees: {
        refreshMs: e.PATRON_FEE_REFRESH_MS ?? 2000,
        maxAgeMs: (e.PATRON_FEE_MAX_AGE_SECONDS ?? 60) * 1000,
      },
    }),
  });
}
