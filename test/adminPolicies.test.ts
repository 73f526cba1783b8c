import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';
import { randomSender, signThrough, userCapInstance } from './helpers/userCapGate.js';
import { isoDate } from './helpers/wireSchemas.js';

// The policy admin API: /api/admin/dapps/:dappId/policies (src/api/adminPolicies.ts).

const policyWire = z.strictObject({
  policyId: z.uuid(),
  dappId: z.uuid(),
  name: z.string(),
  active: z.boolean(),
  rules: z.record(z.string(), z.unknown()),
  createdAt: isoDate,
  updatedAt: isoDate,
});
const usageWire = z.strictObject({
  policyId: z.uuid(),
  sender: z.string().nullable(),
  user: z.string().nullable(),
  caps: z.array(
    z.strictObject({
      scope: z.enum(['dapp', 'sender', 'user']),
      unit: z.enum(['wei', 'usd', 'ops']),
      resets: z.string(),
      limit: z.string(),
      used: z.string(),
      reserved: z.string(),
      windowStart: isoDate,
      windowEnd: isoDate.nullable(),
    }),
  ),
});

const SENDER = '0x1111111111111111111111111111111111111111';
const RULES = {
  chainIds: [31337],
  senders: { allow: [SENDER] },
  caps: [
    { scope: 'dapp', unit: 'wei', limit: '1000000000000000000', resets: 'daily' },
    { scope: 'sender', unit: 'usd', limit: '2.5', resets: 'monthly' },
    { scope: 'op', unit: 'wei', limit: '1000' },
  ],
};

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
before(async () => {
  ctx = await createTestContext();
  a = await createTenant(ctx.deps);
  b = await createTenant(ctx.deps);
});
after(async () => {
  await ctx.close();
});

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const base = (dappId: string) => `/api/admin/dapps/${dappId}/policies`;

