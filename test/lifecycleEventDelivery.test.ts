import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createSecretBox } from '../src/crypto/secretBox.js';
import { type EventDeliverer, startEventDeliverer } from '../src/lifecycleEvents/eventDeliverer.js';
import { createEventEndpointService, type EventEndpointService } from '../src/lifecycleEvents/eventEndpointService.js';
import { createLogger } from '../src/logger.js';
import type { NewLifecycleEvent } from '../src/store/events/lifecycleEventRepository.js';
import { openStore } from '../src/store/store.js';
import { createSignedEventPoster } from '../src/webhooks/signedEventPost.js';
import { createWebhookUrlPolicy } from '../src/webhooks/webhookUrlPolicy.js';
import { fakeResolver, insertBareDapp, TEST_MASTER_KEY } from './helpers/testContext.js';
import { answer, closedPort, type Receiver, signedWith, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The lifecycle events' deliverer against a real receiver on 127.0.0.1, on a SQLite file (so a second "instance"
 * can open the same database after the first is gone): signatures, retries, order per op, restarts, SSRF.
 */
const secretBox = createSecretBox(TEST_MASTER_KEY);
const logger = createLogger({ level: 'silent' });
const TIMEOUT_MS = 400;
let dir: string;
let receiver: Receiver;
let clock = 1_000_000;
const now = () => clock;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-events-'));
  receiver = await startReceiver(answer({ ok: true }));
});
after(async () => {
  await receiver.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One "instance": a store on the file, its endpoint settings and a deliverer whose rounds the test runs. */
async function instance(file: string, allowPrivate = true, timeoutMs = TIMEOUT_MS) {
  const store = await openStore({ storage: { kind: 'sqlite', file } });
  const endpoints: EventEndpointService = createEventEndpointService({
    endpoints: store.eventEndpoints,
    events: store.lifecycleEvents,
    dapps: store.dapps,
    urlPolicy: createWebhookUrlPolicy({ allowPrivate, resolve: fakeResolver }),
    secretBox,
    now,
  });
  const deliverer: EventDeliverer = startEventDeliverer({
    events: store.lifecycleEvents,
    endpoints: store.eventEndpoints,
    secretBox,
    poster: createSignedEventPoster({ timeoutMs, allowPrivate, resolve: fakeResolver, now }),
    logger,
    now,
    intervalMs: 0,
    idlePollMs: 10_000,
    leaseMs: 5_000,
    maxAttempts: 3,
    backoffMs: 1_000,
    maxBackoffMs: 10_000,
    batchSize: 16,
  });
  return {
    store,
    endpoints,
    deliverer,
    async close() {
      await deliverer.stop();
      await store.close();
    },
  };
}

const event = (dappId: string, opKey: string, type: string): NewLifecycleEvent => ({
  id: `evt_${randomUUID()}`,
  dappId,
  type,
  opKey,
  payload: JSON.stringify({ type, timestamp: new Date(clock).toISOString(), data: { opKey } }),
  createdAt: clock,
});

const receivedIds = () => receiver.requests.map((r) => String(r.headers['webhook-id']));

describe('lifecycle event delivery', () => {
  test('posts the event signed with the endpoint secret, its id as webhook-id, its body as stored', async () => {
    const node = await instance(path.join(dir, 'sign.db'));
    try {
      const dappId = await insertBareDapp(node.store, 'sign');
      const endpoint = await node.endpoints.set({ dappId, url: receiver.url('/events'), active: true });
      const e = event(dappId, 'op-sign', 'sponsorship.signed');
      await node.store.lifecycleEvents.append([e]);
      receiver.requests.length = 0;
      assert.equal(await node.deliverer.runOnce(), 1);
      const got = receiver.requests[0];
      assert.equal(got?.url, '/events');
      assert.equal(got?.headers['webhook-id'], e.id);
      assert.equal(got?.body, e.payload);
      assert.equal(signedWith(endpoint.signingSecret, got, now), true);
      assert.equal(signedWith('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', got, now), false);
      const stored = await node.store.lifecycleEvents.findInDapp({ dappId, eventId: e.id });
      assert.deepEqual([stored?.state, stored?.attempts], ['delivered', 1]);
      assert.equal(await node.deliverer.runOnce(), 0, 'delivered once');
    } finally {
      await node.close();
    }
  });

  test('retries after receiver errors with backoff, then fails for good; replay delivers it', async () => {
    const node = await instance(path.join(dir, 'retry.db'));
    try {
      const dappId = await insertBareDapp(node.store, 'retry');
      await node.endpoints.set({ dappId, url: receiver.url('/events'), active: true });
      const e = event(dappId, 'op-retry', 'sponsorship.included');
      await node.store.lifecycleEvents.append([e]);
      receiver.requests.length = 0;
      receiver.handler = answer({ error: 'down' }, 503);
      assert.equal(await node.deliverer.runOnce(), 0);
      let stored = await node.store.lifecycleEvents.findInDapp({ dappId, eventId: e.id });
      assert.deepEqual(
        [stored?.state, stored?.attempts, stored?.lastError],
        ['pending', 1, 'the endpoint answered HTTP 503'],
      );
      assert.equal(stored?.nextAttemptAt, clock + 1_000, 'the first retry after backoffMs');
      await node.deliverer.runOnce();
      assert.equal(receiver.requests.length, 1, 'not before its time');
      clock += 1_000;
      await node.deliverer.runOnce();
      clock += 2_000;
      await node.deliverer.runOnce();
      stored = await node.store.lifecycleEvents.findInDapp({ dappId, eventId: e.id });
      assert.deepEqual([stored?.state, stored?.attempts], ['failed', 3], 'maxAttempts reached');
      assert.deepEqual(receivedIds(), [e.id, e.id, e.id], 'one id on every attempt');

      receiver.handler = answer({ ok: true });
      clock += 60_000;
      assert.equal(await node.deliverer.runOnce(), 0, 'a failed event is not retried by itself');
      assert.equal(await node.store.lifecycleEvents.replay({ dappId, eventId: e.id, now: clock }), true);
      assert.equal(await node.deliverer.runOnce(), 1);
      assert.equal((await node.store.lifecycleEvents.findInDapp({ dappId, eventId: e.id }))?.state, 'delivered');
    } finally {
      receiver.handler = answer({ ok: true });
      await node.close();
    }
  });

  test("an op's events arrive in order, also when the first needs a retry; other ops are not held", async () => {
    const node = await instance(path.join(dir, 'order.db'));
    try {
      const dappId = await insertBareDapp(node.store, 'order');
      await node.endpoints.set({ dappId, url: receiver.url('/events'), active: true });
      const signed = event(dappId, 'op-1', 'sponsorship.signed');
      const included = event(dappId, 'op-1', 'sponsorship.included');
      const other = event(dappId, 'op-2', 'sponsorship.signed');
      await node.store.lifecycleEvents.append([signed, included, other]);
      receiver.requests.length = 0;
      // The first call for op-1 fails; op-2 goes through meanwhile.
      let refused = false;
      receiver.handler = (req, res) => {
        if (!refused && req.headers['webhook-id'] === signed.id) {
          refused = true;
          return answer('no', 500)(req, res);
        }
        return answer({ ok: true })(req, res);
      };
      assert.equal(await node.deliverer.runOnce(), 1);
      assert.deepEqual(receivedIds().sort(), [signed.id, other.id].sort(), 'included waits behind signed');
      clock += 1_000;
      assert.equal(await node.deliverer.runOnce(), 2, 'signed, then included in the same round');
      assert.deepEqual(receivedIds().slice(2), [signed.id, included.id]);
    } finally {
      receiver.handler = answer({ ok: true });
      await node.close();
    }
  });

  test('survives a restart: a new instance on the same database delivers what the old one left', async () => {
    const file = path.join(dir, 'restart.db');
    const port = await closedPort();
    const first = await instance(file);
    const dappId = await insertBareDapp(first.store, 'restart');
    // The receiver is down while the first instance runs.
    await first.endpoints.set({ dappId, url: `http://127.0.0.1:${port}/events`, active: true });
    const failedOnce = event(dappId, 'op-r', 'sponsorship.signed');
    const claimedAtCrash = event(dappId, 'op-s', 'sponsorship.signed');
    await first.store.lifecycleEvents.append([failedOnce]);
    assert.equal(await first.deliverer.runOnce(), 0);
    // The first instance dies in the middle of a post: its claim is left held.
    await first.store.lifecycleEvents.append([claimedAtCrash]);
    const held = await first.store.lifecycleEvents.claimDue({ now: clock, leaseMs: 5_000, limit: 10 });
    assert.deepEqual(
      held.map((h) => h.id),
      [claimedAtCrash.id],
    );
    await first.close();

    const second = await instance(file);
    try {
      await second.endpoints.set({ dappId, url: receiver.url('/events'), active: true });
      receiver.requests.length = 0;
      clock += 1_000;
      assert.equal(await second.deliverer.runOnce(), 1, 'the retry is due, the held claim is not yet free');
      assert.deepEqual(receivedIds(), [failedOnce.id]);
      clock += 5_000;
      assert.equal(await second.deliverer.runOnce(), 1, 'the dead claim lapsed');
      assert.deepEqual(receivedIds(), [failedOnce.id, claimedAtCrash.id]);
    } finally {
      await second.close();
    }
  });

  test('a receiver that hangs costs one time budget per attempt, and is retried', async () => {
    const node = await instance(path.join(dir, 'hang.db'));
    try {
      const dappId = await insertBareDapp(node.store, 'hang');
      await node.endpoints.set({ dappId, url: receiver.url('/events'), active: true });
      const e = event(dappId, 'op-hang', 'sponsorship.signed');
      await node.store.lifecycleEvents.append([e]);
      receiver.handler = () => new Promise(() => {});
      const started = performance.now();
      assert.equal(await node.deliverer.runOnce(), 0);
      assert.ok(performance.now() - started < TIMEOUT_MS + 1_000, 'bounded by the time budget');
      const stored = await node.store.lifecycleEvents.findInDapp({ dappId, eventId: e.id });
      assert.deepEqual([stored?.state, stored?.lastError], ['pending', `no answer within ${TIMEOUT_MS} ms`]);
    } finally {
      receiver.handler = answer({ ok: true });
      await node.close();
    }
  });

  test("tenants apart: another dApp's endpoint that never answers delays none of this dApp's events, of the same op key either", async () => {
    // Issue 31: B's endpoint that never answered held A's sponsorship.signed of the same op key back for 40 s and
    // more (B's earlier event ordered A's across dApps, and a round waited on every post of its claim).
    const hang = 3_000;
    const node = await instance(path.join(dir, 'tenants.db'), true, hang);
    try {
      const a = await insertBareDapp(node.store, 'a');
      const b = await insertBareDapp(node.store, 'b');
      await node.endpoints.set({ dappId: a, url: receiver.url('/a'), active: true });
      await node.endpoints.set({ dappId: b, url: receiver.url('/b'), active: true });
      const bFirst = event(b, 'op-shared', 'sponsorship.signed');
      const bFlood = Array.from({ length: 40 }, (_, i) => event(b, `op-b-${i}`, 'sponsorship.signed'));
      const aSigned = event(a, 'op-shared', 'sponsorship.signed');
      await node.store.lifecycleEvents.append([bFirst, ...bFlood, aSigned]);
      const started = performance.now();
      let aAt: number | undefined;
      receiver.handler = (req, res) => {
        if (req.url === '/b') return new Promise<void>(() => {});
        aAt ??= performance.now() - started;
        return answer({ ok: true })(req, res);
      };
      const round = node.deliverer.runOnce();
      // The round waits for B's posts before it ends (runOnce); A's event went out long before.
      assert.equal(await round, 1, "A's event delivered; none of B's");
      assert.ok(aAt !== undefined && aAt < hang / 2, `A's event arrived ${aAt?.toFixed(0)} ms in, B hangs ${hang} ms`);
      const bPending = await node.store.lifecycleEvents.listByDapp({ dappId: b, limit: 100, state: 'pending' });
      assert.equal(bPending.length, 41, "B's events wait for B's endpoint");
      const tried = bPending.filter((e) => e.attempts > 0).length;
      assert.ok(tried <= 4, `${tried} of B's events were posted at once: its share of the posts in flight`);
    } finally {
      receiver.handler = answer({ ok: true });
      await node.close();
    }
  });

  test('production rule: an internal endpoint is refused when set, and at delivery if it resolves inside', async () => {
    const node = await instance(path.join(dir, 'ssrf.db'), false);
    try {
      const dappId = await insertBareDapp(node.store, 'ssrf');
      await assert.rejects(node.endpoints.set({ dappId, url: receiver.url('/events'), active: true }), {
        name: 'ValidationError',
      });
      await assert.rejects(
        node.endpoints.set({ dappId, url: 'https://internal.example.com/events', active: true }),
        /loopback, private, link-local or metadata/,
      );
      // A URL stored while it resolved outside (DNS since moved it inside) is checked again at every attempt.
      await node.store.eventEndpoints.upsert({
        dappId,
        url: 'https://mixed.example.com/events',
        active: true,
        signingSecretCiphertext: secretBox.seal('whsec_AAAA'),
        now: clock,
      });
      const e = event(dappId, 'op-ssrf', 'sponsorship.signed');
      await node.store.lifecycleEvents.append([e]);
      assert.equal(await node.deliverer.runOnce(), 0);
      const stored = await node.store.lifecycleEvents.findInDapp({ dappId, eventId: e.id });
      assert.match(stored?.lastError ?? '', /loopback, private, link-local or metadata/);
    } finally {
      await node.close();
    }
  });

  test('the endpoint secret survives a URL change and changes on rotation; no endpoint is a failed attempt', async () => {
    const node = await instance(path.join(dir, 'endpoint.db'));
    try {
      const dappId = await insertBareDapp(node.store, 'endpoint');
      const e = event(dappId, 'op-none', 'sponsorship.signed');
      await node.store.lifecycleEvents.append([e]);
      assert.equal(await node.deliverer.runOnce(), 0);
      const stored = await node.store.lifecycleEvents.findInDapp({ dappId, eventId: e.id });
      assert.equal(stored?.lastError, 'the dApp has no active event endpoint');

      const a = await node.endpoints.set({ dappId, url: receiver.url('/a'), active: true });
      const b = await node.endpoints.set({ dappId, url: receiver.url('/b'), active: false });
      assert.equal(b.signingSecret, a.signingSecret);
      const c = await node.endpoints.set({ dappId, url: receiver.url('/b'), active: true, rotateSecret: true });
      assert.notEqual(c.signingSecret, a.signingSecret);
      assert.equal((await node.endpoints.get(dappId))?.signingSecret, c.signingSecret);
    } finally {
      await node.close();
    }
  });
});
