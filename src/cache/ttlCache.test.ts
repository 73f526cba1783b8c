import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createTtlCache } from './ttlCache.js';

/** A manual clock. */
function clock(start = 1_000_000) {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
  };
}

/** A loader that counts its calls and returns `<key>#<n>`. */
function countingLoader(key: string) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    load: async () => {
      calls++;
      return `${key}#${calls}`;
    },
  };
}

/** A promise resolved or rejected from outside. */
function deferred<T>() {
  let resolve: (v: T) => void = () => {};
  let reject: (e: unknown) => void = () => {};
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('createTtlCache', () => {
  test('a hit within the TTL returns the cached value without calling the loader again', async () => {
    const c = clock();
    const cache = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10, now: c.now });
    const l = countingLoader('a');
    assert.equal(await cache.get('a', l.load), 'a#1');
    c.advance(999);
    assert.equal(await cache.get('a', l.load), 'a#1');
    assert.equal(l.calls, 1);
  });

  test('keys are cached independently', async () => {
    const cache = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10, now: clock().now });
    const a = countingLoader('a');
    const b = countingLoader('b');
    assert.equal(await cache.get('a', a.load), 'a#1');
    assert.equal(await cache.get('b', b.load), 'b#1');
    assert.equal(await cache.get('a', a.load), 'a#1');
    assert.equal(await cache.get('b', b.load), 'b#1');
    assert.equal(a.calls + b.calls, 2);
  });

  test('an entry expires once ttlMs have passed and is loaded again', async () => {
    const c = clock();
    const cache = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10, now: c.now });
    const l = countingLoader('a');
    assert.equal(await cache.get('a', l.load), 'a#1');
    c.advance(1000);
    assert.equal(await cache.get('a', l.load), 'a#2');
    assert.equal(l.calls, 2);
    // The reloaded value is cached for a new full TTL.
    c.advance(999);
    assert.equal(await cache.get('a', l.load), 'a#2');
    c.advance(1);
    assert.equal(await cache.get('a', l.load), 'a#3');
  });

  test('concurrent misses for one key share a single load', async () => {
    const cache = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10, now: clock().now });
    const d = deferred<string>();
    let calls = 0;
    const load = () => {
      calls++;
      return d.promise;
    };
    const gets = [cache.get('a', load), cache.get('a', load), cache.get('a', load)];
    assert.equal(calls, 1);
    d.resolve('shared');
    assert.deepEqual(await Promise.all(gets), ['shared', 'shared', 'shared']);
    assert.equal(await cache.get('a', load), 'shared');
    assert.equal(calls, 1);
  });

  test('concurrent callers of a failing load all see the error, and it is not cached', async () => {
    const c = clock();
    const cache = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10, now: c.now });
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error('db down');
    };
    const results = await Promise.allSettled([cache.get('a', failing), cache.get('a', failing)]);
    assert.equal(calls, 1);
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      assert.equal(r.status === 'rejected' && r.reason instanceof Error && r.reason.message, 'db down');
    }
    // Next call, same instant: the loader runs again and its value is cached.
    const l = countingLoader('a');
    assert.equal(await cache.get('a', l.load), 'a#1');
    assert.equal(await cache.get('a', l.load), 'a#1');
    assert.equal(l.calls, 1);
  });

  test('a synchronously throwing loader rejects and is not cached', async () => {
    const cache = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10, now: clock().now });
    await assert.rejects(
      cache.get('a', () => {
        throw new Error('boom');
      }),
      { message: 'boom' },
    );
    assert.equal(await cache.get('a', async () => 'ok'), 'ok');
  });

  test('delete() drops a cached entry', async () => {
    const cache = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10, now: clock().now });
    const l = countingLoader('a');
    await cache.get('a', l.load);
    cache.delete('a');
    assert.equal(await cache.get('a', l.load), 'a#2');
  });

  test('delete() during an in-flight load keeps the possibly stale value out of the cache', async () => {
    const cache = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10, now: clock().now });
    const d = deferred<string>();
    const inflight = cache.get('a', () => d.promise);
    cache.delete('a');
    d.resolve('stale');
    // The caller that started the load still gets its result...
    assert.equal(await inflight, 'stale');
    // ...but the next get loads afresh.
    const l = countingLoader('a');
    assert.equal(await cache.get('a', l.load), 'a#1');
    assert.equal(l.calls, 1);
  });

  test('a load started after delete() is not overwritten by the earlier, stale load', async () => {
    const cache = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10, now: clock().now });
    const old = deferred<string>();
    const fresh = deferred<string>();
    const first = cache.get('a', () => old.promise);
    cache.delete('a');
    const second = cache.get('a', () => fresh.promise);
    fresh.resolve('fresh');
    assert.equal(await second, 'fresh');
    old.resolve('stale');
    assert.equal(await first, 'stale');
    assert.equal(await cache.get('a', async () => 'reloaded'), 'fresh');
  });

  test('clear() during an in-flight load also keeps it out of the cache', async () => {
    const cache = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10, now: clock().now });
    const d = deferred<string>();
    const inflight = cache.get('a', () => d.promise);
    cache.clear();
    d.resolve('stale');
    assert.equal(await inflight, 'stale');
    assert.equal(await cache.get('a', async () => 'fresh'), 'fresh');
  });

  test('clear() drops every entry', async () => {
    const cache = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10, now: clock().now });
    await cache.get('a', async () => 'a1');
    await cache.get('b', async () => 'b1');
    cache.clear();
    assert.equal(await cache.get('a', async () => 'a2'), 'a2');
    assert.equal(await cache.get('b', async () => 'b2'), 'b2');
  });

  test('ttlMs 0 never caches, but concurrent misses still share one load', async () => {
    const cache = createTtlCache<string>({ ttlMs: 0, maxEntries: 10, now: clock().now });
    const l = countingLoader('a');
    assert.equal(await cache.get('a', l.load), 'a#1');
    assert.equal(await cache.get('a', l.load), 'a#2');
    assert.equal(await cache.get('a', l.load), 'a#3');
    const d = deferred<string>();
    let calls = 0;
    const load = () => {
      calls++;
      return d.promise;
    };
    const both = Promise.all([cache.get('b', load), cache.get('b', load)]);
    d.resolve('b');
    assert.deepEqual(await both, ['b', 'b']);
    assert.equal(calls, 1);
  });

  test('maxEntries bounds the cache by evicting the oldest entry', async () => {
    const cache = createTtlCache<string>({ ttlMs: 60_000, maxEntries: 2, now: clock().now });
    const a = countingLoader('a');
    const b = countingLoader('b');
    const c = countingLoader('c');
    await cache.get('a', a.load);
    await cache.get('b', b.load);
    await cache.get('c', c.load); // evicts a
    assert.equal(await cache.get('b', b.load), 'b#1');
    assert.equal(await cache.get('c', c.load), 'c#1');
    assert.equal(await cache.get('a', a.load), 'a#2'); // reloaded, evicts b
    assert.equal(await cache.get('c', c.load), 'c#1');
    assert.equal(await cache.get('b', b.load), 'b#2');
    assert.deepEqual([a.calls, b.calls, c.calls], [2, 2, 1]);
  });

  test('maxEntries 1 keeps only the latest key', async () => {
    const cache = createTtlCache<string>({ ttlMs: 60_000, maxEntries: 1, now: clock().now });
    const a = countingLoader('a');
    const b = countingLoader('b');
    await cache.get('a', a.load);
    assert.equal(await cache.get('a', a.load), 'a#1');
    await cache.get('b', b.load);
    assert.equal(await cache.get('b', b.load), 'b#1');
    assert.equal(await cache.get('a', a.load), 'a#2');
  });
});

