import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type ChainHttpServer, serveChainOverHttp } from './helpers/chainHttpServer.js';
import { KEYS, type PatronFixture, startPatronFixture } from './helpers/patronPaymasterV06.js';
import { instanceEnv, type ServiceProcess, spawnService } from './helpers/serviceProcess.js';
import {
  createTenant,
  createTestContext,
  TEST_DATABASE_URL,
  type Tenant,
  type TestContext,
} from './helpers/testContext.js';

/**
 * Issue 21, "N instances are one paymaster", metrics: a `PATRON_WORKERS=2` service answers one scrape with the sum
 * over its workers (the scrape reaches either worker; the primary aggregates), and a counter never goes backwards
 * when a worker dies and is replaced. Real processes on a real PostgreSQL, a configured chain served over HTTP.
 */
const skip = TEST_DATABASE_URL === undefined && 'needs PATRON_TEST_DATABASE_URL';
const TOKEN = 'metrics-token-0123456789';
let fx: PatronFixture;
let chainServer: ChainHttpServer;
let ctx: TestContext;
let tenant: Tenant;
let service: ServiceProcess | undefined;
let dataDir: string;

before(async () => {
  if (skip !== false) return;
  fx = await startPatronFixture();
  chainServer = await serveChainOverHttp(fx.chain);
  ctx = await createTestContext();
  tenant = await createTenant(ctx.deps);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-metrics-cluster-'));
});
after(async () => {
  if (skip !== false) return;
  await service?.stop();
  await ctx.close();
  await chainServer.close();
  await fx.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** patron_rpc_requests_total summed over its label sets, from one scrape. */
async function requestsCounted(base: string): Promise<number> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.status, 200, await res.clone().text());
  const text = await res.text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('patron_rpc_requests_total{'))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

const listeningPids = () =>
  [...(service?.output() ?? '').matchAll(/"pid":(\d+)[^\n]*"msg":"Patron is listening"/g)].map((m) => Number(m[1]));

test('one scrape of two workers reports their sum, and it never goes backwards when a worker is replaced', {
  skip,
  timeout: 120_000,
}, async () => {
  const port = 40_000 + Math.floor(Math.random() * 10_000);
  service = spawnService({
    ...instanceEnv(String(ctx.schema), dataDir),
    PATRON_WORKERS: '2',
    PATRON_SIGNER_PRIVATE_KEY: KEYS.signer,
    PATRON_METRICS: 'true',
    PATRON_METRICS_TOKEN: TOKEN,
    PORT: String(port),
    PATRON_CHAINS: JSON.stringify([
      {
        chainId: fx.chain.chainId,
        rpcUrl: chainServer.url,
        paymaster: fx.paymaster,
        entryPoint: fx.entryPoint,
        nativeUsd: { type: 'fixed', usd: '3000' },
      },
    ]),
  });
  const child = service.child;
  const deadline = Date.now() + 60_000;
  while (new Set(listeningPids()).size < 2) {
    assert.equal(child.exitCode, null, `the service exited:\n${service.output()}`);
    assert.ok(Date.now() < deadline, `two workers did not start:\n${service.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const base = `http://127.0.0.1:${port}`;
  // 20 calls of the dApp (their params are refused: each is still a counted call of this dApp), spread by the
  // kernel over both workers; new connections each, so both workers see some.
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${base}/api/v1/${fx.chain.chainId}/${tenant.apiKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'pm_getFeeQuoteOrData', params: [] }),
    });
    assert.equal(res.status, 400, await res.text());
  }
  const scrapes: number[] = [];
  for (let i = 0; i < 6; i++) scrapes.push(await requestsCounted(base));
  assert.deepEqual(scrapes, [20, 20, 20, 20, 20, 20], 'every scrape, whichever worker answers it, counts all 20');

  // A worker dies (SIGKILL: no goodbye) and the primary replaces it: its counts stay in the sum.
  const [victim] = listeningPids();
  assert.ok(victim !== undefined);
  process.kill(victim, 'SIGKILL');
  while (new Set(listeningPids()).size < 3) {
    assert.ok(Date.now() < deadline + 30_000, `the worker was not replaced:\n${service.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (let i = 0; i < 6; i++) {
    assert.ok((await requestsCounted(base)) >= 20, 'the counter did not go backwards after a worker was replaced');
  }
});
