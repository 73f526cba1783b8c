import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Address } from 'viem';
import type { MeeTank } from '../src/store/tenants/meeTankRepository.js';
import { insertTestTank } from './helpers/meeTanks.js';
import { tankTokenFixture } from './helpers/tankToken.js';
import {
  BACKEND,
  createTenant,
  createTestContext,
  type Tenant,
  type TestContext,
  testConfig,
} from './helpers/testContext.js';

/**
 * The gas tanks' admin routes through the real app (src/api/adminMeeTanks.ts): list, one with its balance read on
 * the dev chain, the alert threshold, retire; each refusal named; and what a hostile tenant tries: reading,
 * changing or retiring another dApp's tank, through its own dApp's path or the other's.
 */
let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let tankA: MeeTank;
let tankB: MeeTank;
let viewerToken: string;
let operatorToken: string;

before(async () => {
  const base = testConfig();
  ctx = await createTestContext({ config: { paymaster: { ...base.paymaster, devChain: true } } });
  a = await createTenant(ctx.deps, `a-${randomUUID()}@example.com`);
  b = await createTenant(ctx.deps, `b-${randomUUID()}@example.com`);
  const fx = await tankTokenFixture(ctx.deps, 'api');
  tankA = await insertTestTank(ctx.deps.store, a.dappId, { token: fx.token, lowBalance: 1_000_000n });
  tankB = await insertTestTank(ctx.deps.store, b.dappId, { token: fx.token });
  await fx.mint(tankA.address, 42_500_000n);
  for (const role of ['viewer', 'operator'] as const) {
    const res = await call('POST', '/api/admin/members', a.authToken, {
      email: `${role}-${randomUUID()}@example.com`,
      role,
    });
    assert.equal(res.statusCode, 200, res.body);
    const { memberId } = res.json().data as { memberId: string };
    const { secret } = await ctx.deps.accounts.createToken({ accountId: a.accountId, memberId });
    if (role === 'viewer') viewerToken = secret;
    else operatorToken = secret;
  }
});
after(() => ctx.close());

function call(method: 'GET' | 'POST' | 'PATCH', url: string, token: string, body?: unknown) {
  return ctx.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}
const tankUrl = (dappId: string, tankId: string) => `/api/admin/dapps/${dappId}/mee-tanks/${tankId}`;

