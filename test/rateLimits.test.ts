import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { hexToBytes, toHex } from 'viem';
import { applyRateLimitsOverride, type RateLimitsOverride } from '../src/config/rateLimitSettings.js';
import { LOCAL_ORIGIN } from './helpers/dashboardSession.js';
import {
  buildDeployingOp,
  COUNTER_ADDRESS,
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  startPatronFixture,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp } from './helpers/rpcFixture.js';
import { hexWire, newSimpleAccountOp } from './helpers/rpcV07.js';
import {
  BACKEND,
  createTenant,
  createTestContext,
  openSecondInstance,
  type Tenant,
  type TestContext,
  testConfig,
  WEBHOOK_PATH,
  webhookHeaders,
} from './helpers/testContext.js';
import { answer, type Receiver, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The rate limits through the app (inject, with the client address set per request), each with a budget low
 * enough to reach: the answer (429, Retry-After, the route's envelope), what is counted, and that the work
 * behind a refused call (a simulation, a webhook call, a scrypt) is not done.
 */
let fx: PatronFixture;
const contexts: TestContext[] = [];
before(async () => {
  fx = await startPatronFixture();
});
after(async () => {
  for (const c of contexts) await c.close();
  await fx.close();
});

const budget = (points: number) => ({ points, windowSeconds: 60 });
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

/** patron_rate_limited_total's value for `limit` on this instance's /metrics (undefined: no such series). */
async function rateLimitedCount(ctx: TestContext, limit: string): Promise<number | undefined> {
  const res = await ctx.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  const line = res.body.split('\n').find((l) => l.startsWith(`patron_rate_limited_total{limit="${limit}"}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

async function limited(
  override: RateLimitsOverride,
  options: { trustedProxies?: string[]; store?: 'memory' | 'database' } = {},
): Promise<{ ctx: TestContext; tenant: Tenant }> {
  const base = testConfig().rateLimits;
  const ctx = await createTestContext({
    chains: [fixtureChainRuntime(fx)],
    signerKey: hexToBytes(KEYS.signer),
    config: {
      metrics: { enabled: true, port: undefined, host: '127.0.0.1', token: METRICS_TOKEN },
      rateLimits: {
        settings: applyRateLimitsOverride(base.settings, override),
        store: options.store ?? 'memory',
        trustedProxies: options.trustedProxies ?? [],
      },
    },
  });
  contexts.push(ctx);
  return { ctx, tenant: await createTenant(ctx.deps) };
}

const wire = biconomyWireOp;

const sponsoredCall = async (id: number, calculateGasLimits = false) => ({
  jsonrpc: '2.0',
  id,
  method: 'pm_sponsorUserOperation',
  params: [
    wire(await buildDeployingOp(fx, BigInt(id)), !calculateGasLimits),
    { mode: 'SPONSORED', calculateGasLimits },
  ],
});

interface RpcBody {
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: { limit?: string; retryAfterSeconds?: number } };
}

async function rpc(ctx: TestContext, tenant: Tenant, body: unknown, remoteAddress = '203.0.113.10') {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/${fx.chain.chainId}/${tenant.apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(body),
    remoteAddress,
  });
  return { status: res.statusCode, retryAfter: res.headers['retry-after'], body: res.json() as RpcBody | RpcBody[] };
}

function assertLimited(r: { status: number; retryAfter: unknown; body: RpcBody | RpcBody[] }, limit: string) {
  assert.equal(r.status, 429, JSON.stringify(r.body));
  assert.ok(Number(r.retryAfter) >= 1 && Number(r.retryAfter) <= 60, String(r.retryAfter));
  const b = r.body as RpcBody;
  assert.equal(b.error?.code, -32005);
  assert.equal(b.error?.data?.limit, limit);
  assert.match(b.error?.message ?? '', /^Rate limit exceeded: too many .+; retry in \d+ s$/);
}

describe('paymaster calls', () => {
  test('per client IP: over the budget → 429, -32005, Retry-After; another IP is not affected; unknown keys spend it too', async () => {
    const { ctx, tenant } = await limited({ calls: { perIp: budget(3) } });
    const unknown = { ...tenant, apiKey: `${tenant.apiKey.slice(0, -4)}zzzz` };
    assert.equal((await rpc(ctx, unknown, await sponsoredCall(1))).status, 401);
    for (let i = 2; i <= 3; i++) assert.equal((await rpc(ctx, tenant, await sponsoredCall(i))).status, 200);
    assertLimited(await rpc(ctx, tenant, await sponsoredCall(4)), 'calls.perIp');
    assert.equal((await rpc(ctx, tenant, await sponsoredCall(5), '198.51.100.7')).status, 200);
  });

  test('every call of a batch counts: a batch of 5 against 3 left → 3 answered, 2 refused with -32005', async () => {
    const { ctx, tenant } = await limited({ calls: { perIp: budget(3) } });
    const batch = await Promise.all([11, 12, 13, 14, 15].map((id) => sponsoredCall(id)));
    const r = await rpc(ctx, tenant, batch);
    assert.equal(r.status, 200);
    assert.ok(Number(r.retryAfter) >= 1);
    const answers = r.body as RpcBody[];
    assert.equal(answers.filter((a) => a.result !== undefined).length, 3);
    assert.deepEqual(
      answers.filter((a) => a.error !== undefined).map((a) => [a.error?.code, a.error?.data?.limit]),
      [
        [-32005, 'calls.perIp'],
        [-32005, 'calls.perIp'],
      ],
    );
    // The refusals are counted per limit for the operator (Prometheus), not only answered.
    assert.equal(await rateLimitedCount(ctx, 'calls.perIp'), 2);
    assert.equal(await rateLimitedCount(ctx, 'calls.perKey'), undefined);
  });

  test('per API key, whatever the IP; a per-dApp override raises it for that dApp only', async () => {
    const { ctx, tenant } = await limited({ calls: { perKey: budget(2) } });
    assert.equal((await rpc(ctx, tenant, await sponsoredCall(21), '198.51.100.1')).status, 200);
    assert.equal((await rpc(ctx, tenant, await sponsoredCall(22), '198.51.100.2')).status, 200);
    assertLimited(await rpc(ctx, tenant, await sponsoredCall(23), '198.51.100.3'), 'calls.perKey');

    const raised = await createTenant(ctx.deps);
    await ctx.deps.accounts.setDappLimits({
      dappId: raised.dappId,
      limits: { rateLimits: { calls: { perKey: budget(4) } } },
    });
    for (let i = 0; i < 4; i++) {
      assert.equal((await rpc(ctx, raised, await sponsoredCall(30 + i), `198.51.100.${10 + i}`)).status, 200);
    }
    assertLimited(await rpc(ctx, raised, await sponsoredCall(35), '198.51.100.20'), 'calls.perKey');
  });

  test('simulations have a lower budget: over it a simulated call is refused, a call with its own limits is not', async () => {
    const { ctx, tenant } = await limited({ simulations: { perKey: budget(1) } });
    const first = await rpc(ctx, tenant, await sponsoredCall(41, true));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assertLimited(await rpc(ctx, tenant, await sponsoredCall(42, true), '198.51.100.9'), 'simulations.perKey');
    assert.equal((await rpc(ctx, tenant, await sponsoredCall(43, false))).status, 200);
  });

  test('each simulation counts: an EntryPoint v0.7 estimate runs three side by side and spends three', async () => {
    const { ctx, tenant } = await limited({ simulations: { perKey: budget(4) } });
    const v07Call = async (id: number) => {
      const { op } = await newSimpleAccountOp(fx, '0.7', [{ to: COUNTER_ADDRESS, data: '0x01' }]);
      return {
        jsonrpc: '2.0',
        id,
        method: 'pm_getPaymasterData',
        params: [hexWire(op), fx.entryPoints['0.7'], toHex(fx.chain.chainId), { calculateGasLimits: true }],
      };
    };
    const first = await rpc(ctx, tenant, await v07Call(45));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    // 1 left: a v0.6 estimate (one simulation) fits; then another v0.7 one does not (counted as one, it would).
    assert.equal((await rpc(ctx, tenant, await sponsoredCall(46, true))).status, 200);
    assertLimited(await rpc(ctx, tenant, await v07Call(47), '198.51.100.9'), 'simulations.perKey');
  });

  test('a batch of 20 simulations against a per-IP budget of 5: 5 are simulated', async () => {
    const { ctx, tenant } = await limited({ simulations: { perIp: budget(5) } });
    const batch = await Promise.all(Array.from({ length: 20 }, (_, i) => sponsoredCall(50 + i, true)));
    const answers = (await rpc(ctx, tenant, batch)).body as RpcBody[];
    assert.equal(answers.filter((a) => a.result !== undefined).length, 5);
    assert.equal(answers.filter((a) => a.error?.data?.limit === 'simulations.perIp').length, 15);
  });

  describe('webhook calls', () => {
    let receiver: Receiver;
    before(async () => {
      receiver = await startReceiver(answer({ arePoliciesVerified: true }));
    });
    after(() => receiver.close());

    test('each webhook call counts: 2 webhooks against a budget of 3 → the second request is refused before any call', async () => {
      const { ctx, tenant } = await limited({ webhookCalls: { perKey: budget(3) } });
      for (const path of ['/a', '/b']) {
        const res = await ctx.app.inject({
          method: 'POST',
          url: WEBHOOK_PATH,
          headers: webhookHeaders(tenant),
          payload: { webhookUrl: receiver.url(path), requestType: 'POST' },
        });
        assert.equal(res.statusCode, 200, res.body);
      }
      const before = receiver.requests.length;
      assert.equal((await rpc(ctx, tenant, await sponsoredCall(71))).status, 200);
      assert.equal(receiver.requests.length, before + 2);
      assertLimited(await rpc(ctx, tenant, await sponsoredCall(72)), 'webhookCalls.perKey');
      assert.equal(receiver.requests.length, before + 2, 'no webhook was called for the refused request');
    });
  });
});

describe('REST routes', () => {
  const get = (ctx: TestContext, url: string, remoteAddress: string, headers: Record<string, string> = {}) =>
    ctx.app.inject({ method: 'GET', url, remoteAddress, headers });

  test('every unauthenticated request spends its IP budget: 429 in the REST envelope with Retry-After', async () => {
    const { ctx } = await limited({ http: { perIp: budget(3) } });
    for (const url of ['/healthz', '/openapi.json', '/api/chains']) {
      assert.notEqual((await get(ctx, url, '203.0.113.1')).statusCode, 429);
    }
    const res = await get(ctx, '/healthz', '203.0.113.1');
    assert.equal(res.statusCode, 429);
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.deepEqual(res.json(), {
      statusCode: 429,
      message: `Rate limit exceeded: too many requests from this IP; retry in ${res.headers['retry-after']} s`,
    });
    // Wrong credentials spend it too, and another IP has its own.
    assert.equal((await get(ctx, WEBHOOK_PATH, '203.0.113.1', { authToken: 'x', apiKey: 'y' })).statusCode, 429);
    assert.equal((await get(ctx, '/healthz', '203.0.113.2')).statusCode, 200);
  });

  test('the admin API per account: over its budget the account is refused from any IP', async () => {
    const { ctx, tenant } = await limited({ admin: { perAccount: budget(2) } });
    const auth = { authorization: `Bearer ${tenant.authToken}` };
    assert.equal((await get(ctx, '/api/admin/dapps', '203.0.113.3', auth)).statusCode, 200);
    assert.equal((await get(ctx, '/api/admin/dapps', '203.0.113.4', auth)).statusCode, 200);
    const res = await get(ctx, '/api/admin/dapps', '203.0.113.5', auth);
    assert.equal(res.statusCode, 429);
    assert.match(res.json().message, /^Rate limit exceeded: too many admin requests for this account/);
    const other = await createTenant(ctx.deps);
    const theirs = { authorization: `Bearer ${other.authToken}` };
    assert.equal((await get(ctx, '/api/admin/dapps', '203.0.113.5', theirs)).statusCode, 200);
  });

  test('sign-in per IP: refused before the password is checked (the attempt is not even counted)', async () => {
    const { ctx } = await limited({ signIn: { perIp: budget(2) } });
    const attempt = (email: string) =>
      ctx.app.inject({
        method: 'POST',
        url: '/api/admin/session',
        headers: { origin: LOCAL_ORIGIN },
        payload: { email, password: 'wrong password!!' },
        remoteAddress: '203.0.113.6',
      });
    assert.equal((await attempt(`a-${randomUUID()}@example.com`)).statusCode, 401);
    assert.equal((await attempt(`b-${randomUUID()}@example.com`)).statusCode, 401);
    const third = `c-${randomUUID()}@example.com`;
    const res = await attempt(third);
    assert.equal(res.statusCode, 429);
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.match(res.json().message, /^Rate limit exceeded: too many sign-in attempts from this IP/);
    assert.deepEqual(await ctx.deps.store.sessions.loginFailuresSince({ email: third, since: 0 }), []);
  });

  test('sign-in per email, from any IP', async () => {
    const { ctx } = await limited({ signIn: { perEmail: budget(2) } });
    const email = `d-${randomUUID()}@example.com`;
    const attempt = (ip: string) =>
      ctx.app.inject({
        method: 'POST',
        url: '/api/admin/session',
        headers: { origin: LOCAL_ORIGIN },
        payload: { email: email.toUpperCase(), password: 'wrong password!!' },
        remoteAddress: ip,
      });
    assert.equal((await attempt('203.0.113.7')).statusCode, 401);
    assert.equal((await attempt('203.0.113.8')).statusCode, 401);
    assert.match((await attempt('203.0.113.9')).json().message, /too many sign-in attempts for this email/);
  });

  test('the dev chain RPC answers its limit in the JSON-RPC envelope', async () => {
    const { ctx } = await limited({ devChain: { perIp: budget(1) } });
    const call = () =>
      ctx.app.inject({
        method: 'POST',
        url: `/chain/${fx.chain.chainId}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        remoteAddress: '203.0.113.11',
      });
    assert.notEqual((await call()).statusCode, 429);
    const res = await call();
    assert.equal(res.statusCode, 429);
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal(res.json().jsonrpc, '2.0');
    assert.equal(res.json().error.code, -32005);
    assert.equal(res.json().error.data.limit, 'devChain.perIp');
  });
});

