import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { z } from 'zod';
import { checkedMasterKey, masterKeyCheckValue } from '../src/accounts/masterKey.js';
import { runCli } from '../src/cli/main.js';
import { loadConfig } from '../src/config/config.js';
import { createSecretBox } from '../src/crypto/secretBox.js';
import { Sqlite } from '../src/store/db/sqliteDriver.js';
import { openStore } from '../src/store/store.js';

/**
 * `patron master-key generate` and `patron master-key rotate` end to end, and the CLI's own start checks (the
 * master key, the schema version), through the CLI's main on real SQLite files: nothing injected, the storage
 * and the key come from the environment as for an operator.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const KEY_A = 'a1'.repeat(32);
const KEY_B = 'b2'.repeat(32);
const KEY_C = 'c3'.repeat(32);
const MISMATCH =
  /^patron: PATRON_MASTER_KEY does not match this database: its secrets .* Set PATRON_MASTER_KEY to the key/;

const CHAIN_1 = JSON.stringify([
  { chainId: 1, rpcUrl: 'http://127.0.0.1:1', paymaster: '0x00000000000000000000000000000000000000bb' },
]);

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-cli-mk-'));
  dirs.push(d);
  return d;
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function cli(argv: readonly string[], env: Record<string, string>): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv,
    // Chain 1 served (dApps may list only served chains); its RPC is never called by these commands.
    env: { LOG_LEVEL: 'silent', PATRON_CHAINS: CHAIN_1, ...env },
    io: {
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
    },
  });
  return { code, stdout, stderr };
}

/** Everything sealed in the file, as stored: what a rotation must change, and a refused one must not. */
function sealedState(dir: string) {
  const db = new Sqlite(path.join(dir, 'patron.sqlite'), { readonly: true });
  try {
    return {
      dapps: db.prepare('SELECT id, api_key_ciphertext FROM dapps ORDER BY id').all() as {
        id: string;
        api_key_ciphertext: string;
      }[],
      webhooks: db.prepare('SELECT id, signing_secret_ciphertext FROM webhooks ORDER BY id').all() as {
        id: string;
        signing_secret_ciphertext: string | null;
      }[],
      check: db.prepare('SELECT check_value FROM patron_master_key_check').pluck().get() as string | undefined,
    };
  } finally {
    db.close();
  }
}

/**
 * What the service's first start leaves in a data directory: the database, and (without PATRON_MASTER_KEY) the key
 * file; the CLI opens both and creates neither.
 */
async function firstStart(dir: string, keyHex?: string): Promise<void> {
  const store = await openStore({ storage: { kind: 'sqlite', file: path.join(dir, 'patron.sqlite') } });
  try {
    await checkedMasterKey({ config: { masterKeyHex: keyHex, dataDir: dir }, store, now: Date.now });
  } finally {
    await store.close();
  }
}

const dappOut = z.object({ dapp: z.object({ dappId: z.string(), apiKey: z.string() }) });
const dappsOut = z.object({ dapps: z.array(z.object({ dappId: z.string(), apiKey: z.string() })) });

