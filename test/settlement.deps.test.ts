import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { getUserOperationHash } from 'viem/account-abstraction';
import {
  buildDeployingOp,
  fixtureChainRuntime,
  signAccount,
  signPaymaster,
  submitHandleOps,
} from './helpers/patronPaymasterV06.js';
import { BACKEND, createTestContext, insertBareDapp, testConfig } from './helpers/testContext.js';
import { usePatronChain } from './helpers/usePatronChain.js';

/**
 * Settlement as createDeps wires it: a follower per served chain (0 confirmations on the in-process chain), its
 * cursor set before createDeps returns, `runOnce` and `status` for tests and metrics, stopped by close; and
 * PATRON_SETTLEMENT=false turning it off.
 */
describe(`settlement wired by createDeps (${BACKEND})`, () => {
  const chain = usePatronChain();
  // No background round during the test: it calls runOnce itself.
  const quiet = { settlement: { ...testConfig().settlement, pollMs: 600_000 } };

  test('follows the served chain from its head; runOnce settles; status reports cursor, head and lag', async () => {
    const ctx = await createTestContext({ chains: [fixtureChainRuntime(chain.fx)], config: quiet });
    try {
      const head = await chain.fx.client.getBlockNumber({ cacheTime: 0 });
      const [before] = ctx.deps.settlement.status();
      assert.deepEqual(
        [before?.chainId, before?.confirmations, before?.cursorBlock, before?.lag],
        [chain.fx.chain.chainId, 0, head, 0n],
      );
      const dappId = await insertBareDapp(ctx.deps.store, 'wired');
      const signed = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx), chain.window);
      const op = await signAccount(chain.fx, signed);
      const userOpHash = getUserOperationHash({
        chainId: chain.fx.chain.chainId,
        entryPointAddress: chain.fx.entryPoint,
        entryPointVersion: '0.6',
        userOperation: op,
      });
      const [wei, usd] = [`w|${randomUUID()}`, `u|${randomUUID()}`];
      await ctx.deps.store.spendLedger.reserve({
        id: randomUUID(),
        dappId,
        chainId: chain.fx.chain.chainId,
        userOpHash,
        charges: [
          { key: wei, unit: 'wei', amount: 10n ** 16n, limit: 10n ** 18n, windowEnd: undefined },
          { key: usd, unit: 'usd', amount: 7_000_000n, limit: 10n ** 9n, windowEnd: undefined },
        ],
        expiresAt: Date.now() + 60_000,
        now: Date.now(),
      });
      const { events, receipt } = await submitHandleOps(chain.fx, [op], { gas: 3_000_000n });
      const cost = events[0]?.args.actualGasCost;
      assert.ok(cost !== undefined);
      const reports = await ctx.deps.settlement.runOnce();
      // One follower per paymaster deployment of the chain (EntryPoint v0.6 to v0.9): only v0.6's had an op.
      assert.deepEqual(
        reports.map((r) => r.settled),
        [1, 0, 0, 0],
      );
      const counters = await ctx.deps.store.spendLedger.counters([wei, usd]);
      assert.deepEqual(counters.get(wei), { used: cost, reserved: 0n });
      // No native price on this chain (no token catalog entry): the USD cap keeps what was reserved.
      assert.deepEqual(counters.get(usd), { used: 7_000_000n, reserved: 0n });
      const [after] = ctx.deps.settlement.status();
      assert.deepEqual([after?.cursorBlock, after?.settled, after?.lastError], [receipt.blockNumber, 1, undefined]);
    } finally {
      await ctx.close();
    }
  });

  test('PATRON_SETTLEMENT=false: nothing followed, no cursor written', async () => {
    const off = { settlement: { ...quiet.settlement, enabled: false } };
    const ctx = await createTestContext({ chains: [fixtureChainRuntime(chain.fx)], config: off });
    try {
      assert.deepEqual(ctx.deps.settlement.status(), []);
      assert.deepEqual(await ctx.deps.settlement.runOnce(), []);
      assert.equal(await ctx.deps.store.chainCursors.get(fixtureChainRuntime(chain.fx)), undefined);
    } finally {
      await ctx.close();
    }
  });
});
