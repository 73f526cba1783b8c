import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createApp } from '../src/app.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import {
  createTenant,
  fakeResolver,
  openTestStore,
  TEST_MASTER_KEY,
  TEST_SIGNER_KEY,
  testConfig,
} from './helpers/testContext.js';

/**
 * The access log decision (app.ts): REST routes log two info lines per request; paymaster traffic logs its one
 * line at debug, with the API key cut out of the URL.
 */
async function appWithLog(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  const { store } = await openTestStore();
  const deps = await createDeps(testConfig(), createLogger({ level, destination: sink }), {
    store,
    masterKey: TEST_MASTER_KEY,
    signerKey: TEST_SIGNER_KEY,
    resolver: fakeResolver,
    chains: [],
  });
  const app = createApp(deps);
  await app.ready();
  const tenant = await createTenant(deps);
  lines.length = 0;
  return {
    app,
    lines,
    tenant,
    close: async () => {
      await app.close();
      await deps.close();
    },
  };
}

const rpc = { jsonrpc: '2.0', id: 1, method: 'pm_getFeeQuoteOrData', params: [{}, { mode: 'SPONSORED' }] };

test('at info: a REST request logs incoming + completed with its request id; a paymaster request logs nothing', async () => {
  const { app, lines, tenant, close } = await appWithLog('info');
  try {
    await app.inject({ method: 'GET', url: '/healthz' });
    assert.deepEqual(
      lines.map((l) => l.msg),
      ['incoming request', 'request completed'],
    );
    assert.equal(lines[0]?.reqId, lines[1]?.reqId);
    assert.equal(typeof lines[0]?.reqId, 'string');
    lines.length = 0;
    const res = await app.inject({ method: 'POST', url: `/api/v1/31337/${tenant.apiKey}`, payload: rpc });
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(lines, []);
  } finally {
    await close();
  }
});

test('at debug: a paymaster request logs one access line, the API key cut out of its URL', async () => {
  const { app, lines, tenant, close } = await appWithLog('debug');
  try {
    await app.inject({ method: 'POST', url: `/api/v1/31337/${tenant.apiKey}`, payload: rpc });
    const access = lines.filter((l) => l.msg === 'paymaster request answered');
    assert.equal(access.length, 1, JSON.stringify(lines));
    const line = access[0] ?? {};
    assert.deepEqual(line.res, { statusCode: 400 });
    assert.equal(typeof line.responseTime, 'number');
    assert.equal((line.req as { url?: string }).url, `/api/v1/31337/${tenant.apiKey.slice(0, 6)}…`);
    assert.doesNotMatch(JSON.stringify(lines), new RegExp(tenant.apiKey.replace('.', '\\.')));
  } finally {
    await close();
  }
});
