import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { httpChainRuntime } from '../src/chain/chainRegistry.js';
import { BACKEND, createTestContext } from './helpers/testContext.js';

test('/healthz answers while the process is up; /readyz follows storage', async () => {
  const ctx = await createTestContext();
  try {
    const health = await ctx.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(health.statusCode, 200);
    // The build's version (package.json) and schema: the newest migration file this build ships.
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    const files = readdirSync(new URL('../src/store/migrations/', import.meta.url)).filter((f) => f.endsWith('.sql'));
    const newest = files
      .map((f) => f.replace(/(\.postgres|\.sqlite)?\.sql$/, ''))
      .sort()
      .at(-1);
    assert.deepEqual(health.json(), { status: 'ok', version: pkg.version, schema: newest });
    const ready = await ctx.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), {
      status: 'ready',
      storage: BACKEND,
      crypto: { backend: 'native', reason: 'native secp256k1 and keccak addons loaded and passed the self-check' },
    });

    // Storage gone: not ready, and no internals in the answer.
    await ctx.deps.store.close();
    const down = await ctx.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(down.statusCode, 503);
    assert.equal(down.json().status, 'unavailable');
    assert.equal(down.json().storage, BACKEND);
    assert.equal((await ctx.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  } finally {
    await ctx.app.close();
  }
});

test('a storage failure during a request is a 500 with a generic message, never a stack', async () => {
  const ctx = await createTestContext();
  try {
    await ctx.deps.store.close();
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/api/v2/public/sdk/webhookParameters',
      headers: { authToken: `pat.${'a'.repeat(43)}`, apiKey: `pk.${'b'.repeat(33)}` },
    });
    assert.equal(res.statusCode, 500);
    assert.deepEqual(res.json(), { statusCode: 500, message: 'Internal server error' });
  } finally {
    await ctx.app.close();
  }
});

test('/api/chains lists the served chains with public addresses only', async () => {
  const chain = {
    chainId: 8453,
    entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789',
    paymaster: '0x1111111111111111111111111111111111111111',
    embedded: false,
  } as const;
  // Never contacted: listing chains reads configuration only.
  const ctx = await createTestContext({ chains: [httpChainRuntime({ ...chain, rpcUrl: 'http://127.0.0.1:9/' })] });
  try {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/chains' });
    assert.equal(res.statusCode, 200);
    const deployments = [{ entryPointVersion: '0.6', entryPoint: chain.entryPoint, paymaster: chain.paymaster }];
    assert.deepEqual(res.json(), {
      signer: ctx.deps.signer.address,
      chains: [{ ...chain, deployments, feeTokens: [] }],
    });
  } finally {
    await ctx.close();
  }
});

test('/metrics says which build answers (patron_build_info)', async () => {
  const token = 'metrics-token-0123456789abcdef';
  const ctx = await createTestContext({
    config: { metrics: { enabled: true, port: undefined, host: '127.0.0.1', token } },
  });
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    const res = await ctx.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    const text = res.body;
    const line = text.split('\n').find((l) => l.startsWith('patron_build_info{'));
    assert.ok(line, text.slice(0, 300));
    assert.match(line, new RegExp(`version="${pkg.version.replaceAll('.', '\\.')}"`));
    assert.match(line, /schema="\d{4}_[a-z0-9_]+"/);
    assert.match(line, new RegExp(`node="${process.version}"`));
    assert.match(line, / 1$/);
  } finally {
    // The whole context: on PostgreSQL its pool would keep the test process alive.
    await ctx.close();
  }
});
