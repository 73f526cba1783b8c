import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestContext, type TestContext } from './helpers/testContext.js';

/**
 * `patron healthcheck`, the image's and compose.yaml's health check, as the runtime runs it: the `patron` process
 * with the service's environment, against a service listening on 127.0.0.1. That environment is production's
 * without its secrets and with a database that does not exist: the check must not read them (a probe that opened the
 * store or needed the master key would fail or create files where it runs).
 */
const ROOT = path.resolve(import.meta.dirname, '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function healthcheck(env: Record<string, string>, args: readonly string[] = []): Promise<Run> {
  const base: NodeJS.ProcessEnv = {};
  for (const key of ['PATH', 'HOME', 'TMPDIR']) if (process.env[key] !== undefined) base[key] = process.env[key];
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', 'healthcheck', ...args], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  proc.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

describe('patron healthcheck', { timeout: 120_000 }, () => {
  let ctx: TestContext;
  let port = 0;
  let dataDir = '';
  let production: Record<string, string>;

  before(async () => {
    ctx = await createTestContext();
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx.app.server.address() as AddressInfo).port;
    dataDir = mkdtempSync(path.join(tmpdir(), 'patron-healthcheck-'));
    production = {
      NODE_ENV: 'production',
      PATRON_DATA_DIR: dataDir,
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      PORT: String(port),
    };
  });
  after(async () => {
    await ctx.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('exits 0 when the service is ready, reading PORT and HOST (0.0.0.0 on loopback) and nothing else', async () => {
    for (const env of [production, { ...production, HOST: '0.0.0.0' }, { ...production, HOST: '127.0.0.1' }]) {
      const run = await healthcheck(env);
      assert.equal(run.code, 0, `HOST=${env.HOST}: ${run.stderr}`);
      assert.equal(run.stdout + run.stderr, '');
    }
    const healthz = await healthcheck(production, ['--path', '/healthz']);
    assert.equal(healthz.code, 0, healthz.stderr);
    // No database, key or file was opened or created where the probe ran.
    assert.deepEqual(readdirSync(dataDir), []);
  });

  test('exits 1 with one line naming the URL when the service is not ready, not there, or the path is wrong', async () => {
    const notReady = createServer((_req, res) => res.writeHead(503).end('{"status":"unavailable"}'));
    const notReadyPort = await listen(notReady);
    try {
      const run = await healthcheck({ ...production, PORT: String(notReadyPort) });
      assert.equal(run.code, 1);
      assert.equal(run.stderr, `patron healthcheck: GET http://127.0.0.1:${notReadyPort}/readyz answered 503\n`);
    } finally {
      await new Promise((r) => notReady.close(r));
    }
    // The port the 503 server had is closed now: nothing listens there.
    const down = await healthcheck({ ...production, PORT: String(notReadyPort) });
    assert.equal(down.code, 1);
    assert.match(down.stderr, /^patron healthcheck: GET http:\/\/127\.0\.0\.1:\d+\/readyz failed: .*ECONNREFUSED.*\n$/);
    const missing = await healthcheck(production, ['--path', '/nothing-here']);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, `patron healthcheck: GET http://127.0.0.1:${port}/nothing-here answered 404\n`);
    const badPort = await healthcheck({ ...production, PORT: 'http' });
    assert.equal(badPort.code, 1);
    assert.equal(badPort.stderr, 'patron healthcheck: PORT must be an integer from 0 to 65535, got "http"\n');
  });
});
