import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { createAccountService } from '../src/accounts/accountService.js';
import { masterKeyCheckValue, masterKeySource, verifyMasterKey } from '../src/accounts/masterKey.js';
import { createSecretBox } from '../src/crypto/secretBox.js';
import { Sqlite } from '../src/store/db/sqliteDriver.js';
import { openStore, type Store } from '../src/store/store.js';
import { spawnService } from './helpers/serviceProcess.js';

/**
 * The master key is checked once at start against the database (migration 0015's check value, else a stored
 * secret), on real SQLite files; and the real server process (`src/main.ts`) refuses a wrong key and a schema newer
 * than its build, naming what does not match, with exit code 1.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const KEY_A = Buffer.alloc(32, 0xa1);
const KEY_B = Buffer.alloc(32, 0xb2);
const ENV_SOURCE = 'PATRON_MASTER_KEY';
const MISMATCH =
  /^PATRON_MASTER_KEY does not match this database: its secrets \(dApp API keys, webhook signing secrets\) are encrypted with another master key\. Set PATRON_MASTER_KEY to the key/;

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-masterkey-'));
  dirs.push(d);
  return d;
}

async function withStore<T>(file: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore({ storage: { kind: 'sqlite', file } });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

const verify = (store: Store, key: Buffer, source = ENV_SOURCE) =>
  verifyMasterKey({ secrets: store.sealedSecrets, key, source, now: Date.now() });

/** A dApp whose API key is sealed with `key`, created the way the service does it. */
async function dappSealedWith(store: Store, key: Buffer): Promise<void> {
  const accounts = createAccountService({
    store,
    secretBox: createSecretBox(key),
    cache: { ttlMs: 0, maxEntries: 10 },
    now: Date.now,
    logger: { warn: () => {} },
    servedChainIds: [1],
  });
  const account = await accounts.createAccount({ email: 'owner@example.com' });
  await accounts.createDapp({ accountId: account.id, name: 'd', chainIds: [1] });
}

function checkRow(file: string): string | undefined {
  const db = new Sqlite(file, { readonly: true });
  try {
    return db.prepare('SELECT check_value FROM patron_master_key_check').pluck().get() as string | undefined;
  } finally {
    db.close();
  }
}

describe('the master key check (a real SQLite file)', () => {
  test('an empty database: the first key is recorded, another is refused on every later start', async () => {
    const file = path.join(dataDir(), 'patron.sqlite');
    await withStore(file, (s) => verify(s, KEY_A));
    assert.equal(checkRow(file), masterKeyCheckValue(KEY_A));
    await withStore(file, async (s) => {
      await assert.rejects(verify(s, KEY_B), { name: 'StartRefusedError', message: MISMATCH });
      await verify(s, KEY_A);
    });
    assert.equal(checkRow(file), masterKeyCheckValue(KEY_A));
  });

  test('a database from before the check value: checked against a stored secret, then the value is written', async () => {
    const file = path.join(dataDir(), 'patron.sqlite');
    await withStore(file, (s) => dappSealedWith(s, KEY_A));
    assert.equal(checkRow(file), undefined, 'nothing written the check value yet');
    await withStore(file, async (s) => {
      await assert.rejects(verify(s, KEY_B), { message: MISMATCH });
      assert.equal(checkRow(file), undefined, 'a refused key records nothing');
      await verify(s, KEY_A);
    });
    assert.equal(checkRow(file), masterKeyCheckValue(KEY_A));
  });

  test('the check value is not the key, and differs per key', () => {
    const a = masterKeyCheckValue(KEY_A);
    assert.match(a, /^v1\.[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a, masterKeyCheckValue(KEY_B));
    assert.ok(!a.includes(KEY_A.toString('hex')) && !a.includes(KEY_A.toString('base64url')));
  });

  test('the dev-mode key file is named, with PATRON_MASTER_KEY', async () => {
    const dir = dataDir();
    const file = path.join(dir, 'patron.sqlite');
    await withStore(file, (s) => verify(s, KEY_A));
    const source = masterKeySource({ masterKeyHex: undefined, dataDir: dir });
    await withStore(file, async (s) => {
      await assert.rejects(verify(s, KEY_B, source), {
        message: `the master key in ${path.join(dir, 'master.key')} (PATRON_MASTER_KEY is not set) does not match this database: its secrets (dApp API keys, webhook signing secrets) are encrypted with another master key. Set PATRON_MASTER_KEY to the key this database was created or last rotated with, or restore the backup that goes with this key.`,
      });
    });
  });
});

/** Runs the server on `dir`; resolves with its exit code and output (fails if it starts listening instead). */
async function runServer(dir: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['DATABASE_URL', 'NODE_ENV', 'PATRON_PRODUCTION', 'PATRON_MASTER_KEY', 'NODE_TEST_CONTEXT']) {
    delete base[k];
  }
  const service = spawnService({ PATRON_DATA_DIR: dir, PATRON_DEMO: 'false', ...env }, { cwd: ROOT, baseEnv: base });
  const code = await service.exitCode(40_000);
  const out = service.output();
  assert.ok(!out.includes('Patron is listening'), `it started:\n${out}`);
  return { code, out };
}

describe('the server refuses to start (the real process)', { timeout: 120_000 }, () => {
  test('with another PATRON_MASTER_KEY than the database was created with: exit 78 (no restart fixes it), naming PATRON_MASTER_KEY', async () => {
    const dir = dataDir();
    await withStore(path.join(dir, 'patron.sqlite'), async (s) => {
      await verify(s, KEY_A);
      await dappSealedWith(s, KEY_A);
    });
    const r = await runServer(dir, { PATRON_MASTER_KEY: KEY_B.toString('hex') });
    assert.equal(r.code, 78, r.out);
    assert.match(r.out, /Patron failed to start: PATRON_MASTER_KEY does not match this database/);
    assert.ok(!r.out.includes('Unsupported state'), r.out);
  });

  test('on a schema newer than its build: exit 78, naming both migrations', async () => {
    const dir = dataDir();
    const file = path.join(dir, 'patron.sqlite');
    await withStore(file, (s) => verify(s, KEY_A));
    const raw = new Sqlite(file);
    raw.prepare('INSERT INTO patron_migrations (name, applied_at) VALUES (?, ?)').run('0099_from_the_future', 1);
    raw.close();
    const r = await runServer(dir, { PATRON_MASTER_KEY: KEY_A.toString('hex') });
    assert.equal(r.code, 78, r.out);
    assert.match(
      r.out,
      /Patron failed to start: the database schema is at 0099_from_the_future, newer than this build \(\d{4}_[a-z0-9_]+\): run a Patron build at least as new, or restore a backup/,
    );
  });
});
