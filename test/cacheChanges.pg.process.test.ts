import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import {
  createTenant,
  createTestContext,
  TEST_DATABASE_URL,
  TEST_MASTER_KEY,
  type Tenant,
  type TestContext,
  WEBHOOK_PATH,
  webhookHeaders,
} from './helpers/testContext.js';

/**
 * Issue 21, "N instances are one paymaster", caches: two real service processes on one PostgreSQL schema, each
 * caching credentials for a minute (PATRON_CACHE_TTL_MS=60000, so a TTL cannot be what ends a stale entry). A token
 * revoked and an API key rotated through one instance's admin API are refused by the other at once: the write's
 * `patron_changes` notification (migration 0012) moves the other's cache generation (store/changeFeed.ts). The
 * delay measured is printed; the assertion allows 1 s, a fraction of the TTL, not a timing target.
 */
const skip = TEST_DATABASE_URL === undefined && 'needs PATRON_TEST_DATABASE_URL';
let ctx: TestContext;
let tenant: Tenant;
let admin: string;
const children: { child: ChildProcess; out: string }[] = [];
let dataDir: string;

before(async () => {
  if (skip !== false) return;
  ctx = await createTestContext();
  tenant = await createTenant(ctx.deps);
  admin = (await ctx.deps.accounts.createToken({ accountId: tenant.accountId, name: 'admin' })).secret;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-cache-changes-'));
});
after(async () => {
  if (skip !== false) return;
  for (const { child } of children) {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
  await ctx.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function startInstance(): Promise<string> {
  const url = new URL(String(TEST_DATABASE_URL));
  url.searchParams.set('options', `-c search_path=${ctx.schema}`);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: url.toString(),
      PATRON_DEV_CHAIN: 'false',
      PATRON_DATA_DIR: dataDir,
      PATRON_MASTER_KEY: TEST_MASTER_KEY.toString('hex'),
      PATRON_CACHE_TTL_MS: '60000',
      PORT: '0',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const instance = { child, out: '' };
  child.stdout?.on('data', (c: Buffer) => {
    instance.out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    instance.out += c.toString();
  });
  children.push(instance);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const base = /"baseUrl":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(instance.out)?.[1];
    if (base !== undefined) return base;
    assert.equal(child.exitCode, null, `the instance exited:\n${instance.out}`);
    assert.ok(Date.now() < deadline, `the instance did not start:\n${instance.out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const listWebhooks = async (base: string, creds: { authToken: string; apiKey: string }) =>
  (await fetch(`${base}${WEBHOOK_PATH}`, { headers: webhookHeaders(creds) })).status;

/** Polls until `ok`, returning how long it took; fails after `ms`. */
async function within(ms: number, what: string, ok: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await ok()) return performance.now() - start;
    assert.ok(performance.now() - start < ms, what);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('a token revoked and a key rotated through one instance are refused by the other at once', {
  skip,
  timeout: 120_000,
}, async () => {
  const [a, b] = await Promise.all([startInstance(), startInstance()]);
  // Both instances have the credentials cached (a first lookup each, then hits).
  for (const base of [a, b]) {
    for (let i = 0; i < 3; i++) assert.equal(await listWebhooks(base, tenant), 200);
  }

  // The dApp's API key rotated through A: B refuses the old key.
  const rotated = await fetch(`${a}/api/admin/dapps/${tenant.dappId}/rotate-key`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}` },
  });
  assert.equal(rotated.status, 200, await rotated.clone().text());
  const newKey = ((await rotated.json()) as { data: { apiKey: string } }).data.apiKey;
  const keyMs = await within(1000, 'B still accepts the rotated-out key', async () => {
    return (await listWebhooks(b, tenant)) === 401;
  });
  assert.equal(await listWebhooks(b, { authToken: tenant.authToken, apiKey: newKey }), 200, 'and takes the new one');

  // The owner's token revoked through A: B refuses it.
  const tokens = (await (
    await fetch(`${a}/api/admin/tokens`, { headers: { authorization: `Bearer ${admin}` } })
  ).json()) as {
    data: { tokenId: string; name: string }[];
  };
  const revokedId = tokens.data.find((t) => t.name === 'test')?.tokenId;
  assert.ok(revokedId !== undefined, JSON.stringify(tokens));
  const revoked = await fetch(`${a}/api/admin/tokens/${revokedId}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${admin}` },
  });
  assert.ok(revoked.status === 200 || revoked.status === 204, await revoked.clone().text());
  const tokenMs = await within(1000, 'B still accepts the revoked token', async () => {
    return (await listWebhooks(b, { authToken: tenant.authToken, apiKey: newKey })) === 401;
  });
  process.stdout.write(
    `# seen by the other instance after: key rotation ${keyMs.toFixed(1)} ms, token revocation ${tokenMs.toFixed(1)} ms\n`,
  );
});
