import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createApp } from '../src/app.js';
import type { Config } from '../src/config/config.js';
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
 * line at debug, with the API key cut out of the URL; probes (/healthz, /readyz, /metrics) log one line, at debug
 * when they answer 2xx and at warn when they do not (src/api/probeLog.ts).
 */
async function appWithLog(level: string, config: Partial<Config> = {}) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  const { store } = await openTestStore();
  const deps = await createDeps(testConfig(config), createLogger({ level, destination: sink }), {
    store,
    masterKey: TEST_MASTER_KEY,
    signerKey: TEST_SIGNER_KEY,
    resolver: fakeResolver,
    chains: [],
    servedChainIds: [31337],
  });
  const app = createApp(deps);
  await app.ready();
  const tenant = await createTenant(deps);
  lines.length = 0;
  return {
    app,
    lines,
    tenant,
    store,
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
    await app.inject({ method: 'GET', url: '/api/chains' });
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

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const metricsOnMainApp: Config['metrics'] = { enabled: true, port: undefined, host: '127.0.0.1', token: METRICS_TOKEN };

test('at info: 20 probes each of /healthz, /readyz and /metrics log nothing', async () => {
  const { app, lines, close } = await appWithLog('info', { metrics: metricsOnMainApp });
  try {
    for (let i = 0; i < 20; i++) {
      for (const url of ['/healthz', '/readyz', '/readyz?full=1', '/healthz/']) {
        assert.equal((await app.inject({ method: 'GET', url })).statusCode, 200, url);
      }
      const scrape = await app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      assert.equal(scrape.statusCode, 200);
    }
    assert.deepEqual(lines, []);
  } finally {
    await close();
  }
});

test('a failing probe logs one warn line with its status; at debug a passing one logs one debug line', async () => {
  const { app, lines, close } = await appWithLog('debug', { metrics: metricsOnMainApp });
  try {
    assert.equal((await app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
    const warned = lines.filter((l) => l.level === 40);
    assert.equal(warned.length, 1, JSON.stringify(lines));
    assert.equal(warned[0]?.msg, 'probe failed');
    assert.deepEqual(warned[0]?.res, { statusCode: 401 });
    assert.equal((warned[0]?.req as { url?: string } | undefined)?.url, '/metrics');
    assert.equal(
      lines.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed').length,
      0,
      'no Fastify request lines for a probe',
    );

    lines.length = 0;
    await app.inject({ method: 'GET', url: '/readyz' });
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg]),
      [[20, 'probe answered']],
    );
    assert.deepEqual(lines[0]?.res, { statusCode: 200 });
  } finally {
    await close();
  }
});

test('readiness failing (storage closed): the probe fails at warn, the cause logged at error', async () => {
  const { app, lines, store, close } = await appWithLog('info');
  try {
    await store.close();
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg]),
      [
        [50, 'readiness check: the storage probe failed'],
        [40, 'probe failed'],
      ],
    );
  } finally {
    await close().catch(() => {});
  }
});
