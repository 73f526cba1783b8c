import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  createTenant,
  createTestContext,
  TEST_MASTER_KEY,
  type Tenant,
  type TestContext,
  WEBHOOK_PATH,
  webhookHeaders,
} from './helpers/testContext.js';

const INVALID = { statusCode: 401, message: 'Invalid auth token or API key' };

let ctx: TestContext;
let alice: Tenant;
let bob: Tenant;
let aliceWebhookId: string;

before(async () => {
  ctx = await createTestContext();
  alice = await createTenant(ctx.deps, 'alice@example.com');
  bob = await createTenant(ctx.deps, 'bob@example.com');
  const res = await ctx.app.inject({
    method: 'POST',
    url: WEBHOOK_PATH,
    headers: webhookHeaders(alice),
    payload: { webhookUrl: 'http://127.0.0.1:4000/alice', requestType: 'POST' },
  });
  aliceWebhookId = res.json().data.webhookId;
});
after(() => ctx.close());

const ops = [
  { method: 'POST', payload: () => ({ webhookUrl: 'http://127.0.0.1/x', requestType: 'POST' }) },
  { method: 'GET', payload: () => undefined },
  { method: 'PATCH', payload: () => ({ webhookId: aliceWebhookId, active: false }) },
  { method: 'DELETE', payload: () => ({ webhookId: aliceWebhookId }) },
] as const;

async function aliceWebhookUnchanged() {
  const w = await ctx.deps.store.webhooks.findInDapp({ dappId: alice.dappId, webhookId: aliceWebhookId });
  assert.ok(w, 'alice’s webhook still exists');
  assert.equal(w.active, true);
  assert.equal(w.url, 'http://127.0.0.1:4000/alice');
}

describe('credentials', () => {
  const wrongCredentials: [string, () => Record<string, string>][] = [
    ['a wrong auth token', () => ({ authToken: `pat.${'A'.repeat(43)}`, apiKey: alice.apiKey })],
    ['a junk auth token', () => ({ authToken: 'hunter2', apiKey: alice.apiKey })],
    ['an unknown API key', () => ({ authToken: alice.authToken, apiKey: `pk.${'B'.repeat(33)}` })],
    ['the API key of another account', () => ({ authToken: alice.authToken, apiKey: bob.apiKey })],
    ['the token of another account', () => ({ authToken: bob.authToken, apiKey: alice.apiKey })],
    ['token and key swapped', () => ({ authToken: alice.apiKey, apiKey: alice.authToken })],
  ];
  for (const [name, headers] of wrongCredentials) {
    for (const op of ops) {
      test(`${op.method} with ${name} → 401, generic message, nothing changed`, async () => {
        const payload = op.payload();
        const res = await ctx.app.inject({
          method: op.method,
          url: WEBHOOK_PATH,
          headers: headers(),
          ...(payload === undefined ? {} : { payload }),
        });
        assert.equal(res.statusCode, 401);
        assert.deepEqual(res.json(), INVALID);
        await aliceWebhookUnchanged();
      });
    }
  }

  for (const [name, headers] of [
    ['blank auth token', () => ({ authToken: '  ', apiKey: alice.apiKey })],
    ['blank API key', () => ({ authToken: alice.authToken, apiKey: '' })],
  ] as const) {
    test(`${name} counts as missing`, async () => {
      const res = await ctx.app.inject({ method: 'POST', url: WEBHOOK_PATH, headers: headers(), payload: {} });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, 'Auth token and API key is required in the headers');
    });
  }

  test('header names are case-insensitive (authtoken / APIKEY)', async () => {
    const res = await ctx.app.inject({
      method: 'GET',
      url: WEBHOOK_PATH,
      headers: { authtoken: alice.authToken, APIKEY: alice.apiKey },
    });
    assert.equal(res.statusCode, 200);
  });

  test('a revoked token stops working immediately in this process', async () => {
    const carol = await createTenant(ctx.deps, 'carol@example.com');
    const ok = await ctx.app.inject({ method: 'GET', url: WEBHOOK_PATH, headers: webhookHeaders(carol) });
    assert.equal(ok.statusCode, 200);
    const [token] = await ctx.deps.accounts.listTokens(carol.accountId);
    assert.ok(token);
    await ctx.deps.accounts.revokeToken({ accountId: carol.accountId, tokenId: token.id });
    const res = await ctx.app.inject({ method: 'GET', url: WEBHOOK_PATH, headers: webhookHeaders(carol) });
    assert.deepEqual(res.json(), INVALID);
  });

  test('a rotated API key stops working immediately in this process', async () => {
    const dave = await createTenant(ctx.deps, 'dave@example.com');
    assert.equal(
      (await ctx.app.inject({ method: 'GET', url: WEBHOOK_PATH, headers: webhookHeaders(dave) })).statusCode,
      200,
    );
    const rotated = await ctx.deps.accounts.rotateApiKey({ accountId: dave.accountId, dappId: dave.dappId });
    const old = await ctx.app.inject({ method: 'GET', url: WEBHOOK_PATH, headers: webhookHeaders(dave) });
    assert.deepEqual(old.json(), INVALID);
    const fresh = await ctx.app.inject({
      method: 'GET',
      url: WEBHOOK_PATH,
      headers: { authToken: dave.authToken, apiKey: rotated.apiKey },
    });
    assert.equal(fresh.statusCode, 200);
  });
});

