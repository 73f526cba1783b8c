import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { createSecretBox } from '../src/crypto/secretBox.js';
import { checkSponsorshipWebhooks } from '../src/webhooks/webhookCheck.js';
import {
  createTenant,
  createTestContext,
  TEST_MASTER_KEY,
  type Tenant,
  type TestContext,
  WEBHOOK_PATH,
  webhookHeaders,
} from './helpers/testContext.js';
import { type ReceivedRequest, type Receiver, signedWith, startReceiver } from './helpers/webhookReceiver.js';
import { isoDate } from './helpers/wireSchemas.js';

// Signing secrets on the REST API: shown once on Create, never listed, rotated by the owner only.

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const createdWire = z.strictObject({
  webhookId: z.uuid(),
  webhookUrl: z.string(),
  requestType: z.enum(['GET', 'POST']),
  active: z.boolean(),
  signingSecret: z.string().regex(SECRET),
});
const adminWebhookWire = z.strictObject({
  webhookId: z.uuid(),
  webhookUrl: z.string(),
  requestType: z.enum(['GET', 'POST']),
  active: z.boolean(),
  createdAt: isoDate,
  updatedAt: isoDate,
});
const rotatedWire = adminWebhookWire.extend({ signingSecret: z.string().regex(SECRET) });

let ctx: TestContext;
let receiver: Receiver;
before(async () => {
  ctx = await createTestContext();
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await ctx.close();
});

async function create(t: Tenant, path: string) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: WEBHOOK_PATH,
    headers: webhookHeaders(t),
    payload: { webhookUrl: receiver.url(path), requestType: 'POST' },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().message, 'Webhook created');
  return createdWire.parse(res.json().data);
}

const admin = (t: Tenant | undefined, method: 'GET' | 'POST', url: string) =>
  ctx.app.inject({ method, url, headers: t === undefined ? {} : { authorization: `Bearer ${t.authToken}` } });
const rotateUrl = (dappId: string, webhookId: string) =>
  `/api/admin/dapps/${dappId}/webhooks/${webhookId}/rotate-secret`;

/** Calls the dApp's webhooks and returns the request the receiver got. */
async function callOnce(t: Tenant): Promise<ReceivedRequest> {
  const before = receiver.requests.length;
  await checkSponsorshipWebhooks({ webhooks: ctx.deps.webhooks, caller: ctx.deps.webhookCaller, dappId: t.dappId });
  const r = receiver.requests[before];
  assert.ok(r);
  return r;
}

describe('the signing secret is shown once', () => {
  test('Create returns it; no read (public GET, GET by id, admin list) shows it; it is stored sealed', async () => {
    const t = await createTenant(ctx.deps);
    const created = await create(t, '/once');
    const reads = [
      await ctx.app.inject({ method: 'GET', url: WEBHOOK_PATH, headers: webhookHeaders(t) }),
      await ctx.app.inject({
        method: 'GET',
        url: WEBHOOK_PATH,
        headers: webhookHeaders(t),
        query: { webhookId: created.webhookId },
      }),
      await admin(t, 'GET', `/api/admin/dapps/${t.dappId}/webhooks`),
    ];
    for (const res of reads) {
      assert.equal(res.statusCode, 200);
      assert.doesNotMatch(res.body, /whsec_|signingSecret/);
      assert.ok(!res.body.includes(created.signingSecret.slice('whsec_'.length, 20)));
    }
    const [stored] = await ctx.deps.store.webhooks.listActiveSealed(t.dappId);
    assert.ok(stored?.signingSecretCiphertext);
    assert.ok(!stored.signingSecretCiphertext.includes(created.signingSecret.slice(6)), 'not in clear');
    assert.equal(createSecretBox(TEST_MASTER_KEY).open(stored.signingSecretCiphertext), created.signingSecret);
  });
});

describe('GET /api/admin/dapps/:dappId/webhooks', () => {
  test("lists the dApp's webhooks in registration order", async () => {
    const t = await createTenant(ctx.deps);
    const a = await create(t, '/a');
    const b = await create(t, '/b');
    const res = await admin(t, 'GET', `/api/admin/dapps/${t.dappId}/webhooks`);
    assert.equal(res.json().message, 'Webhooks fetched');
    const list = z.array(adminWebhookWire).parse(res.json().data);
    assert.deepEqual(
      list.map((w) => [w.webhookId, w.webhookUrl]),
      [
        [a.webhookId, receiver.url('/a')],
        [b.webhookId, receiver.url('/b')],
      ],
    );
  });

  test("another account's dApp → 404 dApp not found; no token → 401", async () => {
    const alice = await createTenant(ctx.deps);
    const bob = await createTenant(ctx.deps);
    await create(alice, '/alice');
    const res = await admin(bob, 'GET', `/api/admin/dapps/${alice.dappId}/webhooks`);
    assert.deepEqual([res.statusCode, res.json()], [404, { statusCode: 404, message: 'dApp not found' }]);
    assert.equal((await admin(undefined, 'GET', `/api/admin/dapps/${alice.dappId}/webhooks`)).statusCode, 401);
  });
});

describe('POST /api/admin/dapps/:dappId/webhooks/:webhookId/rotate-secret', () => {
  test('returns a new secret once; calls are signed with it and no longer with the old one', async () => {
    const t = await createTenant(ctx.deps);
    const created = await create(t, '/rotate');
    assert.equal(signedWith(created.signingSecret, await callOnce(t)), true);
    const res = await admin(t, 'POST', rotateUrl(t.dappId, created.webhookId));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().message, 'Webhook signing secret rotated');
    const rotated = rotatedWire.parse(res.json().data);
    assert.equal(rotated.webhookId, created.webhookId);
    assert.notEqual(rotated.signingSecret, created.signingSecret);
    const after = await callOnce(t);
    assert.equal(signedWith(rotated.signingSecret, after), true);
    assert.equal(signedWith(created.signingSecret, after), false);
    const list = await admin(t, 'GET', `/api/admin/dapps/${t.dappId}/webhooks`);
    assert.ok(!list.body.includes(rotated.signingSecret.slice(6)), 'the new secret is not listed either');
  });

  test("another account's ids → 404 Webhook not found, and the owner's secret is unchanged", async () => {
    const alice = await createTenant(ctx.deps);
    const bob = await createTenant(ctx.deps);
    const aliceHook = await create(alice, '/alice-secret');
    const bobHook = await create(bob, '/bob-secret');
    const attempts = [
      [bob, rotateUrl(alice.dappId, aliceHook.webhookId)],
      [bob, rotateUrl(bob.dappId, aliceHook.webhookId)],
      [alice, rotateUrl(alice.dappId, bobHook.webhookId)],
      [alice, rotateUrl(alice.dappId, 'not-a-uuid')],
      [alice, rotateUrl('not-a-uuid', aliceHook.webhookId)],
    ] as const;
    for (const [who, url] of attempts) {
      const res = await admin(who, 'POST', url);
      assert.deepEqual([res.statusCode, res.json()], [404, { statusCode: 404, message: 'Webhook not found' }], url);
    }
    assert.equal((await admin(undefined, 'POST', rotateUrl(alice.dappId, aliceHook.webhookId))).statusCode, 401);
    assert.equal(signedWith(aliceHook.signingSecret, await callOnce(alice)), true);
    assert.equal(signedWith(bobHook.signingSecret, await callOnce(bob)), true);
  });
});
