import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { hexToBytes } from 'viem';
import { hashSecret } from '../src/accounts/credentials.js';
import { applyRateLimitsOverride, type RateLimitsOverride } from '../src/config/rateLimitSettings.js';
import type { Store } from '../src/store/store.js';
import { fixtureChainRuntime, KEYS, type PatronFixture, startPatronFixture } from './helpers/patronPaymasterV06.js';
import {
  BACKEND,
  createTenant,
  createTestContext,
  openSecondInstance,
  type Tenant,
  testConfig,
} from './helpers/testContext.js';

/**
 * Issue 31: every request on the paymaster URL is counted per client IP before any work (the body read or parsed,
 * the API key looked up), the attacker's way: the app listens on 127.0.0.1 behind a trusted proxy (loopback), so
 * each request names its client in X-Forwarded-For; store lookups are counted on the real store.
 */
let fx: PatronFixture;
const closers: (() => Promise<void>)[] = [];
before(async () => {
  fx = await startPatronFixture();
});
after(async () => {
  for (const close of closers.reverse()) await close();
  await fx.close();
});

const budget = (points: number) => ({ points, windowSeconds: 60 });

interface Instance {
  readonly url: string;
  /** The key hashes this instance's store was asked for (accountService.resolveApiKey on a miss). */
  readonly keyLookups: string[];
}

/** The hashes a store is asked for, counted on the store itself: the real query still runs. */
function countKeyLookups(store: Store): string[] {
  const seen: string[] = [];
  const find = store.dapps.findByApiKeyHash.bind(store.dapps);
  store.dapps.findByApiKeyHash = (hash) => {
    seen.push(hash);
    return find(hash);
  };
  return seen;
}

async function listen(app: FastifyInstance, keyLookups: string[]): Promise<Instance> {
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, keyLookups };
}

/** A Patron on the fixture's chain with `override`'s budgets, listening; `database`: the counts in PostgreSQL. */
async function start(
  override: RateLimitsOverride,
  options: { store?: 'memory' | 'database' } = {},
): Promise<{ one: Instance; tenant: Tenant; second: () => Promise<Instance> }> {
  const ctx = await createTestContext({
    chains: [fixtureChainRuntime(fx)],
    signerKey: hexToBytes(KEYS.signer),
    config: {
      rateLimits: {
        settings: applyRateLimitsOverride(testConfig().rateLimits.settings, override),
        store: options.store ?? 'memory',
        trustedProxies: ['loopback'],
      },
    },
  });
  closers.push(() => ctx.close());
  const tenant = await createTenant(ctx.deps);
  const one = await listen(ctx.app, countKeyLookups(ctx.deps.store));
  // A second process on the same database (its own pool and store, like another instance behind the balancer).
  const second = async () => {
    const other = await openSecondInstance(ctx, {
      chains: [fixtureChainRuntime(fx)],
      signerKey: hexToBytes(KEYS.signer),
    });
    closers.push(other.close);
    return listen(other.app, countKeyLookups(other.deps.store));
  };
  return { one, tenant, second };
}

/** A key of the right shape that no dApp has. */
const madeUpKey = () => `pk.${randomBytes(33).toString('base64url').replace(/[-_]/g, 'x').slice(0, 33)}`;
const ORIGIN = 'https://app.example.com';

function send(
  at: Instance,
  args: { method?: string; path: string; client: string; body?: string; origin?: string },
): Promise<Response> {
  const headers: Record<string, string> = { 'x-forwarded-for': args.client };
  if (args.origin !== undefined) headers.origin = args.origin;
  if (args.method === 'OPTIONS') headers['access-control-request-method'] = 'POST';
  else headers['content-type'] = 'application/json';
  return fetch(`${at.url}${args.path}`, {
    method: args.method ?? 'POST',
    headers,
    ...(args.body === undefined ? {} : { body: args.body }),
  });
}