describe('tenant isolation: another tenant’s webhook id is indistinguishable from an unknown one', () => {
  for (const [method, payload, query] of [
    ['GET', undefined, () => ({ webhookId: aliceWebhookId })],
    ['PATCH', () => ({ webhookId: aliceWebhookId, active: false }), undefined],
    ['DELETE', () => ({ webhookId: aliceWebhookId }), undefined],
  ] as const) {
    test(`${method} by bob → 404 "Webhook not found", alice’s webhook untouched`, async () => {
      const res = await ctx.app.inject({
        method,
        url: WEBHOOK_PATH,
        headers: webhookHeaders(bob),
        ...(payload === undefined ? {} : { payload: payload() }),
        ...(query === undefined ? {} : { query: query() }),
      });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { statusCode: 404, message: 'Webhook not found' });
      await aliceWebhookUnchanged();
    });
  }

  test('bob’s list never contains alice’s webhook', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: WEBHOOK_PATH, headers: webhookHeaders(bob) });
    assert.equal(res.statusCode, 200);
    assert.ok(!res.body.includes(aliceWebhookId));
  });

  test('two dApps of one account are isolated from each other too', async () => {
    const second = await ctx.deps.accounts.createDapp({
      accountId: alice.accountId,
      name: 'second',
      chainIds: [31337],
    });
    const res = await ctx.app.inject({
      method: 'GET',
      url: WEBHOOK_PATH,
      headers: { authToken: alice.authToken, apiKey: second.apiKey },
      query: { webhookId: aliceWebhookId },
    });
    assert.equal(res.statusCode, 404);
  });
});

describe('secrets at rest', () => {
  test('the database holds no auth token or API key in clear', async () => {
    const dump = JSON.stringify({
      tokens: await ctx.deps.store.accounts.listTokens(alice.accountId),
      dapps: await ctx.deps.store.dapps.listByAccount(alice.accountId),
      byHash: await ctx.deps.store.accounts.findTokenByHash('x'),
    });
    assert.ok(!dump.includes(alice.authToken));
    assert.ok(!dump.includes(alice.apiKey));
    assert.ok(!dump.includes(alice.apiKey.slice(12)), 'not even the secret part of the key');
    assert.equal(TEST_MASTER_KEY.length, 32);
  });
});

describe('SSRF guard in production mode', () => {
  let prod: TestContext;
  let tenant: Tenant;
  before(async () => {
    prod = await createTestContext({ config: { production: true, allowPrivateWebhookUrls: false } });
    tenant = await createTenant(prod.deps);
  });
  after(() => prod.close());

  const refused = [
    'http://127.0.0.1:4000/hook',
    'http://localhost:4000/hook',
    'http://[::1]/hook',
    'http://10.0.0.8/hook',
    'http://172.16.0.1/hook',
    'http://192.168.1.10/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/',
    'http://100.100.100.200/',
    'http://0.0.0.0/',
    'http://2130706433/',
    'http://[::ffff:127.0.0.1]/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://internal.example.com/hook',
    'http://mixed.example.com/hook',
    'http://metadata.example.com/hook',
    'http://v6-private.example.com/hook',
  ];
  for (const url of refused) {
    test(`refuses ${url}`, async () => {
      const res = await prod.app.inject({
        method: 'POST',
        url: WEBHOOK_PATH,
        headers: webhookHeaders(tenant),
        payload: { webhookUrl: url, requestType: 'POST' },
      });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), {
        statusCode: 400,
        message: 'webhookUrl must not point at a loopback, private, link-local or metadata address',
      });
    });
  }

  test('refuses a host that does not resolve', async () => {
    const res = await prod.app.inject({
      method: 'POST',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(tenant),
      payload: { webhookUrl: 'https://no-such-host.example.com/', requestType: 'POST' },
    });
    assert.deepEqual(res.json(), { statusCode: 400, message: 'webhookUrl host could not be resolved' });
  });

  for (const url of [
    'https://hooks.example.com/verify',
    'https://v6.example.com/verify',
    'http://93.184.215.14:8080/v',
  ]) {
    test(`accepts public ${url}`, async () => {
      const res = await prod.app.inject({
        method: 'POST',
        url: WEBHOOK_PATH,
        headers: webhookHeaders(tenant),
        payload: { webhookUrl: url, requestType: 'POST' },
      });
      assert.equal(res.statusCode, 200);
    });
  }

  test('nothing refused was stored', async () => {
    const stored = await prod.deps.store.webhooks.listByDapp(tenant.dappId);
    assert.deepEqual(stored.map((w) => w.url).sort(), [
      'http://93.184.215.14:8080/v',
      'https://hooks.example.com/verify',
      'https://v6.example.com/verify',
    ]);
  });

  test('the dev default allows 127.0.0.1 so local receivers work', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(bob),
      payload: { webhookUrl: 'http://127.0.0.1:9999/local', requestType: 'GET' },
    });
    assert.equal(res.statusCode, 200);
  });
});
