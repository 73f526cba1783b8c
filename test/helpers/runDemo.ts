import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { DEV_BUNDLER_KEYS } from '../../src/chain/buildChains.js';
import { devChainDeployments } from '../../src/chain/embeddedChain.js';
import { runCli } from '../../src/cli/main.js';
import { startAlto } from './altoBundler.js';
import { createTenant, TEST_MASTER_KEY, type Tenant, type TestContext } from './testContext.js';

/**
 * `patron demo --json` as an operator runs it against a listening Patron: a new tenant, the service on 127.0.0.1,
 * a real bundler (alto) on its dev chain as `npm start` runs one (the test context has no dev bundler of its own, so
 * the demo is given this one with `--bundler`), the CLI in this process on the same store. Asserts it exited 0;
 * returns its steps, one per line, the tenant, and everything alto printed (for a failing test's message).
 */
export async function runDemoAgainst(ctx: TestContext): Promise<{ lines: string; tenant: Tenant; bundlerUrl: string }> {
  const dev = ctx.deps.devChain;
  assert.ok(dev !== undefined, 'the demo needs the dev chain');
  const tenant = await createTenant(ctx.deps);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const alto = await startAlto({
    rpcUrl: `${url}/chain/${dev.chain.chainId}`,
    entryPoints: devChainDeployments(dev).map((d) => d.entryPoint),
    executorKey: DEV_BUNDLER_KEYS.executor,
  });
  try {
    let out = '';
    const code = await runCli({
      argv: ['demo', '--url', url, '--account', tenant.email, '--bundler', alto.url, '--json'],
      env: { PATRON_DATA_DIR: '/nonexistent-patron-test', PATRON_DEV_CHAIN: 'false' },
      io: { stdout: (t) => (out += t), stderr: (t) => (out += t) },
      store: ctx.deps.store,
      masterKey: TEST_MASTER_KEY,
    });
    assert.equal(code, 0, `${out}\n--- alto\n${alto.output()}`);
    return { lines: (JSON.parse(out) as { demo: string[] }).demo.join('\n'), tenant, bundlerUrl: alto.url };
  } finally {
    await alto.close();
  }
}
