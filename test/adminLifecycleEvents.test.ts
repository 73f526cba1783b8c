import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';
import { type Receiver, signedWith, startReceiver } from './helpers/webhookReceiver.js';
import { isoDate } from './helpers/wireSchemas.js';

/** The admin API of lifecycle events: the endpoint, the delivery log with its cursor, replay; tenant isolation. */
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const endpointWire = z.strictObject({ url: z.string(), active: z.boolean(), createdAt: isoDate, updatedAt: isoDate });
const eventWire = z.strictObject({
  id: z.string(),
  type: z.string(),
  createdAt: isoDate,
  state: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  nextAttemptAt: isoDate.nullable(),
  lastError: z.string().nullable(),
  deliveredAt: isoDate.nullable(),
  payload: z.unknown(),
});
const pageWire = z.strictObject({ events: z.array(eventWire), nextCursor: z.string().nullable() });

let ctx: TestContext;
let receiver: Receiver;
let owner: Tenant;
let other: Tenant;
before(async () => {
  ctx = await createTestContext({ eventDelivery: { intervalMs: 0 } });
  receiver = await startReceiver();
  owner = await createTenant(ctx.deps);
  other = await createTenant(ctx.deps);
});
after(async () => {
  await receiver.close();
  await ctx.close();
});

const admin = (t: Tenant, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  ctx.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${t.authToken}` },
    ...(payload === undefined ? {} : { payload }),
  });

const endpointPath = (t: Tenant) => `/api/admin/dapps/${t.dappId}/event-endpoint`;

describe('lifecycle events admin API', () => {
  test('set, read (no secret), reveal, keep the secret on a change, rotate, delete', async () => {
    let res = await admin(owner, 'GET', endpointPath(owner));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data, null);
    res = await admin(owner, 'POST', endpointPath(owner), { url: receiver.url('/events') });
    assert.equal(res.statusCode, 200, res.body);
    const first = endpointWire.extend({ signingSecret: z.string().regex(SECRET) }).parse(res.json().data);
    assert.equal(first.active, true);
    res = await admin(owner, 'GET', endpointPath(owner));
    assert.deepEqual(endpointWire.parse(res.json().data).url, receiver.url('/events'));
    res = await admin(owner, 'POST', `${endpointPath(owner)}/reveal-secret`);
    assert.equal(res.json().data.signingSecret, first.signingSecret);
    res = await admin(owner, 'POST', endpointPath(owner), { url: receiver.url('/v2'), active: false });
    assert.equal(res.json().data.signingSecret, first.signingSecret, 'kept across a change');
    res = await admin(owner, 'POST', endpointPath(owner), { url: receiver.url('/v2'), rotateSecret: true });
    assert.notEqual(res.json().data.signingSecret, first.signingSecret);
    res = await admin(owner, 'POST', endpointPath(owner), { url: 'ftp://x' });
    assert.equal(res.statusCode, 400);
    res = await admin(owner, 'DELETE', endpointPath(owner));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await admin(owner, 'GET', endpointPath(owner))).json().data, null);
  });

  test("another account's dApp reads as missing on every route", async () => {
    await admin(other, 'POST', endpointPath(other), { url: receiver.url('/theirs') });
    const [e] = await appendEvents(other, 1);
    for (const [method, url] of [
      ['GET', endpointPath(other)],
      ['POST', endpointPath(other)],
      ['DELETE', endpointPath(other)],
      ['POST', `${endpointPath(other)}/reveal-secret`],
      ['GET', `/api/admin/dapps/${other.dappId}/events`],
      ['POST', `/api/admin/dapps/${other.dappId}/events/${e?.id}/replay`],
      ['POST', `/api/admin/dapps/${owner.dappId}/events/${e?.id}/replay`],
    ] as const) {
      const res = await admin(owner, method, url, method === 'POST' ? { url: receiver.url('/x') } : undefined);
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
    }
    assert.equal((await admin(other, 'GET', endpointPath(other))).json().data.url, receiver.url('/theirs'));
  });

  test('the delivery log pages by cursor and filters by state; replay delivers a failed event again', async () => {
    await admin(owner, 'POST', endpointPath(owner), { url: receiver.url('/log') });
    const appended = await appendEvents(owner, 5);
    const base = `/api/admin/dapps/${owner.dappId}/events`;
    let res = await admin(owner, 'GET', `${base}?limit=3`);
    assert.equal(res.statusCode, 200, res.body);
    const page1 = pageWire.parse(res.json().data);
    assert.deepEqual(
      page1.events.map((e) => e.id),
      appended
        .slice(-3)
        .reverse()
        .map((e) => e.id),
    );
    res = await admin(owner, 'GET', `${base}?limit=3&before=${page1.nextCursor}`);
    const page2 = pageWire.parse(res.json().data);
    assert.deepEqual(
      page2.events.map((e) => e.id),
      appended
        .slice(0, 2)
        .reverse()
        .map((e) => e.id),
    );
    assert.equal(page2.nextCursor, null);
    assert.equal((await admin(owner, 'GET', `${base}?before=abc`)).statusCode, 400);

    const target = appended[0];
    assert.ok(target);
    await ctx.deps.store.lifecycleEvents.markAttemptFailed({ id: target.id, error: 'boom', nextAttemptAt: undefined });
    res = await admin(owner, 'GET', `${base}?state=failed`);
    assert.deepEqual(
      pageWire.parse(res.json().data).events.map((e) => [e.id, e.lastError]),
      [[target.id, 'boom']],
    );
    res = await admin(owner, 'POST', `${base}/${target.id}/replay`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(eventWire.parse(res.json().data).state, 'pending');
    receiver.requests.length = 0;
    await ctx.deps.lifecycleEvents.deliverer.runOnce();
    const secret = (await admin(owner, 'POST', `${endpointPath(owner)}/reveal-secret`)).json().data.signingSecret;
    const replayed = receiver.requests.find((r) => r.headers['webhook-id'] === target.id);
    assert.equal(signedWith(secret, replayed), true);
  });

  test('/openapi.json documents the routes', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, unknown>;
    };
    for (const p of [
      '/api/admin/dapps/{dappId}/event-endpoint',
      '/api/admin/dapps/{dappId}/event-endpoint/reveal-secret',
      '/api/admin/dapps/{dappId}/events',
      '/api/admin/dapps/{dappId}/events/{eventId}/replay',
    ]) {
      assert.ok(doc.paths[p], p);
    }
  });
});

async function appendEvents(t: Tenant, n: number) {
  const events = Array.from({ length: n }, (_, i) => ({
    id: `evt_${randomUUID()}`,
    dappId: t.dappId,
    type: 'sponsorship.signed',
    opKey: `op-${randomUUID()}`,
    payload: JSON.stringify({ type: 'sponsorship.signed', data: { i } }),
    createdAt: Date.now() + i,
  }));
  await ctx.deps.store.lifecycleEvents.append(events);
  return events;
}
