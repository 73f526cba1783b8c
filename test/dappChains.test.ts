import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../src/cli/main.js';
import {
  createTenant,
  createTestContext,
  dropTestSchema,
  openTestStore,
  TEST_MASTER_KEY,
  type Tenant,
  type TestContext,
} from './helpers/testContext.js';

/**
 * A dApp may list only chains this deployment serves (the dev chain and PATRON_CHAINS): the REST API (which the
 * dashboard calls), the CLI and `dapp update` refuse the others naming the chains served. A chain a dApp already
 * lists may stay when the deployment stops serving it, so renaming and removing are never blocked.
 */
describe('admin API: chains this deployment does not serve', () => {
  let ctx: TestContext;
  let t: Tenant;
  before(async () => {
    ctx = await createTestContext({ servedChainIds: [31337, 8453] });
    t = await createTenant(ctx.deps);
  });
  after(async () => {
    await ctx.close();
  });

  const call = async (method: 'POST' | 'PATCH', url: string, body: object) => {
    const res = await ctx.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${t.authToken}` },
      payload: body,
    });
    return { status: res.statusCode, body: JSON.parse(res.body) as unknown };
  };

  test('POST /api/admin/dapps with an unserved chain: 400 naming it and the chains served; nothing stored', async () => {
    const before = await ctx.deps.store.dapps.listByAccount(t.accountId);
    assert.deepEqual(await call('POST', '/api/admin/dapps', { name: 'x', chainIds: [137, 10, 8453] }), {
      status: 400,
      body: {
        statusCode: 400,
        message:
          'chains 10, 137 are not served by this deployment; it serves 8453, 31337 (the operator adds chains with PATRON_CHAINS)',
      },
    });
    assert.deepEqual(await ctx.deps.store.dapps.listByAccount(t.accountId), before);
    const ok = await call('POST', '/api/admin/dapps', { name: 'served', chainIds: [8453] });
    assert.equal(ok.status, 200);
  });

  test('PATCH adding an unserved chain is refused; one the dApp already lists may stay', async () => {
    const url = `/api/admin/dapps/${t.dappId}`;
    assert.deepEqual(await call('PATCH', url, { chainIds: [31337, 1] }), {
      status: 400,
      body: {
        statusCode: 400,
        message:
          'chain 1 is not served by this deployment; it serves 8453, 31337 (the operator adds chains with PATRON_CHAINS)',
      },
    });
    assert.deepEqual((await ctx.deps.store.dapps.findById(t.dappId))?.chainIds, [31337]);
    // The deployment stopped serving chain 5 after the dApp listed it (written as an older deployment would have).
    await ctx.deps.store.dapps.update({
      accountId: t.accountId,
      dappId: t.dappId,
      chainIds: [5, 31337],
      now: Date.now(),
    });
    const kept = await call('PATCH', url, { chainIds: [5, 8453, 31337] });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.deepEqual((await ctx.deps.store.dapps.findById(t.dappId))?.chainIds, [5, 8453, 31337]);
    assert.equal((await call('PATCH', url, { name: 'renamed' })).status, 200);
    const added = await call('PATCH', url, { chainIds: [5, 7, 31337] });
    assert.equal(added.status, 400);
    assert.match(JSON.stringify(added.body), /chain 7 is not served by this deployment; it serves 8453, 31337/);
  });

  test("another account's dApp id with an unserved chain is still a 404, not a hint that it exists", async () => {
    const other = await createTenant(ctx.deps);
    const res = await call('PATCH', `/api/admin/dapps/${other.dappId}`, { chainIds: [1] });
    assert.deepEqual(res, { status: 404, body: { statusCode: 404, message: 'dApp not found' } });
  });
});

describe('CLI: dapp create/update chains and dapp limits --set', () => {
  let store: Awaited<ReturnType<typeof openTestStore>>['store'];
  let schema: string | undefined;
  before(async () => {
    ({ store, schema } = await openTestStore());
  });
  after(async () => {
    await store.close();
    await dropTestSchema(schema);
  });

  /** The CLI on the dev defaults (it serves chain 31337 only), or with the given environment. */
  async function cli(argv: readonly string[], env: Record<string, string> = {}) {
    let stdout = '';
    const code = await runCli({
      argv: [...argv, '--json'],
      env: { PATRON_DATA_DIR: '/nonexistent-patron-test', LOG_LEVEL: 'silent', ...env },
      io: {
        stdout: (s) => {
          stdout += s;
        },
        stderr: () => {},
      },
      store,
      masterKey: TEST_MASTER_KEY,
    });
    return { code, out: JSON.parse(stdout) as { error?: { message: string }; dapp?: { dappId: string } } };
  }

  test('--chain 137,10 on a deployment serving 31337 is refused naming it; PATRON_CHAINS widens it', async () => {
    await cli(['account', 'create', '--email', 'chains@example.com']);
    assert.deepEqual(await cli(['dapp', 'create', '--name', 'x', '--chain', '137,10']), {
      code: 1,
      out: {
        error: {
          message:
            'chains 10, 137 are not served by this deployment; it serves 31337 (the operator adds chains with PATRON_CHAINS)',
        },
      },
    });
    assert.deepEqual(await store.dapps.listByAccount((await store.accounts.list())[0]?.id ?? ''), []);
    const chains = JSON.stringify([
      { chainId: 137, rpcUrl: 'http://127.0.0.1:1', paymasters: { '0.7': `0x${'bb'.repeat(20)}` } },
    ]);
    const created = await cli(['dapp', 'create', '--name', 'x', '--chain', '137,31337'], { PATRON_CHAINS: chains });
    assert.equal(created.code, 0, JSON.stringify(created.out));
    const dappId = created.out.dapp?.dappId ?? '';
    const update = await cli(['dapp', 'update', '--id', dappId, '--chain', '137,10'], { PATRON_CHAINS: chains });
    assert.deepEqual(
      update.out.error?.message,
      'chain 10 is not served by this deployment; it serves 137, 31337 (the operator adds chains with PATRON_CHAINS)',
    );
    const none = await cli(['dapp', 'create', '--name', 'y', '--chain', '1'], { PATRON_DEV_CHAIN: 'false' });
    assert.deepEqual(
      none.out.error?.message,
      'chain 1 is not served by this deployment, which serves no chain yet: the operator sets PATRON_CHAINS',
    );
  });

  test('dapp limits --set with a bound at the top level names the key and where it belongs', async () => {
    const created = await cli(['dapp', 'create', '--name', 'limits', '--chain', '31337']);
    const dappId = created.out.dapp?.dappId ?? '';
    const cases: Array<[string, string]> = [
      [
        '{"maxOpCostWei":"1"}',
        'limits.maxOpCostWei is not a known key here: maxOpCostWei belongs under "bounds": {"bounds":{"maxOpCostWei":"1"}}',
      ],
      [
        '{"bounds":{"maxOpCostWei":"1"},"ratelimits":{}}',
        'limits.ratelimits is not a known key here: did you mean rateLimits?',
      ],
      ['[]', 'limits must be a JSON object such as {"bounds":{"maxOpCostWei":"10000000000000000"}}'],
    ];
    for (const [set, message] of cases) {
      assert.deepEqual(
        await cli(['dapp', 'limits', '--id', dappId, '--set', set]),
        { code: 1, out: { error: { message } } },
        set,
      );
    }
    assert.deepEqual((await store.dapps.findById(dappId))?.limits, {}, 'nothing stored');
  });
});
