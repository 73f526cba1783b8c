import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CHANGE_POLL_MS, cachePolicy, LOCAL_MAX_AGE_MS } from './cachePolicy.js';

describe('cachePolicy', () => {
  test('without a change counter (an in-memory database), or with caching off: the TTL alone', () => {
    assert.deepEqual(cachePolicy({ ttlMs: 2000, maxEntries: 5, externalChanges: undefined, now: Date.now }), {
      ttlMs: 2000,
      maxEntries: 5,
    });
    assert.deepEqual(
      cachePolicy({
        ttlMs: 0,
        maxEntries: 5,
        externalChanges: { generation: () => 1, pollMs: CHANGE_POLL_MS },
        now: Date.now,
      }),
      {
        ttlMs: 0,
        maxEntries: 5,
      },
    );
  });

  test('with one: entries live LOCAL_MAX_AGE_MS, and the counter is read at most every CHANGE_POLL_MS', () => {
    let t = 1_000_000;
    let version = 1;
    let reads = 0;
    const p = cachePolicy({
      ttlMs: 2000,
      maxEntries: 5,
      externalChanges: {
        generation: () => {
          reads++;
          return version;
        },
        pollMs: CHANGE_POLL_MS,
      },
      now: () => t,
    });
    assert.equal(p.ttlMs, LOCAL_MAX_AGE_MS);
    const generation = p.generation;
    assert.ok(generation);
    version = 2;
    assert.equal(generation(), 1, 'within the poll interval: the last value read');
    t += CHANGE_POLL_MS;
    assert.equal(generation(), 2);
    const before = reads;
    generation();
    assert.equal(reads, before, 'no read inside the interval');
  });

  test('a clock stepped back does not stop the poll', () => {
    let t = 1_000_000;
    let version = 1;
    const generation = cachePolicy({
      ttlMs: 2000,
      maxEntries: 5,
      externalChanges: { generation: () => version, pollMs: CHANGE_POLL_MS },
      now: () => t,
    }).generation;
    assert.ok(generation);
    t -= 3_600_000;
    version = 2;
    assert.equal(generation(), 2, 'read again at once, not an hour later');
  });

  test('a counter that costs nothing to read (PostgreSQL’s change feed, pollMs 0) is read on every lookup', () => {
    let version = 1;
    const p = cachePolicy({
      ttlMs: 2000,
      maxEntries: 5,
      externalChanges: { generation: () => version, pollMs: 0 },
      now: () => 1_000_000,
    });
    assert.equal(p.ttlMs, LOCAL_MAX_AGE_MS);
    assert.equal(p.generation?.(), 1);
    version = 2;
    assert.equal(p.generation?.(), 2, 'at once, with no clock moved');
  });
});