describe('the client IP behind a proxy', () => {
  const viaProxy = (ctx: TestContext, forwardedFor: string) =>
    ctx.app.inject({
      method: 'GET',
      url: '/healthz',
      remoteAddress: '10.0.0.2',
      headers: { 'x-forwarded-for': forwardedFor },
    });

  test('no trusted proxy (the default): X-Forwarded-For is ignored, the peer address is counted', async () => {
    const { ctx } = await limited({ http: { perIp: budget(2) } });
    assert.equal((await viaProxy(ctx, '198.51.100.1')).statusCode, 200);
    assert.equal((await viaProxy(ctx, '198.51.100.2')).statusCode, 200);
    assert.equal((await viaProxy(ctx, '198.51.100.3')).statusCode, 429, 'a forged header does not reset the count');
  });

  test('a trusted proxy: each forwarded client has its own count', async () => {
    const { ctx } = await limited({ http: { perIp: budget(2) } }, { trustedProxies: ['10.0.0.0/8'] });
    assert.equal((await viaProxy(ctx, '198.51.100.1')).statusCode, 200);
    assert.equal((await viaProxy(ctx, '198.51.100.1')).statusCode, 200);
    assert.equal((await viaProxy(ctx, '198.51.100.1')).statusCode, 429);
    assert.equal((await viaProxy(ctx, '198.51.100.2')).statusCode, 200);
  });
});

test('two service instances on one PostgreSQL database share the counts', {
  skip: BACKEND !== 'postgres' && 'needs PATRON_TEST_DATABASE_URL (SQLite runs one process, counted in memory)',
}, async () => {
  const { ctx, tenant } = await limited({ calls: { perKey: budget(5) } }, { store: 'database' });
  const second = await openSecondInstance(ctx, {
    chains: [fixtureChainRuntime(fx)],
    signerKey: hexToBytes(KEYS.signer),
  });
  try {
    const other: TestContext = { ...ctx, app: second.app, deps: second.deps };
    const results = await Promise.all(
      Array.from({ length: 12 }, async (_, i) =>
        rpc(i % 2 ? ctx : other, tenant, await sponsoredCall(80 + i), `198.51.100.${30 + i}`),
      ),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 5);
    assert.equal(results.filter((r) => r.status === 429).length, 7);
  } finally {
    await second.close();
  }
});
