import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cachingResolver } from './cachingResolver.js';
import type { HostResolver } from './webhookUrlPolicy.js';

/** A resolver that answers from a table and counts its lookups per name. */
function countingResolver(answers: Map<string, string[] | Error>) {
  const lookups = new Map<string, number>();
  const resolve: HostResolver = async (host) => {
    lookups.set(host, (lookups.get(host) ?? 0) + 1);
    await new Promise((r) => setImmediate(r));
    const answer = answers.get(host);
    if (answer instanceof Error) throw answer;
    return answer ?? [];
  };
  return { resolve, lookups };
}

describe('cachingResolver', () => {
  test('answers from memory within the TTL, and asks again once it has passed', async () => {
    let t = 1_000;
    const { resolve, lookups } = countingResolver(new Map([['hooks.example.com', ['203.0.113.7']]]));
    const cached = cachingResolver(resolve, { ttlMs: 30_000, now: () => t });
    assert.deepEqual(await cached('hooks.example.com'), ['203.0.113.7']);
    t += 29_999;
    assert.deepEqual(await cached('hooks.example.com'), ['203.0.113.7']);
    assert.equal(lookups.get('hooks.example.com'), 1);
    t += 1;
    assert.deepEqual(await cached('hooks.example.com'), ['203.0.113.7']);
    assert.equal(lookups.get('hooks.example.com'), 2);
  });

  test('a rebound name is seen once the TTL has passed (the caller then checks the new answer)', async () => {
    let t = 0;
    const answers = new Map<string, string[] | Error>([['rebind.example.com', ['203.0.113.7']]]);
    const { resolve } = countingResolver(answers);
    const cached = cachingResolver(resolve, { ttlMs: 5_000, now: () => t });
    assert.deepEqual(await cached('rebind.example.com'), ['203.0.113.7']);
    answers.set('rebind.example.com', ['127.0.0.1']);
    assert.deepEqual(await cached('rebind.example.com'), ['203.0.113.7'], 'within the TTL: the checked answer');
    t += 5_000;
    assert.deepEqual(await cached('rebind.example.com'), ['127.0.0.1'], 'after it: the new answer, to be checked');
  });

  test('concurrent lookups of one name share one query', async () => {
    const { resolve, lookups } = countingResolver(new Map([['hooks.example.com', ['203.0.113.7', '2001:db8::7']]]));
    const cached = cachingResolver(resolve, { ttlMs: 30_000 });
    const answers = await Promise.all(Array.from({ length: 50 }, () => cached('hooks.example.com')));
    assert.equal(lookups.get('hooks.example.com'), 1);
    for (const a of answers) assert.deepEqual(a, ['203.0.113.7', '2001:db8::7']);
  });

  test('names are case-insensitive', async () => {
    const { resolve, lookups } = countingResolver(new Map([['Hooks.Example.com', ['203.0.113.7']]]));
    const cached = cachingResolver(resolve, { ttlMs: 30_000 });
    await cached('Hooks.Example.com');
    await cached('hooks.example.COM');
    assert.equal(lookups.get('Hooks.Example.com'), 1);
    assert.equal(lookups.get('hooks.example.COM'), undefined);
  });

  test('failures and empty answers are not remembered', async () => {
    const answers = new Map<string, string[] | Error>([
      ['down.example.com', new Error('ENOTFOUND')],
      ['empty.example.com', []],
    ]);
    const { resolve, lookups } = countingResolver(answers);
    const cached = cachingResolver(resolve, { ttlMs: 30_000 });
    await assert.rejects(cached('down.example.com'), /ENOTFOUND/);
    await assert.rejects(cached('down.example.com'), /ENOTFOUND/);
    assert.equal(lookups.get('down.example.com'), 2);
    assert.deepEqual(await cached('empty.example.com'), []);
    assert.deepEqual(await cached('empty.example.com'), []);
    assert.equal(lookups.get('empty.example.com'), 2);
    answers.set('down.example.com', ['203.0.113.9']);
    assert.deepEqual(await cached('down.example.com'), ['203.0.113.9'], 'a name that recovers is served at once');
  });

  test('a caller changing its answer does not change what the next caller gets', async () => {
    const { resolve } = countingResolver(new Map([['hooks.example.com', ['203.0.113.7']]]));
    const cached = cachingResolver(resolve, { ttlMs: 30_000 });
    const first = await cached('hooks.example.com');
    first.push('127.0.0.1');
    assert.deepEqual(await cached('hooks.example.com'), ['203.0.113.7']);
  });

  test('a TTL of 0 is the resolver itself: every call looks up', async () => {
    const { resolve, lookups } = countingResolver(new Map([['hooks.example.com', ['203.0.113.7']]]));
    assert.equal(cachingResolver(resolve, { ttlMs: 0 }), resolve);
    const cached = cachingResolver(resolve, { ttlMs: 0 });
    await cached('hooks.example.com');
    await cached('hooks.example.com');
    assert.equal(lookups.get('hooks.example.com'), 2);
  });

  test('the number of remembered names is bounded', async () => {
    const { resolve, lookups } = countingResolver(
      new Map(Array.from({ length: 5 }, (_, i) => [`h${i}.example.com`, [`203.0.113.${i}`]])),
    );
    const cached = cachingResolver(resolve, { ttlMs: 30_000, maxEntries: 3 });
    for (let i = 0; i < 5; i++) await cached(`h${i}.example.com`);
    await cached('h0.example.com'); // evicted by h3/h4: looked up again
    await cached('h4.example.com'); // still remembered
    assert.equal(lookups.get('h0.example.com'), 2);
    assert.equal(lookups.get('h4.example.com'), 1);
  });
});
