import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Store } from '../src/store/store.js';
import { BACKEND, dropTestSchema, openTestStore } from './helpers/testContext.js';

/**
 * The nonce lanes of a gas tank (migration 0030): never the same lane twice while the counter turns, on one store or
 * on two instances of one PostgreSQL database at once; a lane signs once, for the dApp it was handed to, with the
 * nonce recorded for it, while it is fresh.
 */
describe(`MEE nonce lanes (${BACKEND})`, () => {
  const opened: { store: Store; schema: string | undefined }[] = [];
  after(async () => {
    for (const o of opened) await o.store.close();
    await dropTestSchema(opened[0]?.schema);
  });

  test('concurrent allocations get distinct lanes, also from two instances of one database', async () => {
    const a = await openTestStore();
    opened.push(a);
    const b = BACKEND === 'postgres' ? await openTestStore(a.schema === undefined ? {} : { schema: a.schema }) : a;
    if (b !== a) opened.push(b);
    const lanes = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        (i % 2 === 0 ? a : b).store.meeNonceLanes.allocate({ tankId: 'tank_1', dappId: 'd1', now: 1000 + i }),
      ),
    );
    assert.equal(new Set(lanes).size, 60);
    assert.deepEqual(
      [...lanes].sort((x, y) => x - y),
      Array.from({ length: 60 }, (_, i) => i + 1),
    );
    // Another tank counts on its own.
    assert.equal(await a.store.meeNonceLanes.allocate({ tankId: 'tank_2', dappId: 'd1', now: 1 }), 1);
  });

  test('a lane is claimed once, by its dApp, with its recorded nonce, while fresh', async () => {
    const { store } = opened[0] ?? (await openTestStore());
    const lanes = store.meeNonceLanes;
    const lane = await lanes.allocate({ tankId: 'tank_3', dappId: 'dA', now: 10_000 });
    await lanes.recordNonce({ tankId: 'tank_3', lane, nonce: 42n });
    const claim = (over: Partial<Parameters<typeof lanes.claim>[0]> = {}) =>
      lanes.claim({ tankId: 'tank_3', lane, dappId: 'dA', nonce: 42n, allocatedAfter: 9_000, now: 11_000, ...over });
    assert.equal(await claim({ dappId: 'dB' }), false, 'another dApp');
    assert.equal(await claim({ nonce: 43n }), false, 'another nonce');
    assert.equal(await claim({ allocatedAfter: 10_000 }), false, 'stale');
    assert.equal(await claim({ tankId: 'tank_4' }), false, 'another tank');
    const both = await Promise.all([claim(), claim(), claim()]);
    assert.deepEqual(
      both.filter((x) => x),
      [true],
      'exactly one of three concurrent claims',
    );
    assert.equal(await claim(), false, 'signed already');
    assert.deepEqual(await lanes.get({ tankId: 'tank_3', lane }), {
      tankId: 'tank_3',
      lane,
      dappId: 'dA',
      nonce: 42n,
      allocatedAt: 10_000,
    });
  });
});
