import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import pg from 'pg';
import { NO_CALLER_RESTRICTIONS } from '../src/dappSettings/callerRestrictions.js';
import { listMigrations } from '../src/store/db/migrate.js';
import { Sqlite } from '../src/store/db/sqliteDriver.js';
import { openStore, type Store } from '../src/store/store.js';
import { BACKEND, dropTestSchema, openTestStore, TEST_DATABASE_URL } from './helpers/testContext.js';

/**
 * The token guarantees' column (migration 0023, src/dappSettings/tokenGuarantees.ts) on the configured back end: a dApp
 * that existed before the migration reads as off (no migration turns a guarantee on for anyone), and the repository
 * writes the owner's document for the owner's dApp only, any dApp for the operator, and reads it back on both lookups.
 */
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const CAP = { limitWei: '50000000000000000', resets: 'daily' } as const;
const BEFORE = '0023_token_guarantees';

/** The migrations before 0023 applied by hand, recorded as the runner records them, and one dApp row as before. */
function schemaBefore(kind: 'sqlite' | 'postgres') {
  const older = listMigrations(kind).filter((m) => m.name < BEFORE);
  assert.ok(
    listMigrations(kind).some((m) => m.name === BEFORE),
    'the migration is listed',
  );
  const statements = [
    'CREATE TABLE patron_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)',
    ...older.flatMap((m) => [m.sql, `INSERT INTO patron_migrations (name, applied_at) VALUES ('${m.name}', 1)`]),
  ];
  const accountId = randomUUID();
  const dappId = randomUUID();
  const rows = [
    `INSERT INTO accounts (id, email, created_at) VALUES ('${accountId}', '${accountId}@example.com', 1)`,
    `INSERT INTO dapps (id, account_id, name, chain_ids, api_key_hash, api_key_prefix, api_key_ciphertext, created_at, updated_at)
     VALUES ('${dappId}', '${accountId}', 'old', '[31337]', '${randomUUID()}', 'pk.old', 'x', 1, 1)`,
  ];
  return { statements: [...statements, ...rows], dappId };
}

async function storeMigratedFromBefore(): Promise<{ store: Store; dappId: string }> {
  if (BACKEND === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-guarantees-'));
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'patron.db');
    const { statements, dappId } = schemaBefore('sqlite');
    const raw = new Sqlite(file);
    for (const s of statements) raw.exec(s);
    raw.close();
    const store = await openStore({ storage: { kind: 'sqlite', file } });
    cleanups.push(() => store.close());
    return { store, dappId };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  cleanups.push(() => dropTestSchema(schema));
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  const { statements, dappId } = schemaBefore('postgres');
  try {
    await client.query(`CREATE SCHEMA "${schema}"`);
    await client.query(`SET search_path TO "${schema}"`);
    for (const s of statements) await client.query(s);
  } finally {
    await client.end();
  }
  const store = await openStore({
    storage: { kind: 'postgres', url: TEST_DATABASE_URL ?? '', poolSize: 2 },
    pgSchema: schema,
  });
  cleanups.push(() => store.close());
  return { store, dappId };
}

test(`${BACKEND}: a dApp stored before migration 0023 has token guarantees off after it`, async () => {
  const { store, dappId } = await storeMigratedFromBefore();
  const dapp = await store.dapps.findById(dappId);
  assert.deepEqual(dapp?.tokenGuarantees, { enabled: false });
});

test(`${BACKEND}: the repository stores the owner's document for the owner's dApp, any dApp for the operator`, async () => {
  const { store, schema } = await openTestStore();
  cleanups.push(async () => {
    await store.close();
    await dropTestSchema(schema);
  });
  const accountId = randomUUID();
  await store.accounts.create({ id: accountId, email: `${accountId}@example.com`, createdAt: Date.now() });
  const dappId = randomUUID();
  const hash = randomUUID();
  await store.dapps.insert({
    id: dappId,
    accountId,
    name: 'guarantees',
    chainIds: [31337],
    apiKeyHash: hash,
    apiKeyPrefix: 'pk.test',
    apiKeyCiphertext: 'x',
    limits: {},
    restrictions: NO_CALLER_RESTRICTIONS,
    createdAt: Date.now(),
    updatedAt: Date.now(),
  });
  const dapp = await store.dapps.findById(dappId);
  assert.deepEqual(dapp?.tokenGuarantees, { enabled: false }, 'a new dApp: off');
  const now = Date.now();
  const on = { enabled: true, cap: CAP };
  // Another account's id changes nothing.
  const other = await store.dapps.setTokenGuarantees({ accountId: randomUUID(), dappId, guarantees: on, now });
  assert.equal(other, undefined);
  assert.deepEqual((await store.dapps.findById(dappId))?.tokenGuarantees, { enabled: false });
  const owner = await store.dapps.setTokenGuarantees({ accountId, dappId, guarantees: on, now });
  assert.deepEqual(owner?.tokenGuarantees, on);
  assert.deepEqual((await store.dapps.findByApiKeyHash(hash))?.tokenGuarantees, on, 'the hot path’s lookup');
  // The operator (no account): off, the cap kept.
  const off = { enabled: false, cap: CAP };
  const byOperator = await store.dapps.setTokenGuarantees({ accountId: undefined, dappId, guarantees: off, now });
  assert.deepEqual(byOperator?.tokenGuarantees, off);
  assert.deepEqual((await store.dapps.findByApiKeyHash(hash))?.tokenGuarantees, off);
  assert.equal(
    await store.dapps.setTokenGuarantees({ accountId: undefined, dappId: randomUUID(), guarantees: on, now }),
    undefined,
    'an unknown dApp',
  );
});
