import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../src/store/database.js';
import { openReservationsQuery } from '../src/store/spendLedgerRepository.js';
import { dropTestSchema, TEST_DATABASE_URL } from './helpers/testContext.js';

/**
 * Migration 0021 left one partial index over the open reservations (status 'reserved') in place of two over every
 * row: the settlement follower's release query must still be answered from it, not by reading every row the ledger
 * ever kept. Checked with each database's own plan.
 */
test('the release of closed windows reads the partial index over open reservations', async () => {
  const schema = TEST_DATABASE_URL ? `t_${randomBytes(6).toString('hex')}` : undefined;
  const handle = await openDatabase({
    storage: TEST_DATABASE_URL ? { kind: 'postgres', url: TEST_DATABASE_URL, poolSize: 2 } : { kind: 'sqlite-memory' },
    ...(schema === undefined ? {} : { pgSchema: schema }),
  });
  try {
    const query = openReservationsQuery(handle.db, {
      chainId: 31337,
      paymaster: `0x${'ab'.repeat(20)}`,
      cursorBlock: 100n,
      cursorTimestamp: 1_800_000_000n,
    }).limit(500);
    const compiled = query.compile();
    let plan: string;
    if (handle.kind === 'sqlite') {
      const rows = handle.sqlite?.prepare(`EXPLAIN QUERY PLAN ${compiled.sql}`).all(...compiled.parameters) as {
        detail: string;
      }[];
      plan = rows.map((r) => r.detail).join('\n');
    } else {
      // An empty table is read sequentially whatever its indexes: forbid that to see which index the plan can use.
      plan = await handle.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL enable_seqscan = off`.execute(trx);
        // EXPLAIN takes no bind parameters: the plan of the same text, prepared, with the values given.
        await sql.raw(`PREPARE open_rows AS ${compiled.sql}`).execute(trx);
        const values = compiled.parameters.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ');
        const rows = await sql.raw<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE open_rows(${values})`).execute(trx);
        return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
      });
    }
    assert.match(plan, /spend_reservations_reserved/, plan);
  } finally {
    await handle.close();
    await dropTestSchema(schema);
  }
});
