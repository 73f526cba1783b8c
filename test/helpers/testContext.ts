import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { createApp } from '../../src/app.js';
import type { ChainRuntime } from '../../src/chain/chainRegistry.js';
import { type Config, loadConfig } from '../../src/config/config.js';
import { NO_CALLER_RESTRICTIONS } from '../../src/dappSettings/callerRestrictions.js';
import { createDeps, type Deps } from '../../src/deps.js';
import type { EventDeliveryTuning } from '../../src/lifecycleEvents/buildLifecycleEvents.js';
import { createLogger } from '../../src/logger.js';
import type { MeeTankSources } from '../../src/mee/buildMeeTanks.js';
import type { PaymasterSigner } from '../../src/paymaster/signer/paymasterSigner.js';
import { openStore, type Store } from '../../src/store/store.js';
import type { ChainTokenSettings } from '../../src/tokens/tokenCatalog.js';
import type { HostResolver } from '../../src/webhooks/webhookUrlPolicy.js';

/**
 * Shared test setup. The back end is chosen by PATRON_TEST_DATABASE_URL: unset, every context gets a fresh
 * in-memory SQLite database; set, every context gets a fresh PostgreSQL schema in that database. CI runs the
 * whole suite once each way.
 */
export const TEST_DATABASE_URL = process.env.PATRON_TEST_DATABASE_URL;
export const BACKEND: 'sqlite' | 'postgres' = TEST_DATABASE_URL ? 'postgres' : 'sqlite';

export const TEST_MASTER_KEY = Buffer.alloc(32, 7);
/** The paymaster signer of test contexts (a fixed key: nothing is ever worth anything on test chains). */
export const TEST_SIGNER_KEY = new Uint8Array(32).fill(9);

/**
 * Budgets no test meets by accident: the suite sends thousands of requests from 127.0.0.1 within seconds
 * (sign-in lock-out tests alone make dozens of attempts per email), and the limiter counts in real time, not
 * by a test's clock. The rate-limit tests set their own, low budgets (test/rateLimits.test.ts).
 */
const UNMET = { points: 100_000_000, windowSeconds: 1 };
export const TEST_RATE_LIMITS = JSON.stringify({
  calls: { perKey: UNMET, perIp: UNMET },
  simulations: { perKey: UNMET, perIp: UNMET },
  webhookCalls: { perKey: UNMET, perIp: UNMET },
  signIn: { perIp: UNMET, perEmail: UNMET },
  http: { perIp: UNMET },
  admin: { perAccount: UNMET },
  devChain: { perIp: UNMET },
});

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({
      PATRON_DATA_DIR: '/nonexistent-patron-test',
      LOG_LEVEL: 'silent',
      PATRON_DEV_CHAIN: 'false',
      PATRON_RATE_LIMITS: TEST_RATE_LIMITS,
      // Settlement rounds run when a test asks (deps.settlement.runOnce()), never racing its own checks.
      PATRON_SETTLEMENT_POLL_MS: '600000',
    }),
    ...overrides,
  };
}

/** Opens a fresh, migrated store on the configured back end. `schema` reopens an existing PostgreSQL schema. */
export async function openTestStore(
  args: { schema?: string; poolSize?: number } = {},
): Promise<{ store: Store; schema: string | undefined }> {
  if (TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '') {
    return { store: await openStore({ storage: { kind: 'sqlite-memory' } }), schema: undefined };
  }
  const schema = args.schema ?? `t_${randomBytes(6).toString('hex')}`;
  const store = await openStore({
    storage: { kind: 'postgres', url: TEST_DATABASE_URL, poolSize: args.poolSize ?? 10 },
    pgSchema: schema,
  });
  return { store, schema };
}

