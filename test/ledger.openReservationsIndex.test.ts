import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../src/store/db/database.js';
import { openReservationsQuery } from '../src/store/ledger/spendLedgerRepository.js';
import { legacyRowQuery } from '../src/store/ledger/userOpSettlement.js';
import { dropTestSchema, TEST_DATABASE_URL } from './helpers/testContext.js';

/** The plan each database makes for `query` (PostgreSQL's with sequential scans forbidden: the table is empty). */
async function planOf(
  handle: Awaited<ReturnType<typeof openDatabase>>,
  compiled: { readonly sql: string; readonly parameters: readonly unknown[] },
): Promise<string> {
  if (handle.kind === 'sqlite') {
    const rows = handle.sqlite?.prepare(`EXPLAIN QUERY PLAN ${compiled.sql}`).all(...compiled.parameters) as {
      detail: string;
    }[];
    return rows.map((r) => r.detail).join('\n');
  }
  return handle.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL enable_seqscan = off`.execute(trx);
    // EXPLAIN takes no bind parameters: the plan of the same text, prepared, with the values given.
    await sql.raw(`PREPARE planned AS ${compiled.sql}`).execute(trx);
    const values = compiled.parameters.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ');
    const rows = await sql.raw<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE planned(${values})`).execute(trx);
    return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

/** Runs `check` on a fresh database of the configured back end. */
async function withDatabase(check: (handle: Awaited<ReturnType<typeof openDatabase>>) => Promise<void>) {
  const schema = TEST_DATABASE_URL ? `t_${randomBytes(6).toString('hex')}` : undefined;
  const handle = await openDatabase({
    storage: TEST_DATABASE_URL ? { kind: 'postgres', url: TEST_DATABASE_URL, poolSize: 2 } : { kind: 'sqlite-memory' },
    ...(schema === undefined ? {} : { pgSchema: schema }),
  });
  try {
    await check(handle);
  } finally {
    await handle.close();
    await dropTestSchema(schema);
  }
}

/**
 * Migration 0021 left one partial index over the open reservations (status 'reserved') in place of two over every
 * row: the settlement follower's release query must still be answered from it, not by reading every row the ledger
 * ever kept. Checked with each database's own plan.
 */
test('the release of closed windows reads the partial index over open reservations', () =>
  withDatabase(async (handle) => {
    const query = openReservationsQuery(handle.db, {
      chainId: 31337,
      paymaster: `0x${'ab'.repeat(20)}`,
      cursorBlock: 100n,
      cursorTimestamp: 1_800_000_000n,
    }).limit(500);
    const plan = await planOf(handle, query.compile());
    assert.match(plan, /spend_reservations_reserved/, plan);
  }));

/**
 * Migration 0024: (chain, userOpHash) is read only for rows made before 0022 (no op key), from a partial index over
 * those rows that a new reservation no longer enters (one B-tree fewer per signed op).
 */
test('a row from before the op key is found by (chain, userOpHash) through the index new rows leave out', () =>
  withDatabase(async (handle) => {
    const query = legacyRowQuery(handle.db, { chainId: 31337, hash: `0x${'cd'.repeat(32)}` });
    const plan = await planOf(handle, query.compile());
    assert.match(plan, /spend_reservations_op\b/, plan);
    assert.doesNotMatch(plan, /spend_reservations_op_key/, plan);
  }));
