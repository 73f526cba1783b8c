import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { type ServiceProcess, spawnService } from './helpers/serviceProcess.js';
import { TEST_MASTER_KEY } from './helpers/testContext.js';
import { closedPort } from './helpers/webhookReceiver.js';

/**
 * What the real service (`src/main.ts`) writes to its log (docs/guides/operations.md, "Logs"): with its chain's RPC down, a few short
 * lines naming the cause (once 16 lines and 79.5 KB, the longest 17,555 characters with the EntryPoint ABI and the
 * RPC URL's API key); and load-balancer probes at LOG_LEVEL=info write nothing.
 */
const dirs: string[] = [];
const services: ServiceProcess[] = [];
after(async () => {
  await Promise.all(services.map((s) => s.stop()));
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-logs-'));
  dirs.push(d);
  return d;
}

const SECRET = 'SECRETKEY0123456789';

test('RPC down at start-up: short lines, no ABI, no API key, the cause (ECONNREFUSED) on one line', {
  timeout: 60_000,
}, async () => {
  const port = await closedPort();
  const feed = (n: string) => ({ type: 'chainlink', aggregator: `0x${n.repeat(40)}`, maxAgeSeconds: 3600 });
  const service = spawnService({
    NODE_ENV: 'production',
    PATRON_DEV_CHAIN: 'false',
    PATRON_DATA_DIR: dataDir(),
    PATRON_MASTER_KEY: TEST_MASTER_KEY.toString('hex'),
    PATRON_SIGNER_PRIVATE_KEY: `0x${'9'.repeat(64)}`,
    // A provider-style URL: the API key in the path and in the query.
    PATRON_CHAINS: JSON.stringify([
      {
        chainId: 8453,
        rpcUrl: `http://127.0.0.1:${port}/v2/${SECRET}?apikey=${SECRET}`,
        paymaster: `0x${'1'.repeat(40)}`,
        paymasters: { '0.7': `0x${'5'.repeat(40)}` },
        nativeUsd: feed('4'),
        tokens: [{ address: `0x${'2'.repeat(40)}`, premiumPercentage: '10', price: feed('3') }],
      },
    ]),
  });
  services.push(service);
  const exitCode = await new Promise<number | null>((resolve) => {
    if (service.child.exitCode !== null) resolve(service.child.exitCode);
    service.child.once('exit', (code) => resolve(code));
  });
  const out = service.output();
  assert.equal(exitCode, 1, out);
  const lines = out.split('\n').filter((l) => l !== '');
  const longest = Math.max(...lines.map((l) => l.length));
  assert.ok(longest <= 1000, `a line of ${longest} characters:\n${out.slice(0, 3000)}`);
  // The first start on a new data directory also logs each migration it applies (one short line each, their number
  // grows with the schema): the bound is on the rest.
  const rest = lines.filter((l) => !l.includes('"applied a database migration"')).join('\n');
  assert.ok(Buffer.byteLength(rest) < 8_000, `${Buffer.byteLength(rest)} bytes:\n${rest.slice(0, 3000)}`);
  assert.doesNotMatch(out, /stateMutability|"inputs"|Request body/);
  assert.doesNotMatch(out, new RegExp(SECRET));
  // The refusal names the cause, and so does each background task's warning (settlement, solvency, fees).
  assert.match(out, /Refusing to start/);
  assert.ok(
    lines.some((l) => /its RPC could not be read .*ECONNREFUSED/.test(l)),
    `no start-up check line with the cause:\n${out}`,
  );
  const warned = lines
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { err?: { message?: string } })
    .filter((l) => l.err !== undefined);
  assert.ok(warned.length > 0, out);
  for (const l of warned) assert.match(l.err?.message ?? '', /ECONNREFUSED/, JSON.stringify(l));
});

test('20 probes each of /healthz and /readyz at LOG_LEVEL=info write no line', { timeout: 60_000 }, async () => {
  const service = spawnService({
    PATRON_DEV_CHAIN: 'false',
    PATRON_DATA_DIR: dataDir(),
    PATRON_MASTER_KEY: TEST_MASTER_KEY.toString('hex'),
  });
  services.push(service);
  const base = await service.baseUrl();
  // Whatever start-up still writes (the banner, a late line) settles before the probes are counted.
  await new Promise((r) => setTimeout(r, 500));
  const before = service.output().length;
  for (let i = 0; i < 20; i++) {
    for (const probe of ['/healthz', '/readyz']) {
      const res = await fetch(`${base}${probe}`);
      assert.equal(res.status, 200, probe);
      await res.arrayBuffer();
    }
  }
  // A REST call afterwards: its info lines show the log is on and flushed, so silence above is not a slow pipe.
  await (await fetch(`${base}/api/chains`)).arrayBuffer();
  const deadline = Date.now() + 5_000;
  while (!service.output().slice(before).includes('request completed')) {
    assert.ok(Date.now() < deadline, `no access line for /api/chains:\n${service.output().slice(before)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const written = service.output().slice(before);
  assert.doesNotMatch(written, /healthz|readyz/, written);
  assert.equal(written.split('\n').filter((l) => l.includes('"url":"/api/chains"')).length, 1, written);
});
