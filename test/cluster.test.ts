import assert from 'node:assert/strict';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { masterKeyCheckValue } from '../src/accounts/masterKey.js';
import { jsCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { encryptKeystore } from '../src/paymaster/signer/keystore.js';
import { testKey } from './helpers/patronPaymasterV06.js';
import { instanceEnv, spawnService } from './helpers/serviceProcess.js';
import { dropTestSchema, openTestStore, TEST_DATABASE_URL } from './helpers/testContext.js';

/**
 * A fresh schema (migrated, then closed) for one test's service: the services check their master key against the
 * database, so tests must not share one schema (PostgreSQL's public) across runs with keys of their own.
 */
async function freshSchema(): Promise<string> {
  const { store, schema } = await openTestStore({ poolSize: 1 });
  await store.close();
  assert.ok(schema !== undefined);
  return schema;
}

/**
 * PATRON_WORKERS=2 on PostgreSQL: the primary forks two workers that share the port and the database, both
 * run migrations under the advisory lock, and SIGTERM stops the whole group.
 */
test('two cluster workers serve one port on PostgreSQL and stop on SIGTERM', {
  skip: TEST_DATABASE_URL === undefined && 'needs PATRON_TEST_DATABASE_URL',
  timeout: 60_000,
}, async () => {
  const port = 40_000 + Math.floor(Math.random() * 10_000);
  const schema = await freshSchema();
  const service = spawnService({
    ...instanceEnv(schema, `/tmp/patron-cluster-${port}`),
    PATRON_WORKERS: '2',
    PORT: String(port),
  });
  const { child } = service;
  try {
    const deadline = Date.now() + 40_000;
    while ((service.output().match(/"msg":"Patron is listening"/g) ?? []).length < 2) {
      assert.ok(Date.now() < deadline, `two workers did not start:\n${service.output()}`);
      assert.equal(child.exitCode, null, `the primary exited:\n${service.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const pids = new Set(
      [...service.output().matchAll(/"pid":(\d+)[^\n]*"msg":"Patron is listening"/g)].map((m) => m[1]),
    );
    assert.equal(pids.size, 2, 'two distinct worker processes');
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { storage: string }).storage, 'postgres');
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await dropTestSchema(schema);
  }
});

/**
 * A worker that cannot start (here: the keystore's password is wrong, as every worker's would be) stops the whole
 * service: the primary prints the message once and exits non-zero, instead of restarting workers forever while
 * systemd or Kubernetes see a live process.
 */
test('a worker that cannot start makes the service exit with its code (78: a wrong keystore password) and message, once', {
  skip: TEST_DATABASE_URL === undefined && 'needs PATRON_TEST_DATABASE_URL',
  timeout: 60_000,
}, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-cluster-ks-'));
  const key = testKey('cluster-keystore');
  const keystore = path.join(dir, 'signer.json');
  const sealed = encryptKeystore({
    privateKey: Buffer.from(key.slice(2), 'hex'),
    password: 'the right password',
    address: privateKeyToAccount(key).address,
    crypto: jsCryptoBackend,
    scryptN: 2 ** 10,
  });
  fs.writeFileSync(keystore, JSON.stringify(sealed));
  const port = 40_000 + Math.floor(Math.random() * 10_000);
  const schema = await freshSchema();
  const service = spawnService({
    ...instanceEnv(schema, dir),
    PATRON_WORKERS: '2',
    PATRON_SIGNER_KEYSTORE: keystore,
    PATRON_SIGNER_KEYSTORE_PASSWORD: 'a wrong password',
    PORT: String(port),
  });
  const { child } = service;
  try {
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    const [code] = await once(child, 'exit');
    clearTimeout(timer);
    // A configuration no restart fixes: 78, so systemd's RestartPreventExitStatus stops the loop (it was 1).
    assert.equal(code, 78, `exit code\n${service.output()}`);
    const said = service.errors().match(/wrong keystore password/g) ?? [];
    assert.equal(said.length, 1, `the message once:\n${service.errors()}`);
    assert.match(
      service.errors(),
      /^Patron failed to start: PATRON_SIGNER_KEYSTORE \S+signer\.json: wrong keystore password \(MAC mismatch\); check PATRON_SIGNER_KEYSTORE_PASSWORD/m,
    );
    assert.doesNotMatch(service.output(), /worker died; starting another/, 'no worker was restarted');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    await dropTestSchema(schema);
  }
});

/** The master key checked at start in every worker: a wrong one stops the service, its message printed once. */
test('cluster workers with another PATRON_MASTER_KEY than the database: exit 78, naming it once', {
  skip: TEST_DATABASE_URL === undefined && 'needs PATRON_TEST_DATABASE_URL',
  timeout: 60_000,
}, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-cluster-mk-'));
  const { store, schema } = await openTestStore({ poolSize: 1 });
  assert.ok(schema !== undefined);
  // The database's key is another than the one instanceEnv gives the service.
  await store.sealedSecrets.writeCheckOnce({ checkValue: masterKeyCheckValue(Buffer.alloc(32, 0x42)), now: 1 });
  await store.close();
  const port = 40_000 + Math.floor(Math.random() * 10_000);
  const service = spawnService({ ...instanceEnv(schema, dir), PATRON_WORKERS: '2', PORT: String(port) });
  const { child } = service;
  try {
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    const [code] = await once(child, 'exit');
    clearTimeout(timer);
    assert.equal(code, 78, `exit code\n${service.output()}`);
    const said = service.errors().match(/PATRON_MASTER_KEY does not match this database/g) ?? [];
    assert.equal(said.length, 1, `the message once:\n${service.errors()}`);
    assert.match(service.errors(), /^Patron failed to start: PATRON_MASTER_KEY does not match this database/m);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    await dropTestSchema(schema);
  }
});