describe(`gas tank admin routes (${BACKEND})`, () => {
  test('list per dApp and for the account; one tank with its balance read on chain', async () => {
    const list = await call('GET', `/api/admin/dapps/${a.dappId}/mee-tanks`, a.authToken);
    assert.equal(list.statusCode, 200, list.body);
    const tanks = list.json().data.tanks as { id: string; address: Address; sponsorPath: string }[];
    assert.deepEqual(
      tanks.map((t) => t.id),
      [tankA.id],
    );
    assert.equal(tanks[0]?.sponsorPath, `/mee/${a.dappId}/v1`);
    const all = await call('GET', '/api/admin/mee-tanks', a.authToken);
    assert.deepEqual(
      (all.json().data.tanks as { id: string }[]).map((t) => t.id),
      [tankA.id],
    );

    const one = await call('GET', tankUrl(a.dappId, tankA.id), viewerToken);
    assert.equal(one.statusCode, 200, one.body);
    const data = one.json().data;
    assert.equal(data.balance, '42500000');
    assert.equal(data.lowBalance, '1000000');
    assert.equal(data.signerKind, 'kms');
    assert.equal(data.status, 'active');
    assert.equal(JSON.stringify(data).includes('alias/test-tank'), false, 'the signer reference stays on the server');
  });

  test('an operator sets and clears the threshold, then retires the tank; each change is in the audit log', async () => {
    const set = await call('PATCH', tankUrl(a.dappId, tankA.id), operatorToken, { lowBalance: '25000000' });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(set.json().data.lowBalance, '25000000');
    assert.equal((await ctx.deps.store.meeTanks.get(tankA.id))?.lowBalance, 25_000_000n);
    const cleared = await call('PATCH', tankUrl(a.dappId, tankA.id), operatorToken, { lowBalance: null });
    assert.equal(cleared.json().data.lowBalance, null);

    const retired = await call('POST', `${tankUrl(a.dappId, tankA.id)}/retire`, operatorToken);
    assert.equal(retired.statusCode, 200, retired.body);
    assert.equal(retired.json().data.status, 'retired');
    assert.equal((await ctx.deps.store.meeTanks.get(tankA.id))?.status, 'retired');
    const again = await call('POST', `${tankUrl(a.dappId, tankA.id)}/retire`, operatorToken);
    assert.equal(again.json().data.retiredAt, retired.json().data.retiredAt, 'retiring twice keeps the first time');

    const log = await call('GET', '/api/admin/audit-log', a.authToken);
    const actions = (log.json().data.entries as { action: string; targetId: string }[])
      .filter((e) => e.targetId === tankA.id)
      .map((e) => e.action);
    assert.ok(actions.includes('meeTank.lowBalance.set') && actions.includes('meeTank.retire'), actions.join());
  });

  test('refusals: each bad threshold is named, an unknown tank is 404, a viewer may not change or retire', async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /lowBalance must be a decimal string of token base units, or null/],
      [{ lowBalance: -1 }, /lowBalance must be a decimal string of token base units, or null/],
      [{ lowBalance: '-1' }, /lowBalance must be a decimal count of token base units/],
      [{ lowBalance: '1.5' }, /lowBalance must be a decimal count of token base units/],
      [{ lowBalance: '01' }, /lowBalance must be a decimal count of token base units/],
      [{ lowBalance: '1', extra: true }, /extra|unrecognized/i],
    ];
    for (const [body, message] of cases) {
      const res = await call('PATCH', tankUrl(a.dappId, tankA.id), a.authToken, body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      assert.match(res.json().message, message, JSON.stringify(body));
    }
    const missing = await call('GET', tankUrl(a.dappId, 'tank_nope'), a.authToken);
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().message, 'Gas tank not found');
    for (const [method, url, body] of [
      ['PATCH', tankUrl(a.dappId, tankA.id), { lowBalance: '1' }],
      ['POST', `${tankUrl(a.dappId, tankA.id)}/retire`, undefined],
    ] as const) {
      const res = await call(method, url, viewerToken, body);
      assert.equal(res.statusCode, 403, res.body);
      assert.match(res.json().message, /needs the operator role or higher: you are a viewer/);
    }
  });

  test("security: another dApp's tank is 404 through either dApp's path, its threshold and status unchanged", async () => {
    const before = await ctx.deps.store.meeTanks.get(tankB.id);
    const attempts = [
      call('GET', tankUrl(a.dappId, tankB.id), a.authToken),
      call('GET', tankUrl(b.dappId, tankB.id), a.authToken),
      call('PATCH', tankUrl(a.dappId, tankB.id), a.authToken, { lowBalance: '1' }),
      call('PATCH', tankUrl(b.dappId, tankB.id), a.authToken, { lowBalance: '1' }),
      call('POST', `${tankUrl(a.dappId, tankB.id)}/retire`, a.authToken),
      call('POST', `${tankUrl(b.dappId, tankB.id)}/retire`, a.authToken),
      call('GET', `/api/admin/dapps/${b.dappId}/mee-tanks`, a.authToken),
    ];
    for (const res of await Promise.all(attempts)) {
      assert.equal(res.statusCode, 404, res.body);
      assert.doesNotMatch(res.body, new RegExp(tankB.address, 'i'));
    }
    assert.deepEqual(await ctx.deps.store.meeTanks.get(tankB.id), before);
    const all = await call('GET', '/api/admin/mee-tanks', a.authToken);
    assert.ok(!(all.json().data.tanks as { id: string }[]).some((t) => t.id === tankB.id));
    // B sees its own.
    const own = await call('GET', tankUrl(b.dappId, tankB.id), b.authToken);
    assert.equal(own.statusCode, 200, own.body);
    assert.equal(own.json().data.balance, '0');
  });

  test('a tank whose chain does not answer shows its balance as null, not an error', async () => {
    const far = await insertTestTank(ctx.deps.store, a.dappId, { chainId: 999_999 });
    const res = await call('GET', tankUrl(a.dappId, far.id), a.authToken);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.balance, null);
  });
});
