import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createSecretBox } from '../src/crypto/secretBox.js';
import { EVENT_DELIVERY_DEFAULTS, startEventDeliverer } from '../src/lifecycleEvents/eventDeliverer.js';
import { createEventEndpointService } from '../src/lifecycleEvents/eventEndpointService.js';
import { createLogger } from '../src/logger.js';
import type { NewLifecycleEvent } from '../src/store/events/lifecycleEventRepository.js';
import { openStore, type Store } from '../src/store/store.js';
import { createSignedEventPoster } from '../src/webhooks/signedEventPost.js';
import { createWebhookUrlPolicy } from '../src/webhooks/webhookUrlPolicy.js';
import {
  BACKEND,
  dropTestSchema,
  fakeResolver,
  insertBareDapp,
  openTestStore,
  TEST_MASTER_KEY,
} from './helpers/testContext.js';
import { answer, type Receiver, startReceiver } from './helpers/webhookReceiver.js';

/**
 * Two instances' deliverers on one database (a SQLite file, or a PostgreSQL schema with PATRON_TEST_DATABASE_URL),
 * running their loops at once against a real receiver: every event is posted once, in order per op; an idle
 * deliverer reads (never writes) until something is due, and finds another instance's events by its slow poll.
 */
const secretBox = createSecretBox(TEST_MASTER_KEY);
const logger = createLogger({ level: 'silent' });
let dir: string;
let receiver: Receiver;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-events-2-'));
  receiver = await startReceiver(answer({ ok: true }));
});
after(async () => {
  await receiver.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function twoStores(name: string): Promise<{ a: Store; b: Store; close(): Promise<void> }> {
  if (BACKEND === 'sqlite') {
    const file = path.join(dir, `${name}.db`);
    const a = await openStore({ storage: { kind: 'sqlite', file } });
    const b = await openStore({ storage: { kind: 'sqlite', file } });
    return { a, b, close: async () => void (await Promise.all([a.close(), b.close()])) };
  }
  const first = await openTestStore();
  const second = await openTestStore({ schema: first.schema ?? '' });
  return {
    a: first.store,
    b: second.store,
    async close() {
      await Promise.all([first.store.close(), second.store.close()]);
      await dropTestSchema(first.schema);
    },
  };
}

const deliverer = (store: Store, over: { intervalMs: number; idlePollMs: number }) =>
  startEventDeliverer({
    ...EVENT_DELIVERY_DEFAULTS,
    ...over,
    events: store.lifecycleEvents,
    endpoints: store.eventEndpoints,
    secretBox,
    poster: createSignedEventPoster({ timeoutMs: 2000, allowPrivate: true, resolve: fakeResolver, now: Date.now }),
    logger,
    now: Date.now,
  });

const event = (dappId: string, opKey: string, n: number): NewLifecycleEvent => ({
  id: `evt_${randomUUID()}`,
  dappId,
  type: 'sponsorship.signed',
  opKey,
  payload: JSON.stringify({ type: 'sponsorship.signed', data: { opKey, n } }),
  createdAt: Date.now(),
});

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe(`two deliverers on one database (${BACKEND})`, () => {
  test('each event is posted once, in order per op, whichever instance posts it', async () => {
    const { a, b, close } = await twoStores('once');
    const loops = [a, b].map((s) => deliverer(s, { intervalMs: 5, idlePollMs: 20 }));
    try {
      const dappId = await insertBareDapp(a, 'twice');
      await createEventEndpointService({
        endpoints: a.eventEndpoints,
        events: a.lifecycleEvents,
        dapps: a.dapps,
        urlPolicy: createWebhookUrlPolicy({ allowPrivate: true, resolve: fakeResolver }),
        secretBox,
        now: Date.now,
      }).set({ dappId, url: receiver.url('/two'), active: true });
      receiver.requests.length = 0;
      const written: NewLifecycleEvent[] = [];
      for (let n = 0; n < 60; n++) written.push(event(dappId, `op-${n % 6}`, n));
      // Written by both instances, in slices, while both loops run.
      for (let i = 0; i < written.length; i += 10) {
        await (i % 20 === 0 ? a : b).lifecycleEvents.append(written.slice(i, i + 10));
      }
      await until(() => receiver.requests.length >= written.length, 20_000);
      await new Promise((r) => setTimeout(r, 100));
      const ids = receiver.requests.map((r) => String(r.headers['webhook-id']));
      assert.equal(ids.length, written.length, 'no event posted twice');
      assert.deepEqual([...ids].sort(), written.map((e) => e.id).sort());
      for (let op = 0; op < 6; op++) {
        const inOrder = written.filter((e) => e.opKey === `op-${op}`).map((e) => e.id);
        assert.deepEqual(
          ids.filter((id) => inOrder.includes(id)),
          inOrder,
          `op-${op} in order`,
        );
      }
    } finally {
      await Promise.all(loops.map((l) => l.stop()));
      await close();
    }
  });

  test('idle: nothing due is a read; another instance’s event is found by the slow poll, a wake is at once', async () => {
    const { a, b, close } = await twoStores('idle');
    const loop = deliverer(a, { intervalMs: 10, idlePollMs: 1500 });
    try {
      const dappId = await insertBareDapp(a, 'idle');
      await createEventEndpointService({
        endpoints: a.eventEndpoints,
        events: a.lifecycleEvents,
        dapps: a.dapps,
        urlPolicy: createWebhookUrlPolicy({ allowPrivate: true, resolve: fakeResolver }),
        secretBox,
        now: Date.now,
      }).set({ dappId, url: receiver.url('/idle'), active: true });
      assert.equal(await a.lifecycleEvents.nextDueAt(), undefined, 'nothing pending');
      await new Promise((r) => setTimeout(r, 1600));
      receiver.requests.length = 0;
      // Another instance's event: no wake here, so found by the slow poll, not by the next 10 ms tick.
      const other = event(dappId, 'op-other', 1);
      await b.lifecycleEvents.append([other]);
      assert.ok(((await a.lifecycleEvents.nextDueAt()) ?? Number.POSITIVE_INFINITY) <= Date.now());
      await until(() => receiver.requests.length === 1, 5_000);
      // This instance's own event, with a wake: the next tick.
      // Right after that look, so the next slow poll is 1.5 s away: only the wake explains a quicker delivery.
      const own = event(dappId, 'op-own', 2);
      await a.lifecycleEvents.append([own]);
      const woken = Date.now();
      loop.wake();
      await until(() => receiver.requests.length === 2, 5_000);
      assert.ok(Date.now() - woken < 1_000, `woken: ${Date.now() - woken} ms`);
      // The receiver answers before the deliverer marks the event delivered: wait for the mark, not for the post.
      await until(async () => (await a.lifecycleEvents.nextDueAt()) === undefined, 5_000);
    } finally {
      await loop.stop();
      await close();
    }
  });
});