const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'pm_supportedEntryPoints', params: [] });
const callBody = (id = 1) => JSON.stringify(call(id));
const path = (apiKey: string) => `/api/v1/${fx.chain.chainId}/${apiKey}`;

async function assertRefusedPost(res: Response, origin?: string): Promise<void> {
  assert.equal(res.status, 429);
  assert.ok(Number(res.headers.get('retry-after')) >= 1);
  const body = (await res.json()) as { id: unknown; error: { code: number; data: { limit: string } } };
  assert.equal(body.id, null);
  assert.equal(body.error.code, -32005);
  assert.equal(body.error.data.limit, 'calls.perIp');
  // The refusal says nothing about the key's dApp, so a browser at any origin may read it and its Retry-After.
  assert.equal(res.headers.get('access-control-allow-origin'), origin ?? null);
  assert.equal(res.headers.get('access-control-expose-headers'), origin === undefined ? null : 'Retry-After');
}

describe('every request on the paymaster URL is counted per IP before any work', () => {
  test('a preflight flood with made-up keys is refused after the budget, without a lookup; other IPs pass', async () => {
    const { one, tenant } = await start({ calls: { perIp: budget(5) } });
    const flood = await Promise.all(
      Array.from({ length: 40 }, () =>
        send(one, { method: 'OPTIONS', path: path(madeUpKey()), client: '198.51.100.1', origin: ORIGIN }),
      ),
    );
    assert.equal(flood.filter((r) => r.status === 204).length, 5);
    const refused = flood.filter((r) => r.status === 429);
    assert.equal(refused.length, 35);
    for (const r of refused) {
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
      assert.equal(r.headers.get('access-control-allow-origin'), null, 'a bare 429');
      assert.equal(await r.text(), '');
    }
    assert.equal(one.keyLookups.length, 5, 'only the admitted preflights looked their key up');
    // The same budget as the calls: the flooding IP's call is refused too; another IP's passes.
    await assertRefusedPost(await send(one, { path: path(tenant.apiKey), client: '198.51.100.1', body: callBody() }));
    const legit = await send(one, { path: path(tenant.apiKey), client: '198.51.100.2', body: callBody() });
    assert.equal(legit.status, 200, await legit.clone().text());
    assert.equal(((await legit.json()) as { result: unknown[] }).result[0], fx.entryPoint);
  });

  test('unparsable, oversized and misaddressed requests are counted; past the budget none is read or looked up', async () => {
    const { one, tenant } = await start({ calls: { perIp: budget(6) } });
    const client = '198.51.100.3';
    const answers = [
      await send(one, { path: path(tenant.apiKey), client, body: '{not json', origin: ORIGIN }),
      await send(one, { path: path(tenant.apiKey), client, body: 'x'.repeat(600 * 1024) }),
      await send(one, { path: `/api/v1/nochain/${tenant.apiKey}`, client, body: callBody() }),
      await send(one, { path: path(tenant.apiKey), client, body: '[]' }),
      await send(one, { method: 'GET', path: path(tenant.apiKey), client }),
      await send(one, { path: path(madeUpKey()), client, body: callBody() }),
    ];
    assert.deepEqual(
      answers.map((r) => r.status),
      [400, 413, 400, 400, 405, 401],
    );
    const lookupsBefore = one.keyLookups.length;
    for (let i = 0; i < 20; i++) {
      await assertRefusedPost(
        await send(one, { path: path(tenant.apiKey), client, body: '{not json', origin: ORIGIN }),
        ORIGIN,
      );
    }
    await assertRefusedPost(await send(one, { path: path(madeUpKey()), client, body: callBody() }));
    // The one exception: a URL the router cannot read is answered before any hook, with no lookup (app.ts).
    assert.equal((await send(one, { path: '/api/v1/1/%zz', client, body: callBody() })).status, 400);
    assert.equal(one.keyLookups.length, lookupsBefore, 'a refused request looks no key up, not even for CORS');
  });

  test('a batch of N calls spends N: the request pays for its first call, not one more', async () => {
    const { one, tenant } = await start({ calls: { perIp: budget(4) } });
    const client = '198.51.100.4';
    const batch = (ids: number[]) =>
      send(one, { path: path(tenant.apiKey), client, body: JSON.stringify(ids.map(call)) });
    const first = (await (await batch([1, 2, 3, 4])).json()) as { result?: unknown }[];
    assert.equal(first.filter((a) => a.result !== undefined).length, 4, 'a batch of 4 fits a budget of 4');
    await assertRefusedPost(await batch([5, 6]));
    // An attacker's batch from a fresh IP: each call past the budget is refused on its own.
    const other = await send(one, {
      path: path(madeUpKey()),
      client: '198.51.100.5',
      body: JSON.stringify([1, 2, 3, 4, 5, 6].map(call)),
    });
    const codes = ((await other.json()) as { error: { code: number } }[]).map((a) => a.error.code);
    assert.deepEqual(codes, [-32001, -32001, -32001, -32001, -32005, -32005]);
    assert.ok(Number(other.headers.get('retry-after')) >= 1);
  });

  test("an admitted call refused by the dApp's own budget: its allowed origin reads the 429 and its Retry-After", async () => {
    const { one, tenant } = await start({ calls: { perKey: budget(1) } });
    const post = () =>
      send(one, { path: path(tenant.apiKey), client: '198.51.100.11', body: callBody(), origin: ORIGIN });
    assert.equal((await post()).status, 200);
    const res = await post();
    assert.equal(res.status, 429);
    assert.equal(((await res.json()) as { error: { data: { limit: string } } }).error.data.limit, 'calls.perKey');
    assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN);
    assert.equal(res.headers.get('access-control-expose-headers'), 'Retry-After');
    assert.equal(one.keyLookups.length, 1, 'one lookup, for the calls and the CORS answer alike');
  });

  test('an unknown key is looked up once per request and never kept (test/credentialCaches.unknown.test.ts: no eviction)', async () => {
    const { one } = await start({});
    const client = '198.51.100.7';
    const key = madeUpKey();
    for (let i = 0; i < 3; i++) {
      const res = await send(one, { path: path(key), client, body: callBody(), origin: ORIGIN });
      assert.equal(res.status, 401);
    }
    assert.equal(one.keyLookups.filter((h) => h === hashSecret(key)).length, 3, 'one lookup each: nothing was kept');
    // A key that cannot be one is refused before any lookup.
    const before = one.keyLookups.length;
    assert.equal((await send(one, { path: path('pk.nope'), client, body: callBody() })).status, 401);
    assert.equal(one.keyLookups.length, before);
  });

  test('two instances on one PostgreSQL share the per-IP count: the flood is refused across both', {
    skip: BACKEND !== 'postgres' && 'needs PATRON_TEST_DATABASE_URL (SQLite runs one process, counted in memory)',
  }, async () => {
    const { one, tenant, second } = await start({ calls: { perIp: budget(10) } }, { store: 'database' });
    const two = await second();
    const client = '198.51.100.8';
    const flood = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 3 === 0
          ? send(i % 2 ? one : two, { method: 'OPTIONS', path: path(madeUpKey()), client, origin: ORIGIN })
          : send(i % 2 ? one : two, { path: path(tenant.apiKey), client, body: '{not json' }),
      ),
    );
    assert.equal(flood.filter((r) => r.status !== 429).length, 10, 'exactly the budget, however it was spread');
    assert.equal(flood.filter((r) => r.status === 429).length, 50);
    await assertRefusedPost(await send(one, { path: path(tenant.apiKey), client, body: callBody() }));
    await assertRefusedPost(await send(two, { path: path(tenant.apiKey), client, body: callBody() }));
    const legit = await send(two, { path: path(tenant.apiKey), client: '198.51.100.9', body: callBody() });
    assert.equal(legit.status, 200, await legit.text());
  });
});
