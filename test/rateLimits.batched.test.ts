import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { type CountResult, createPgBatchedCounts } from '../src/rateLimit/pgBatchedCounts.js';
import { BACKEND, dropTestSchema, openTestStore, TEST_DATABASE_URL } from './helpers/testContext.js';

/**
 * The shared rate-limit counts on PostgreSQL (rateLimit/pgBatchedCounts.ts): the spends waiting in a process go
 * to the database in one upsert, and the counts stay exact across processes: two counters on their own pools (two
 * processes, as far as the database can tell) admit exactly the budget between them, however the spends batch.
 */
const skip = BACKEND !== 'postgres' && 'needs PATRON_TEST_DATABASE_URL (SQLite counts in one process, in memory)';
let schema: string | undefined;
let close: (() => Promise<void>) | undefined;
const pools: pg.Pool[] = [];

before(async () => {
  if (skip !== false) return;
  const opened = await openTestStore();
  schema = opened.schema;
  close = () => opened.store.close();
});
after(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await close?.();
  await dropTestSchema(schema);
});

const poolOnSchema = () => {
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 3, options: `-c search_path=${schema}` });
  pools.push(pool);
  return pool;
};
const unused = async (): Promise<CountResult> => {
  throw new Error('the database answered: no fallback');
};

describe('rate-limit counts batched on PostgreSQL', { skip }, () => {
  test('two processes, 300 spends at once on one key with a budget of 37: exactly 37 admitted, the rest told when', async () => {
    const [one, two] = [
      createPgBatchedCounts({ pool: poolOnSchema() }),
      createPgBatchedCounts({ pool: poolOnSchema() }),
    ];
    const key = `calls.perKey:37/60:${randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        (i % 2 ? one : two)({ key, cost: 1, points: 37, windowMs: 60_000, fallback: unused }),
      ),
    );
    assert.equal(results.filter((r) => r.ok).length, 37);
    for (const r of results) if (!r.ok) assert.ok(r.msBeforeNext > 0 && r.msBeforeNext <= 60_000, `${r.msBeforeNext}`);
    // Over budget: refused from memory from now on, by either.
    assert.equal((await one({ key, cost: 1, points: 37, windowMs: 60_000, fallback: unused })).ok, false);
  });

  test('costs add up within a batch in arrival order, and a new window starts afresh', async () => {
    const counts = createPgBatchedCounts({ pool: poolOnSchema() });
    const key = `simulations.perIp:5/1:${randomUUID()}`;
    const spend = (cost: number) => counts({ key, cost, points: 5, windowMs: 300, fallback: unused });
    const results = await Promise.all([spend(2), spend(2), spend(2), spend(1)]);
    assert.deepEqual(
      results.map((r) => r.ok),
      [true, true, false, false],
      'the third takes places 5-6, the fourth place 7: a refused spend is counted too',
    );
    await new Promise((r) => setTimeout(r, 350));
    assert.equal((await spend(5)).ok, true, 'the window ended');
  });

  test('a database that cannot count: each spend is counted by its fallback, nothing fails', async () => {
    const counts = createPgBatchedCounts({ pool: poolOnSchema(), tableName: 'no_such_table' });
    const results = await Promise.all(
      [1, 2, 3].map((i) =>
        counts({
          key: `x:${i}`,
          cost: 1,
          points: 1,
          windowMs: 1000,
          fallback: async () => (i === 2 ? { ok: false, msBeforeNext: 5 } : { ok: true }),
        }),
      ),
    );
    assert.deepEqual(results, [{ ok: true }, { ok: false, msBeforeNext: 5 }, { ok: true }]);
  });
});
