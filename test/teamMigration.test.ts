import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';
import { listMigrations } from '../src/store/db/migrate.js';
import { Sqlite } from '../src/store/db/sqliteDriver.js';
import { TEST_DATABASE_URL } from './helpers/testContext.js';

/**
 * Migration 0026 on a database with an account from before it: the account's login becomes its team's owner, under
 * the account's id, with its password, its dashboard session and its auth token carried over; the audit log starts
 * empty. Run on SQLite always, and on PostgreSQL when PATRON_TEST_DATABASE_URL is set.
 */

const BEFORE = (name: string) => name < '0026';
const ACCOUNT = '11111111-1111-4111-8111-111111111111';

const seed = [
  `INSERT INTO accounts (id, email, created_at) VALUES ('${ACCOUNT}', 'first@example.com', 1000)`,
  `INSERT INTO account_passwords (account_id, password_hash, updated_at) VALUES ('${ACCOUNT}', 'scrypt$hash', 1001)`,
  `INSERT INTO dashboard_sessions (id, session_hash, account_id, created_at, last_seen_at, expires_at)
     VALUES ('s1', 'sessionhash', '${ACCOUNT}', 1, 1, 9999999999999)`,
  `INSERT INTO auth_tokens (id, account_id, token_hash, prefix, name, created_at) VALUES
     ('t1', '${ACCOUNT}', 'tokenhash', 'pat.x', 'ci', 1)`,
];

const checks = [
  ['SELECT id, account_id, email, role FROM account_members', [[ACCOUNT, ACCOUNT, 'first@example.com', 'owner']]],
  ['SELECT member_id, password_hash FROM member_passwords', [[ACCOUNT, 'scrypt$hash']]],
  ['SELECT id, member_id FROM dashboard_sessions', [['s1', ACCOUNT]]],
  ['SELECT id, member_id FROM auth_tokens', [['t1', ACCOUNT]]],
  ['SELECT COUNT(*) AS n FROM audit_log', [['0']]],
] as const;

const asText = (rows: Record<string, unknown>[]) => rows.map((r) => Object.values(r).map(String));

test('SQLite: an existing login becomes its account owner, with its password, session and token', () => {
  const db = new Sqlite(':memory:');
  const all = listMigrations('sqlite');
  for (const m of all.filter((m) => BEFORE(m.name))) db.exec(m.sql);
  for (const s of seed) db.exec(s);
  for (const m of all.filter((m) => !BEFORE(m.name))) db.exec(m.sql);
  for (const [query, expected] of checks) {
    assert.deepEqual(asText(db.prepare(query).all() as Record<string, unknown>[]), expected, query);
  }
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE name = 'account_passwords'").all();
  assert.deepEqual(tables, [], 'the old password table is gone');
  db.close();
});

test('PostgreSQL: the same', { skip: TEST_DATABASE_URL === undefined }, async () => {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  const schema = `team_migration_${randomBytes(4).toString('hex')}`;
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.query(`SET search_path TO ${schema}`);
    const all = listMigrations('postgres');
    for (const m of all.filter((m) => BEFORE(m.name))) await client.query(m.sql);
    for (const s of seed) await client.query(s);
    for (const m of all.filter((m) => !BEFORE(m.name))) await client.query(m.sql);
    for (const [query, expected] of checks) {
      assert.deepEqual(asText((await client.query(query)).rows), expected, query);
    }
  } finally {
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
    await client.end();
  }
});