describe('eviction', () => {
  test('least recently used first: a hit refreshes an entry', async () => {
    const cache = createTtlCache<string>({ ttlMs: 60_000, maxEntries: 2, now: clock().now });
    const a = countingLoader('a');
    const b = countingLoader('b');
    const c = countingLoader('c');
    await cache.get('a', a.load);
    await cache.get('b', b.load);
    await cache.get('a', a.load); // a is now the most recently used
    await cache.get('c', c.load); // evicts b, not a
    assert.equal(await cache.get('a', a.load), 'a#1');
    assert.equal(await cache.get('b', b.load), 'b#2');
  });

  test('the bound holds under churn: 30,000 keys through 10,000 slots keep the newest, drop the oldest', async () => {
    // What eviction costs per miss is measured by bench/cacheEviction.ts, not here (no timed tests).
    const cache = createTtlCache<number>({ ttlMs: 60_000, maxEntries: 10_000, now: clock().now });
    for (let i = 0; i < 30_000; i++) await cache.get(`k${i}`, async () => i);
    let loads = 0;
    assert.equal(await cache.get('k29999', async () => ++loads), 29_999, 'the newest is cached');
    assert.equal(await cache.get('k20000', async () => ++loads), 20_000, 'the oldest of the newest 10,000 too');
    assert.equal(loads, 0);
    assert.equal(await cache.get('k19999', async () => ++loads), 1, 'one older was evicted');
  });

  test('with a generation, an entry is a miss as soon as the generation moves, however young', async () => {
    let gen = 7;
    const cache = createTtlCache<string>({ ttlMs: 60_000, maxEntries: 10, now: clock().now, generation: () => gen });
    const l = countingLoader('k');
    assert.equal(await cache.get('k', l.load), 'k#1');
    assert.equal(await cache.get('k', l.load), 'k#1', 'unchanged generation: a hit');
    gen = 8;
    assert.equal(await cache.get('k', l.load), 'k#2', 'another process wrote: loaded again');
    assert.equal(await cache.get('k', l.load), 'k#2');
    assert.equal(l.calls, 2);
  });

  test('a value whose load began before the generation moved is stored as stale', async () => {
    let gen = 1;
    const cache = createTtlCache<string>({ ttlMs: 60_000, maxEntries: 10, now: clock().now, generation: () => gen });
    const d = deferred<string>();
    const first = cache.get('k', () => d.promise);
    gen = 2; // another process changed the row while the first load was reading it
    d.resolve('old');
    assert.equal(await first, 'old');
    assert.equal(await cache.get('k', async () => 'new'), 'new', 'the earlier load was not kept as current');
  });

  test('a caller arriving after the generation moved does not join a load begun before it', async () => {
    let gen = 1;
    const cache = createTtlCache<string>({ ttlMs: 60_000, maxEntries: 10, now: clock().now, generation: () => gen });
    const old = deferred<string>();
    const first = cache.get('k', () => old.promise);
    gen = 2;
    let loads = 0;
    const second = cache.get('k', async () => {
      loads++;
      return 'new';
    });
    old.resolve('old');
    assert.equal(await first, 'old');
    assert.equal(await second, 'new', 'its own load, under the new generation');
    assert.equal(loads, 1);
    assert.equal(await cache.get('k', async () => 'again'), 'new', 'and that one is what is cached');
  });

  test('ttlOf gives each value its own life, and 0 keeps a value out of the cache', async () => {
    const c = clock();
    const cache = createTtlCache<string>({
      ttlMs: 0,
      maxEntries: 10,
      now: c.now,
      ttlOf: (v) => (v.startsWith('long') ? 60_000 : v.startsWith('short') ? 1_000 : 0),
    });
    const long = countingLoader('long');
    const short = countingLoader('short');
    const none = countingLoader('none');
    await cache.get('a', long.load);
    await cache.get('b', short.load);
    await cache.get('c', none.load);
    c.advance(999);
    await cache.get('a', long.load);
    await cache.get('b', short.load);
    await cache.get('c', none.load);
    assert.deepEqual([long.calls, short.calls, none.calls], [1, 1, 2], 'a value with life 0 is loaded every time');
    c.advance(2);
    assert.equal(await cache.get('b', short.load), 'short#2', 'the short one expired');
    assert.equal(await cache.get('a', long.load), 'long#1', 'the long one did not');
  });

  test('ttlOf entries are bounded by maxEntries like any other', async () => {
    const cache = createTtlCache<string>({ ttlMs: 0, maxEntries: 2, now: clock().now, ttlOf: () => 60_000 });
    const loads: string[] = [];
    const load = (k: string) => async () => {
      loads.push(k);
      return k;
    };
    for (const k of ['a', 'b', 'c', 'a']) await cache.get(k, load(k));
    assert.deepEqual(loads, ['a', 'b', 'c', 'a'], 'a was evicted by c (least recently used)');
  });
});