export async function dropTestSchema(schema: string | undefined): Promise<void> {
  if (schema === undefined || TEST_DATABASE_URL === undefined) return;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

export interface TestContext {
  readonly app: FastifyInstance;
  readonly deps: Deps;
  /** PostgreSQL schema of this context (undefined on SQLite), to open a second instance on the same data. */
  readonly schema: string | undefined;
  close(): Promise<void>;
}

/** Default resolver for tests: no DNS; maps a few names so the production-mode SSRF guard can be exercised. */
export const fakeResolver: HostResolver = async (host) => {
  const table: Record<string, string[]> = {
    'hooks.example.com': ['93.184.215.14'],
    'internal.example.com': ['10.1.2.3'],
    'mixed.example.com': ['93.184.215.14', '127.0.0.1'],
    'metadata.example.com': ['169.254.169.254'],
    'v6.example.com': ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'v6-private.example.com': ['fd00:ec2::254'],
  };
  const found = table[host];
  if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};

export async function createTestContext(
  args: {
    config?: Partial<Config>;
    resolver?: HostResolver;
    poolSize?: number;
    chains?: readonly ChainRuntime[];
    tokenChains?: readonly ChainTokenSettings[];
    /** The chains dApps may list; by default the given chains', or the dev chain's id when none are given. */
    servedChainIds?: readonly number[];
    signerKey?: Uint8Array;
    /** A signer the test opened (the PKCS#11 and KMS back ends), instead of a key; the test closes it. */
    signer?: PaymasterSigner;
    /** A clock of the test's own (sessions, lock-out, request log times). */
    now?: () => number;
    /** The lifecycle events' delivery pace (`intervalMs: 0`: rounds only by deliverer.runOnce()). */
    eventDelivery?: EventDeliveryTuning;
    /** The MEE gas tanks and their spend, instead of none. */
    meeTanks?: MeeTankSources;
  } = {},
): Promise<TestContext> {
  const { store, schema } = await openTestStore({
    ...(args.poolSize === undefined ? {} : { poolSize: args.poolSize }),
  });
  const config = testConfig(args.config);
  const deps = await createDeps(config, createLogger({ level: 'silent' }), {
    store,
    masterKey: TEST_MASTER_KEY,
    ...(args.signer === undefined ? { signerKey: args.signerKey ?? TEST_SIGNER_KEY } : { signer: args.signer }),
    resolver: args.resolver ?? fakeResolver,
    ...(args.chains === undefined ? {} : { chains: args.chains }),
    ...(args.tokenChains === undefined ? {} : { tokenChains: args.tokenChains }),
    ...(args.servedChainIds !== undefined
      ? { servedChainIds: args.servedChainIds }
      : args.chains === undefined
        ? { servedChainIds: [31337] }
        : {}),
    ...(args.now === undefined ? {} : { now: args.now }),
    ...(args.eventDelivery === undefined ? {} : { eventDelivery: args.eventDelivery }),
    ...(args.meeTanks === undefined ? {} : { meeTanks: args.meeTanks }),
  });
  const app = createApp(deps);
  await app.ready();
  return {
    app,
    deps,
    schema,
    async close() {
      await app.close();
      await deps.close();
      await dropTestSchema(schema);
    },
  };
}

/**
 * A second service instance on a PostgreSQL context's schema, with its own pool, store, deps and app: another process
 * behind the balancer, as far as the database can tell. Not listening; `close` stops it (the schema stays `ctx`'s).
 */
export async function openSecondInstance(
  ctx: TestContext,
  args: { chains: readonly ChainRuntime[]; signerKey: Uint8Array },
): Promise<{ app: FastifyInstance; deps: Deps; close(): Promise<void> }> {
  if (ctx.schema === undefined) throw new Error('a second instance needs PostgreSQL (PATRON_TEST_DATABASE_URL)');
  const { store } = await openTestStore({ schema: ctx.schema, poolSize: 5 });
  const deps = await createDeps(ctx.deps.config, createLogger({ level: 'silent' }), {
    store,
    masterKey: TEST_MASTER_KEY,
    resolver: fakeResolver,
    chains: args.chains,
    signerKey: args.signerKey,
  });
  const app = createApp(deps);
  return {
    app,
    deps,
    async close() {
      await app.close();
      await deps.close();
    },
  };
}

export interface Tenant {
  readonly accountId: string;
  readonly email: string;
  readonly authToken: string;
  readonly dappId: string;
  readonly apiKey: string;
}

/** An account with one auth token and one dApp (on chain 31337 unless `chainId` says), through the domain service. */
export async function createTenant(
  deps: Deps,
  email = `owner-${randomBytes(4).toString('hex')}@example.com`,
  chainId = 31337,
): Promise<Tenant> {
  const account = await deps.accounts.createAccount({ email });
  const { secret } = await deps.accounts.createToken({ accountId: account.id, name: 'test' });
  const dapp = await deps.accounts.createDapp({ accountId: account.id, name: 'Test dApp', chainIds: [chainId] });
  return { accountId: account.id, email: account.email, authToken: secret, dappId: dapp.id, apiKey: dapp.apiKey };
}

/** A guarantee cap for tests whose flow batches its approval (mode 2), far above what they sign: 1 ETH a day. */
export const TEST_GUARANTEE_CAP = { limitWei: '1000000000000000000', resets: 'daily' } as const;

/**
 * The dApp's owner turns token guarantees on (off by default, docs/guides/token-mode.md): what a test of a flow that
 * batches its approval does first, as the dApp's choice.
 */
export async function enableTokenGuarantees(
  deps: Deps,
  tenant: Pick<Tenant, 'accountId' | 'dappId'>,
  cap: {
    readonly limitWei: string;
    readonly resets: 'hourly' | 'daily' | 'weekly' | 'monthly' | 'never';
  } = TEST_GUARANTEE_CAP,
): Promise<void> {
  await deps.accounts.setDappTokenGuarantees({
    accountId: tenant.accountId,
    dappId: tenant.dappId,
    guarantees: { enabled: true, cap },
  });
}

/**
 * Turns the dApp's hold shares off (its operator limits: bounds.holdSharePerCallerPercent and
 * holdSharePerSenderPercent at 100), for a test of caps alone whose single client IP (127.0.0.1) plays every user of
 * a small cap: with the default shares, one caller holds at most a tenth of a busy cap (test/policies.holds.*).
 */
export async function withoutHoldShares(deps: Deps, dappId: string): Promise<void> {
  await deps.accounts.setDappLimits({
    dappId,
    limits: { bounds: { holdSharePerCallerPercent: 100, holdSharePerSenderPercent: 100 } },
  });
}

/**
 * An account and a dApp row written straight through the repositories, for store-level tests that need a dApp
 * to hang rows on (no API key that works: its hash is random). Returns the dApp's id.
 */
export async function insertBareDapp(store: Store, name = 'bare'): Promise<string> {
  const accountId = randomUUID();
  await store.accounts.create({ id: accountId, email: `${accountId}@example.com`, createdAt: Date.now() });
  const id = randomUUID();
  await store.dapps.insert({
    id,
    accountId,
    name,
    chainIds: [31337],
    apiKeyHash: randomUUID(),
    apiKeyPrefix: 'pk.bare',
    apiKeyCiphertext: 'x',
    limits: {},
    restrictions: NO_CALLER_RESTRICTIONS,
    createdAt: Date.now(),
    updatedAt: Date.now(),
  });
  return id;
}

export const WEBHOOK_PATH = '/api/v2/public/sdk/webhookParameters';

export function webhookHeaders(t: Pick<Tenant, 'authToken' | 'apiKey'>): Record<string, string> {
  return { authToken: t.authToken, apiKey: t.apiKey };
}
