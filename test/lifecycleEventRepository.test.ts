import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { NewLifecycleEvent } from '../src/store/events/lifecycleEventRepository.js';
import type { Store } from '../src/store/store.js';
import { BACKEND, dropTestSchema, insertBareDapp, openTestStore } from './helpers/testContext.js';

/** The lifecycle events' outbox on the configured back end: order per op, leases, retries, the log and replay. */
let store: Store;
let schema: string | undefined;
let mine: string;
let theirs: string;

before(async () => {
  ({ store, schema } = await openTestStore());
  [mine, theirs] = [await insertBareDapp(store, 'events'), await insertBareDapp(store, 'events')];
});
after(async () => {
  await store.close();
  await dropTestSchema(schema);
});

const event = (dappId: string, opKey: string, type: string, createdAt = 1_000): NewLifecycleEvent => ({
  id: `evt_${randomUUID()}`,
  dappId,
  type,
  opKey,
  payload: JSON.stringify({ type, opKey }),
  createdAt,
});

/** Drains the outbox the way the deliverer does, delivering everything claimed; returns the ids in delivery order. */
async function drain(now: number): Promise<string[]> {
  const order: string[] = [];
  for (;;) {
    const claimed = await store.lifecycleEvents.claimDue({ now, leaseMs: 30_000, limit: 10 });
    if (claimed.length === 0) return order;
    for (const e of claimed) {
      order.push(e.id);
      await store.lifecycleEvents.markDelivered({ id: e.id, now });
    }
  }
}