/** A data directory with an account, a dApp and two webhooks (one sealed with `keyHex`, one from before 0002). */
async function seeded(keyHex: string, secretKeyHex: string = keyHex) {
  const dir = dataDir();
  const env = { PATRON_DATA_DIR: dir, PATRON_MASTER_KEY: keyHex };
  await firstStart(dir, keyHex);
  assert.equal((await cli(['account', 'create', '--email', 'op@example.com'], env)).code, 0);
  const created = await cli(['dapp', 'create', '--name', 'd', '--chain', '1', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  const { dapp } = dappOut.parse(JSON.parse(created.stdout));
  const store = await openStore({ storage: { kind: 'sqlite', file: path.join(dir, 'patron.sqlite') } });
  try {
    const webhook = (id: string, sealed: string | null) =>
      store.webhooks.insertWithinLimit({
        limit: 10,
        webhook: {
          id,
          dappId: dapp.dappId,
          url: 'https://hooks.example.com/x',
          requestType: 'POST',
          active: true,
          createdAt: 1,
          updatedAt: 1,
          signingSecretCiphertext: sealed,
        },
      });
    const box = createSecretBox(Buffer.from(secretKeyHex, 'hex'));
    assert.equal(await webhook(`wh_sealed_${randomUUID()}`, box.seal('whsec_the_secret')), 'created');
    assert.equal(await webhook(`wh_legacy_${randomUUID()}`, null), 'created');
  } finally {
    await store.close();
  }
  return { dir, apiKey: dapp.apiKey };
}

describe('patron master-key generate', () => {
  test('prints a fresh key exactly as PATRON_MASTER_KEY takes it, with no configuration and no database', async () => {
    const dir = path.join(dataDir(), 'never-created');
    // Production mode without PATRON_MASTER_KEY: every other command refuses this configuration.
    const env = { NODE_ENV: 'production', PATRON_DATA_DIR: dir };
    const one = await cli(['master-key', 'generate'], env);
    const two = await cli(['master-key', 'generate'], env);
    assert.deepEqual([one.code, one.stderr, two.code], [0, '', 0]);
    assert.match(one.stdout, /^[0-9a-f]{64}\n$/);
    assert.notEqual(one.stdout, two.stdout);
    assert.equal(loadConfig({ PATRON_MASTER_KEY: one.stdout.trim() }).masterKeyHex, one.stdout.trim());
    const json = await cli(['master-key', 'generate', '--json'], env);
    assert.match(z.object({ masterKey: z.string() }).parse(JSON.parse(json.stdout)).masterKey, /^[0-9a-f]{64}$/);
    assert.equal(fs.existsSync(dir), false, 'no data directory, no database');
  });

  test('the real `patron` process prints it on stdout alone', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PATRON_DATA_DIR: path.join(dataDir(), 'none') };
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', 'master-key', 'generate'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    assert.deepEqual({ code, err }, { code: 0, err: '' });
    assert.match(out, /^[0-9a-f]{64}\n$/);
  });
});

