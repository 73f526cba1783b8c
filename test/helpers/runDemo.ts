import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { runCli } from '../../src/cli/main.js';
import { createTenant, TEST_MASTER_KEY, type Tenant, type TestContext } from './testContext.js';

/**
 * `patron demo --json` as an operator runs it against a listening Patron: a new tenant, the service on 127.0.0.1,
 * the CLI in this process on the same store. Asserts it exited 0; returns its steps, one per line, and the tenant.
 */
export async function runDemoAgainst(ctx: TestContext): Promise<{ lines: string; tenant: Tenant }> {
  const tenant = await createTenant(ctx.deps);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  let out = '';
  const code = await runCli({
    argv: ['demo', '--url', url, '--account', tenant.email, '--json'],
    env: { PATRON_DATA_DIR: '/nonexistent-patron-test', PATRON_DEV_CHAIN: 'false' },
    io: { stdout: (t) => (out += t), stderr: (t) => (out += t) },
    store: ctx.deps.store,
    masterKey: TEST_MASTER_KEY,
  });
  assert.equal(code, 0, out);
  return { lines: (JSON.parse(out) as { demo: string[] }).demo.join('\n'), tenant };
}