async function api(t: Tenant, method: Method, url: string, body?: unknown) {
  const res = await ctx.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${t.authToken}` },
    ...(body === undefined
      ? {}
      : {
          payload: JSON.stringify(body),
          headers: { authorization: `Bearer ${t.authToken}`, 'content-type': 'application/json' },
        }),
  });
  const json = res.json() as { statusCode: number; message: string; data?: unknown };
  assert.equal(json.statusCode, res.statusCode);
  return { status: res.statusCode, message: json.message, data: json.data, text: res.body };
}

async function expectError(
  p: Promise<{ status: number; message: string; data?: unknown }>,
  status: number,
  message: string | RegExp,
) {
  const res = await p;
  assert.equal(res.status, status, JSON.stringify(res));
  if (typeof message === 'string') assert.equal(res.message, message);
  else assert.match(res.message, message);
  assert.equal(res.data, undefined);
}

async function create(t: Tenant, body: Record<string, unknown>) {
  const res = await api(t, 'POST', base(t.dappId), body);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.message, 'Policy created');
  return policyWire.parse(res.data);
}

describe('policy CRUD', () => {
  test('create, list, get, update (name, active, rules), delete', async () => {
    const created = await create(a, { name: '  Base sponsorship ', rules: RULES });
    assert.equal(created.name, 'Base sponsorship', 'the name is trimmed');
    assert.equal(created.active, true);
    assert.equal(created.dappId, a.dappId);
    assert.deepEqual(created.rules, RULES, 'the rules come back as sent');

    const list = await api(a, 'GET', base(a.dappId));
    assert.equal(list.message, 'Policies fetched');
    assert.deepEqual(z.array(policyWire).parse(list.data), [created]);

    const one = await api(a, 'GET', `${base(a.dappId)}/${created.policyId}`);
    assert.equal(one.message, 'Policy fetched');
    assert.deepEqual(policyWire.parse(one.data), created);

    const renamed = await api(a, 'PATCH', `${base(a.dappId)}/${created.policyId}`, { name: 'Renamed', active: false });
    assert.equal(renamed.message, 'Policy updated');
    const r = policyWire.parse(renamed.data);
    assert.deepEqual([r.name, r.active, r.rules], ['Renamed', false, RULES]);

    const newRules = { sponsorDeployment: false };
    const replaced = policyWire.parse(
      (await api(a, 'PATCH', `${base(a.dappId)}/${created.policyId}`, { rules: newRules })).data,
    );
    assert.deepEqual([replaced.name, replaced.active, replaced.rules], ['Renamed', false, newRules]);

    const deleted = await api(a, 'DELETE', `${base(a.dappId)}/${created.policyId}`);
    assert.deepEqual([deleted.status, deleted.message, deleted.data], [200, 'Policy deleted', undefined]);
    await expectError(api(a, 'GET', `${base(a.dappId)}/${created.policyId}`), 404, 'Policy not found');
    await expectError(api(a, 'DELETE', `${base(a.dappId)}/${created.policyId}`), 404, 'Policy not found');
    assert.deepEqual((await api(a, 'GET', base(a.dappId))).data, []);
  });

  test('created inactive with active: false; an id that is not a UUID is not found', async () => {
    const p = await create(a, { name: 'inactive', active: false, rules: {} });
    assert.equal(p.active, false);
    await expectError(api(a, 'GET', `${base(a.dappId)}/not-a-uuid`), 404, 'Policy not found');
    await expectError(api(a, 'PATCH', `${base(a.dappId)}/${randomUUID()}`, { active: true }), 404, 'Policy not found');
    await api(a, 'DELETE', `${base(a.dappId)}/${p.policyId}`);
  });
});

describe('bad bodies → 400 with the specific message, nothing stored', () => {
  const cases: readonly { label: string; body: unknown; message: string | RegExp }[] = [
    {
      label: 'bad address',
      body: { name: 'x', rules: { senders: { allow: ['0x1234'] } } },
      message: 'Invalid rules.senders.allow.0: expected a 20-byte 0x address',
    },
    {
      label: 'bad USD string',
      body: { name: 'x', rules: { caps: [{ scope: 'dapp', unit: 'usd', limit: '1.2345678' }] } },
      message: 'Invalid rules.caps.0.limit: expected USD as a decimal string with at most 6 decimals',
    },
    {
      label: 'wei limit not an integer',
      body: { name: 'x', rules: { caps: [{ scope: 'dapp', unit: 'wei', limit: '1.5' }] } },
      message: 'Invalid rules.caps.0.limit: expected a non-negative integer as a decimal string',
    },
    {
      label: 'op-scope cap in ops',
      body: { name: 'x', rules: { caps: [{ scope: 'op', unit: 'ops', limit: '1' }] } },
      message: 'Invalid rules.caps.0.unit: a per-op cap is in wei or usd (one op is one op)',
    },
    {
      label: 'startsAt = endsAt',
      body: { name: 'x', rules: { startsAt: 100, endsAt: 100 } },
      message: 'Invalid rules.endsAt: startsAt must be before endsAt',
    },
    {
      label: 'startsAt > endsAt',
      body: { name: 'x', rules: { startsAt: 200, endsAt: 100 } },
      message: 'Invalid rules.endsAt: startsAt must be before endsAt',
    },
    { label: 'unknown rule', body: { name: 'x', rules: { maxOps: 3 } }, message: /^Invalid rules: .*maxOps/ },
    { label: 'unknown field', body: { name: 'x', rules: {}, owner: 'me' }, message: 'Unknown field: owner' },
    { label: 'name missing', body: { rules: {} }, message: 'name must be a string' },
    { label: 'name empty', body: { name: '   ', rules: {} }, message: 'name must not be empty' },
    {
      label: 'name too long',
      body: { name: 'x'.repeat(101), rules: {} },
      message: 'name must be at most 100 characters',
    },
    {
      label: 'name with a control character',
      body: { name: 'a\u0000b', rules: {} },
      message: 'name must not contain control characters',
    },
    { label: 'rules missing', body: { name: 'x' }, message: 'rules must be a JSON object' },
    { label: 'rules an array', body: { name: 'x', rules: [] }, message: 'rules must be a JSON object' },
    {
      label: 'active not a boolean',
      body: { name: 'x', rules: {}, active: 'yes' },
      message: 'active must be a boolean value',
    },
    { label: 'not an object', body: [1], message: 'Request body must be a JSON object' },
  ];
  for (const c of cases) {
    test(`create: ${c.label}`, async () => {
      await expectError(api(a, 'POST', base(a.dappId), c.body), 400, c.message);
      assert.deepEqual((await api(a, 'GET', base(a.dappId))).data, []);
    });
  }

  test('update: empty patch, unknown field, bad rules; a name clash is 409', async () => {
    const p = await create(a, { name: 'first', rules: {} });
    await create(a, { name: 'second', rules: {} });
    const url = `${base(a.dappId)}/${p.policyId}`;
    await expectError(api(a, 'PATCH', url, {}), 400, 'Give at least one of name, active, rules');
    await expectError(api(a, 'PATCH', url, { active: true, colour: 'red' }), 400, 'Unknown field: colour');
    await expectError(api(a, 'PATCH', url, { rules: { endsAt: -1 } }), 400, /^Invalid rules\.endsAt: /);
    await expectError(
      api(a, 'PATCH', url, { name: 'second' }),
      409,
      'A policy named "second" already exists for this dApp',
    );
    await expectError(
      api(a, 'POST', base(a.dappId), { name: 'second', rules: {} }),
      409,
      'A policy named "second" already exists for this dApp',
    );
    assert.deepEqual(policyWire.parse((await api(a, 'GET', url)).data), p, 'nothing changed');
    for (const x of z.array(policyWire).parse((await api(a, 'GET', base(a.dappId))).data)) {
      await api(a, 'DELETE', `${base(a.dappId)}/${x.policyId}`);
    }
  });
});

describe('tenant isolation', () => {
  test("account B can neither list, create, read, patch, delete nor read the usage of A's policies (404)", async () => {
    const p = await create(a, { name: 'isolated', rules: RULES });
    const one = `${base(a.dappId)}/${p.policyId}`;
    const dappNotFound = 'dApp not found';
    await expectError(api(b, 'GET', base(a.dappId)), 404, dappNotFound);
    await expectError(api(b, 'POST', base(a.dappId), { name: 'mine', rules: {} }), 404, dappNotFound);
    await expectError(api(b, 'GET', one), 404, dappNotFound);
    await expectError(api(b, 'PATCH', one, { active: false }), 404, dappNotFound);
    await expectError(api(b, 'DELETE', one), 404, dappNotFound);
    await expectError(api(b, 'GET', `${one}/usage`), 404, dappNotFound);
    // A's policy id under B's own dApp is not found either.
    const underB = `${base(b.dappId)}/${p.policyId}`;
    await expectError(api(b, 'GET', underB), 404, 'Policy not found');
    await expectError(api(b, 'PATCH', underB, { active: false }), 404, 'Policy not found');
    await expectError(api(b, 'DELETE', underB), 404, 'Policy not found');
    await expectError(api(b, 'GET', `${underB}/usage`), 404, 'Policy not found');
    assert.deepEqual(policyWire.parse((await api(a, 'GET', one)).data), p, "A's policy is unchanged");
    assert.deepEqual((await api(b, 'GET', base(b.dappId))).data, []);
    await api(a, 'DELETE', one);
  });
});

describe('usage', () => {
  test("a fresh policy: each cap's window with zeros; per-sender caps only with sender", async () => {
    const p = await create(a, { name: 'usage', rules: RULES });
    const dappOnly = await api(a, 'GET', `${base(a.dappId)}/${p.policyId}/usage`);
    assert.equal(dappOnly.message, 'Policy usage fetched');
    const u = usageWire.parse(dappOnly.data);
    assert.equal(u.sender, null);
    assert.deepEqual(
      u.caps.map((c) => [c.scope, c.unit, c.resets, c.limit, c.used, c.reserved]),
      [['dapp', 'wei', 'daily', '1000000000000000000', '0', '0']],
    );
    const day = u.caps[0];
    assert.ok(day?.windowEnd !== null && day !== undefined);
    assert.equal(Date.parse(day.windowEnd ?? '') - Date.parse(day.windowStart), 86_400_000);

    const withSender = usageWire.parse(
      (await api(a, 'GET', `${base(a.dappId)}/${p.policyId}/usage?sender=${SENDER}`)).data,
    );
    assert.equal(withSender.sender, SENDER);
    assert.deepEqual(
      withSender.caps.map((c) => [c.scope, c.unit, c.limit, c.used, c.reserved]),
      [
        ['dapp', 'wei', '1000000000000000000', '0', '0'],
        ['sender', 'usd', '2.5', '0', '0'],
      ],
    );
    await expectError(
      api(a, 'GET', `${base(a.dappId)}/${p.policyId}/usage?sender=0x12`),
      400,
      'sender must be an address (0x and 40 hex digits)',
    );
    await expectError(api(a, 'GET', `${base(a.dappId)}/${randomUUID()}/usage`), 404, 'Policy not found');
    await api(a, 'DELETE', `${base(a.dappId)}/${p.policyId}`);
  });

  test('per-user caps only with user (any string up to 256 characters, the token sub), counted across senders', async () => {
    const p = await create(a, {
      name: 'per user',
      rules: { caps: [{ scope: 'user', unit: 'ops', limit: '5', resets: 'daily' }, ...RULES.caps] },
    });
    const usage = async (query: string) =>
      usageWire.parse((await api(a, 'GET', `${base(a.dappId)}/${p.policyId}/usage${query}`)).data);
    const none = await usage('');
    assert.equal(none.user, null);
    assert.deepEqual(
      none.caps.map((c) => c.scope),
      ['dapp'],
    );
    // Two ops of one user from two wallets, through the policy gate over this app's store.
    const { gate } = userCapInstance(ctx.deps.store);
    const user = 'did:privy:a|b c';
    for (const sender of [randomSender(), randomSender()]) {
      assert.equal(await signThrough({ gate, dappId: a.dappId, sender, user, worstCaseWei: 1n }), 'ok');
    }
    const mine = await usage(`?user=${encodeURIComponent(user)}&sender=${SENDER}`);
    assert.equal(mine.user, user);
    assert.deepEqual(
      mine.caps.map((c) => [c.scope, c.unit, c.resets, c.limit, c.used, c.reserved]),
      [
        ['user', 'ops', 'daily', '5', '0', '2'],
        ['dapp', 'wei', 'daily', '1000000000000000000', '0', '2'],
        ['sender', 'usd', 'monthly', '2.5', '0', '0'],
      ],
    );
    assert.deepEqual(
      (await usage('?user=did%3Aprivy%3Aa')).caps.map((c) => [c.scope, c.reserved]),
      [
        ['user', '0'],
        ['dapp', '2'],
      ],
      'another user counts apart',
    );
    const tooLong = "user must be 1 to 256 characters (the sponsorship token's sub)";
    await expectError(api(a, 'GET', `${base(a.dappId)}/${p.policyId}/usage?user=`), 400, tooLong);
    await expectError(api(a, 'GET', `${base(a.dappId)}/${p.policyId}/usage?user=${'x'.repeat(257)}`), 400, tooLong);
    assert.equal((await usage(`?user=${'x'.repeat(256)}`)).caps.length, 2);
    await api(a, 'DELETE', `${base(a.dappId)}/${p.policyId}`);
  });

  test('a policy without caps has no usage rows', async () => {
    const p = await create(a, { name: 'no caps', rules: {} });
    assert.deepEqual(usageWire.parse((await api(a, 'GET', `${base(a.dappId)}/${p.policyId}/usage`)).data).caps, []);
    await api(a, 'DELETE', `${base(a.dappId)}/${p.policyId}`);
  });
});