describe('patron master-key rotate (a real SQLite file)', () => {
  test('re-encrypts every secret in one go; the new key then works and the old one is refused', async () => {
    const { dir, apiKey } = await seeded(KEY_A);
    const before = sealedState(dir);
    assert.equal(before.check, masterKeyCheckValue(Buffer.from(KEY_A, 'hex')), 'the first start wrote it');

    const r = await cli(['master-key', 'rotate'], {
      PATRON_DATA_DIR: dir,
      PATRON_MASTER_KEY: KEY_A,
      PATRON_NEW_MASTER_KEY: KEY_B,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^Re-encrypted 1 dApp API key\(s\), 1 webhook signing secret\(s\) and 0 event endpoint secret\(s\) with the new master key\./,
    );
    assert.match(
      r.stdout,
      /\nNow set PATRON_MASTER_KEY to it on every instance \(the key in PATRON_NEW_MASTER_KEY\), then start/,
    );
    for (const key of [KEY_A, KEY_B]) assert.ok(!`${r.stdout}${r.stderr}`.includes(key), 'no key printed');

    const after = sealedState(dir);
    const boxB = createSecretBox(Buffer.from(KEY_B, 'hex'));
    assert.equal(after.check, masterKeyCheckValue(Buffer.from(KEY_B, 'hex')));
    assert.notEqual(after.dapps[0]?.api_key_ciphertext, before.dapps[0]?.api_key_ciphertext);
    const sealed = after.webhooks.find((w) => w.id.startsWith('wh_sealed_'));
    const legacy = after.webhooks.find((w) => w.id.startsWith('wh_legacy_'));
    assert.equal(boxB.open(String(sealed?.signing_secret_ciphertext)), 'whsec_the_secret');
    assert.equal(legacy?.signing_secret_ciphertext, null, 'a webhook without a secret yet stays without');

    const withNew = await cli(['dapp', 'list', '--json'], { PATRON_DATA_DIR: dir, PATRON_MASTER_KEY: KEY_B });
    assert.equal(withNew.code, 0, withNew.stderr);
    assert.deepEqual(
      dappsOut.parse(JSON.parse(withNew.stdout)).dapps.map((d) => d.apiKey),
      [apiKey],
    );
    const withOld = await cli(['dapp', 'list'], { PATRON_DATA_DIR: dir, PATRON_MASTER_KEY: KEY_A });
    assert.equal(withOld.code, 78); // a configuration refusal (docs/reference/exit-codes.md)
    assert.match(withOld.stderr, MISMATCH);
    assert.ok(!withOld.stderr.includes('Unsupported state'), withOld.stderr);
  });

  test('outside production without PATRON_MASTER_KEY: the key file in the data directory, named in the steps', async () => {
    const dir = dataDir();
    const env = { PATRON_DATA_DIR: dir };
    await firstStart(dir);
    assert.equal((await cli(['account', 'create', '--email', 'dev@example.com'], env)).code, 0);
    const created = await cli(['dapp', 'create', '--name', 'd', '--chain', '1', '--json'], env);
    const { apiKey } = dappOut.parse(JSON.parse(created.stdout)).dapp;
    const keyFile = path.join(dir, 'master.key');
    const r = await cli(['master-key', 'rotate'], { ...env, PATRON_NEW_MASTER_KEY: KEY_B });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes(`\nNow write it into ${keyFile} (or set PATRON_MASTER_KEY to it)`), r.stdout);
    const refused = await cli(['dapp', 'list'], env);
    assert.equal(refused.code, 78); // a configuration refusal (docs/reference/exit-codes.md)
    assert.match(
      refused.stderr,
      /^patron: the master key in .*master\.key \(PATRON_MASTER_KEY is not set\) does not match/,
    );
    fs.writeFileSync(keyFile, `${KEY_B}\n`);
    const listed = await cli(['dapp', 'list', '--json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(
      dappsOut.parse(JSON.parse(listed.stdout)).dapps.map((d) => d.apiKey),
      [apiKey],
    );
  });

  test('refused with a wrong current key, naming PATRON_MASTER_KEY; nothing changed', async () => {
    const { dir } = await seeded(KEY_A);
    const before = sealedState(dir);
    const r = await cli(['master-key', 'rotate'], {
      PATRON_DATA_DIR: dir,
      PATRON_MASTER_KEY: KEY_C,
      PATRON_NEW_MASTER_KEY: KEY_B,
    });
    assert.equal(r.code, 78); // a configuration refusal (docs/reference/exit-codes.md)
    assert.match(r.stderr, MISMATCH);
    assert.deepEqual(sealedState(dir), before);
  });

  test('refused without a usable new key; nothing changed', async () => {
    const { dir } = await seeded(KEY_A);
    const before = sealedState(dir);
    const cases: [Record<string, string>, string][] = [
      [{}, 'give the new key in PATRON_NEW_MASTER_KEY (make one with `patron master-key generate`)'],
      [{ PATRON_NEW_MASTER_KEY: 'abc' }, 'PATRON_NEW_MASTER_KEY must be 32 bytes as 64 hex characters'],
      [{ PATRON_NEW_MASTER_KEY: KEY_A }, 'PATRON_NEW_MASTER_KEY is the current master key: nothing to rotate'],
    ];
    for (const [extra, message] of cases) {
      const r = await cli(['master-key', 'rotate', '--json'], {
        PATRON_DATA_DIR: dir,
        PATRON_MASTER_KEY: KEY_A,
        ...extra,
      });
      assert.equal(r.code, 1, message);
      assert.deepEqual(JSON.parse(r.stdout), { error: { message } });
    }
    assert.deepEqual(sealedState(dir), before);
  });

  test('a secret the current key does not open: refused naming it, nothing changed (one transaction)', async () => {
    // The dApp's key is sealed with A, a webhook's secret with C: a process with another key wrote it.
    const { dir } = await seeded(KEY_A, KEY_C);
    const before = sealedState(dir);
    const stray = before.webhooks.find((w) => w.signing_secret_ciphertext !== null);
    const r = await cli(['master-key', 'rotate'], {
      PATRON_DATA_DIR: dir,
      PATRON_MASTER_KEY: KEY_A,
      PATRON_NEW_MASTER_KEY: KEY_B,
    });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `patron: the secret of webhook ${stray?.id} does not open with PATRON_MASTER_KEY: nothing was changed (was a secret written by a process with another key?)\n`,
    );
    assert.deepEqual(sealedState(dir), before);
  });
});

describe('the CLI refuses a database it must not run against', () => {
  test('a schema newer than this build: refused naming both migrations', async () => {
    const dir = dataDir();
    const env = { PATRON_DATA_DIR: dir, PATRON_MASTER_KEY: KEY_A };
    await firstStart(dir, KEY_A);
    assert.equal((await cli(['account', 'list'], env)).code, 0);
    const raw = new Sqlite(path.join(dir, 'patron.sqlite'));
    raw.prepare('INSERT INTO patron_migrations (name, applied_at) VALUES (?, ?)').run('0099_from_the_future', 1);
    raw.close();
    const r = await cli(['account', 'list'], env);
    assert.equal(r.code, 78); // a configuration refusal (docs/reference/exit-codes.md)
    assert.match(
      r.stderr,
      /^patron: the database schema is at 0099_from_the_future, newer than this build \(\d{4}_[a-z0-9_]+\): run a Patron build at least as new, or restore a backup\n$/,
    );
  });
});
