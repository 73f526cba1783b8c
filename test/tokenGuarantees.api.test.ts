import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { guaranteeCapCharge } from '../src/policies/guaranteeCap.js';
import { BACKEND, createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * The owner's token guarantees through the real app (GET/PUT /api/admin/dapps/:dappId/token-guarantees,
 * docs/reference/rest-api.md): off by default, on only with a cap (the refusal says so), every bad field named,
 * another account's dApp 404 as a missing one, and the cap's current window read from the spend ledger.
 */
let ctx: TestContext;
let a: Tenant;
let b: Tenant;
before(async () => {
  ctx = await createTestContext();
  a = await createTenant(ctx.deps, `a-${randomUUID()}@example.com`);
  b = await createTenant(ctx.deps, `b-${randomUUID()}@example.com`);
});
after(() => ctx.close());

const url = (t: Tenant) => `/api/admin/dapps/${t.dappId}/token-guarantees`;
const put = (owner: Tenant, target: Tenant, doc: unknown) =>
  ctx.app.inject({
    method: 'PUT',
    url: url(target),
    headers: { authorization: `Bearer ${owner.authToken}`, 'content-type': 'application/json' },
    payload: JSON.stringify(doc),
  });
const get = (owner: Tenant, target: Tenant) =>
  ctx.app.inject({ method: 'GET', url: url(target), headers: { authorization: `Bearer ${owner.authToken}` } });

const CAP = { limitWei: '50000000000000000', resets: 'daily' } as const;

test(`${BACKEND}: off by default; on with a cap, shown with its window's usage; off again keeps the cap`, async () => {
  const first = await get(a, a);
  assert.equal(first.statusCode, 200, first.body);
  assert.deepEqual(first.json().data, { dappId: a.dappId, tokenGuarantees: { enabled: false }, usage: null });

  const on = await put(a, a, { enabled: true, cap: CAP });
  assert.equal(on.statusCode, 200, on.body);
  assert.equal(on.json().message, 'Token guarantees set');
  const shown = on.json().data;
  assert.deepEqual(shown.tokenGuarantees, { enabled: true, cap: CAP });
  assert.equal(shown.usage.limitWei, CAP.limitWei);
  assert.deepEqual([shown.usage.usedWei, shown.usage.reservedWei, shown.usage.resets], ['0', '0', 'daily']);
  const dayStart = new Date(new Date().toISOString().slice(0, 10)).getTime();
  assert.equal(shown.usage.windowStart, new Date(dayStart).toISOString());
  assert.equal(shown.usage.windowEnd, new Date(dayStart + 86_400_000).toISOString());
  // The setting reaches the paymaster path's record (the cached lookup by API key) at once.
  assert.deepEqual((await ctx.deps.accounts.resolveApiKey(a.apiKey))?.tokenGuarantees, { enabled: true, cap: CAP });

  // A guarantee reserved in the window shows in the usage.
  const charge = guaranteeCapCharge({ dappId: a.dappId, cap: CAP, worstCaseWei: 123_456n, nowMs: Date.now() });
  const reserved = await ctx.deps.store.spendLedger.reserve({
    id: `31337:0x${'ab'.repeat(32)}`,
    dappId: a.dappId,
    chainId: 31337,
    userOpHash: `0x${'ab'.repeat(32)}`,
    charges: [charge],
    expiresAt: Date.now() + 60_000,
    now: Date.now(),
    window: { unit: 'seconds', until: Math.floor(Date.now() / 1000) + 60 },
    paymaster: '0x1111111111111111111111111111111111111111',
    kind: 'guarantee',
  });
  assert.deepEqual(reserved, { ok: true });
  assert.equal((await get(a, a)).json().data.usage.reservedWei, '123456');

  const off = await put(a, a, { enabled: false, cap: CAP });
  assert.equal(off.statusCode, 200, off.body);
  assert.deepEqual(off.json().data.tokenGuarantees, { enabled: false, cap: CAP });
  assert.deepEqual((await ctx.deps.accounts.resolveApiKey(a.apiKey))?.tokenGuarantees, { enabled: false, cap: CAP });
  const bare = await put(a, a, { enabled: false });
  assert.deepEqual(bare.json().data, { dappId: a.dappId, tokenGuarantees: { enabled: false }, usage: null });
});

test('refusals: enabling without a cap says a cap is required; each bad field is named; nothing stored', async () => {
  const cases: [unknown, RegExp][] = [
    [
      { enabled: true },
      /^enabling token guarantees requires a cap \(no unbounded guarantee\): send \{"enabled":true,"cap"/,
    ],
    [{ enabled: true, cap: { ...CAP, limitWei: '0' } }, /^limitWei must be a positive whole number of wei/],
    [{ enabled: true, cap: { ...CAP, limitWei: '1e18' } }, /^limitWei must be a positive whole number of wei/],
    [
      { enabled: true, cap: { ...CAP, resets: 'yearly' } },
      /^resets must be one of hourly, daily, weekly, monthly, never$/,
    ],
    [{ enabled: 'true', cap: CAP }, /^enabled must be true or false$/],
    [{ enabled: true, cap: CAP, unbounded: true }, /^unbounded is not a known key here/],
    [[], /^Request body must be a JSON object$/],
  ];
  for (const [doc, message] of cases) {
    const res = await put(b, b, doc);
    assert.equal(res.statusCode, 400, `${JSON.stringify(doc)}: ${res.body}`);
    assert.match(res.json().message, message, JSON.stringify(doc));
  }
  assert.deepEqual((await get(b, b)).json().data.tokenGuarantees, { enabled: false });
});

test('another account’s dApp is not found, read or written, and is left as it was', async () => {
  assert.equal((await get(a, b)).statusCode, 404);
  const res = await put(a, b, { enabled: true, cap: CAP });
  assert.equal(res.statusCode, 404, res.body);
  assert.deepEqual((await get(b, b)).json().data.tokenGuarantees, { enabled: false });
  const missing = await ctx.app.inject({
    method: 'GET',
    url: `/api/admin/dapps/${randomUUID()}/token-guarantees`,
    headers: { authorization: `Bearer ${a.authToken}` },
  });
  assert.equal(missing.statusCode, 404);
});