describe(`lifecycle event outbox (${BACKEND})`, () => {
  test('an op key is delivered in order: a later event is not claimed while an earlier one is pending', async () => {
    const opA = `op-${randomUUID()}`;
    const opB = `op-${randomUUID()}`;
    const a1 = event(mine, opA, 'sponsorship.signed');
    const b1 = event(mine, opB, 'sponsorship.signed');
    const a2 = event(mine, opA, 'sponsorship.included');
    await store.lifecycleEvents.append([a1, b1, a2]);

    const first = await store.lifecycleEvents.claimDue({ now: 2_000, leaseMs: 30_000, limit: 10 });
    assert.deepEqual(
      first.map((e) => e.id),
      [a1.id, b1.id],
      'the heads of both ops, not a2 behind a1',
    );
    // a1 fails once: a2 still waits behind it, through the backoff.
    await store.lifecycleEvents.markAttemptFailed({ id: a1.id, error: 'HTTP 500', nextAttemptAt: 5_000 });
    await store.lifecycleEvents.markDelivered({ id: b1.id, now: 2_000 });
    assert.deepEqual(await store.lifecycleEvents.claimDue({ now: 3_000, leaseMs: 30_000, limit: 10 }), []);
    assert.deepEqual(await drain(5_000), [a1.id, a2.id]);

    const log = await store.lifecycleEvents.listByDapp({ dappId: mine, limit: 10 });
    const a1Row = log.find((e) => e.id === a1.id);
    assert.equal(a1Row?.state, 'delivered');
    assert.equal(a1Row?.attempts, 2);
    assert.equal(a1Row?.lastError, null, 'a delivery clears the last error');
  });

  test('a claim holds an event until its lease lapses (an instance that died mid-post frees it)', async () => {
    const e = event(mine, `op-${randomUUID()}`, 'sponsorship.signed', 10_000);
    await store.lifecycleEvents.append([e]);
    const claimed = await store.lifecycleEvents.claimDue({ now: 10_000, leaseMs: 1_000, limit: 10 });
    assert.deepEqual(
      claimed.map((c) => c.id),
      [e.id],
    );
    assert.deepEqual(await store.lifecycleEvents.claimDue({ now: 10_500, leaseMs: 1_000, limit: 10 }), []);
    const again = await store.lifecycleEvents.claimDue({ now: 11_000, leaseMs: 1_000, limit: 10 });
    assert.deepEqual(
      again.map((c) => [c.id, c.attempts]),
      [[e.id, 2]],
    );
    await store.lifecycleEvents.markDelivered({ id: e.id, now: 11_000 });
  });

  test('after the last attempt an event is failed and no longer blocks its op; replay sends it again', async () => {
    const op = `op-${randomUUID()}`;
    const e1 = event(theirs, op, 'sponsorship.signed', 20_000);
    const e2 = event(theirs, op, 'sponsorship.expired', 20_000);
    await store.lifecycleEvents.append([e1, e2]);
    await store.lifecycleEvents.claimDue({ now: 20_000, leaseMs: 1_000, limit: 10 });
    await store.lifecycleEvents.markAttemptFailed({ id: e1.id, error: 'timeout', nextAttemptAt: undefined });
    assert.deepEqual(await drain(20_000), [e2.id]);
    const failed = await store.lifecycleEvents.findInDapp({ dappId: theirs, eventId: e1.id });
    assert.equal(failed?.state, 'failed');
    assert.equal(failed?.lastError, 'timeout');

    assert.equal(await store.lifecycleEvents.replay({ dappId: mine, eventId: e1.id, now: 21_000 }), false, 'tenancy');
    assert.equal(await store.lifecycleEvents.replay({ dappId: theirs, eventId: e1.id, now: 21_000 }), true);
    const replayed = await store.lifecycleEvents.findInDapp({ dappId: theirs, eventId: e1.id });
    assert.deepEqual([replayed?.state, replayed?.attempts, replayed?.lastError], ['pending', 0, null]);
    assert.deepEqual(await drain(21_000), [e1.id]);
  });

  test('the delivery log is per dApp, newest first, paged by seq, filtered by state', async () => {
    const op = `op-${randomUUID()}`;
    const dapp = await insertBareDapp(store, 'events-log');
    const events = [1, 2, 3, 4, 5].map((i) => event(dapp, op, `t${i}`, 30_000 + i));
    await store.lifecycleEvents.append(events);
    const page1 = await store.lifecycleEvents.listByDapp({ dappId: dapp, limit: 2 });
    assert.deepEqual(
      page1.map((e) => e.type),
      ['t5', 't4'],
    );
    const page2 = await store.lifecycleEvents.listByDapp({ dappId: dapp, limit: 2, beforeSeq: page1[1]?.seq });
    assert.deepEqual(
      page2.map((e) => e.type),
      ['t3', 't2'],
    );
    assert.equal((await store.lifecycleEvents.listByDapp({ dappId: dapp, limit: 10, state: 'delivered' })).length, 0);
    assert.equal(await store.lifecycleEvents.findInDapp({ dappId: mine, eventId: events[0]?.id ?? '' }), undefined);
  });

  test('two claimers at once never take the same event', async () => {
    const dapp = await insertBareDapp(store, 'events-race');
    const events = Array.from({ length: 20 }, (_, i) =>
      event(dapp, `op-${randomUUID()}`, 'sponsorship.signed', 40_000 + i),
    );
    await store.lifecycleEvents.append(events);
    const [x, y] = await Promise.all([
      store.lifecycleEvents.claimDue({ now: 40_100, leaseMs: 30_000, limit: 15 }),
      store.lifecycleEvents.claimDue({ now: 40_100, leaseMs: 30_000, limit: 15 }),
    ]);
    const ids = [...x, ...y].map((e) => e.id).filter((id) => events.some((e) => e.id === id));
    assert.equal(new Set(ids).size, ids.length, 'no event in both claims');
    assert.equal(ids.length, 20);
  });

  test('the endpoint: one per dApp, replaced whole, gone with its dApp', async () => {
    const dapp = await insertBareDapp(store, 'events-endpoint');
    const save = (url: string, sealed: string) =>
      store.eventEndpoints.upsert({ dappId: dapp, url, active: true, signingSecretCiphertext: sealed, now: 1 });
    assert.equal(await save('https://a.example/hook', 'sealed-1'), 'saved');
    assert.equal(await save('https://b.example/hook', 'sealed-2'), 'saved');
    const found = await store.eventEndpoints.findSealed(dapp);
    assert.deepEqual([found?.url, found?.signingSecretCiphertext], ['https://b.example/hook', 'sealed-2']);
    assert.equal(
      await store.eventEndpoints.upsert({
        dappId: 'no-such-dapp',
        url: 'https://a.example',
        active: true,
        signingSecretCiphertext: 'x',
        now: 1,
      }),
      'no-dapp',
    );
    assert.equal(await store.eventEndpoints.delete(dapp), true);
    assert.equal(await store.eventEndpoints.findSealed(dapp), undefined);
  });
});
