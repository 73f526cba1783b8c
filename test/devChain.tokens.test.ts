import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Address, erc20Abi } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { createTestContext, testConfig } from './helpers/testContext.js';

/**
 * The default start (embedded dev chain) serves the token mode out of the box: two dev tokens with fixed prices,
 * listed with the chain, and a demo account that already holds them.
 */
test('the dev chain lists USDC (6) and PDT (18) as usable fee tokens and funds its demo account with them', async () => {
  const base = testConfig();
  const ctx = await createTestContext({ config: { paymaster: { ...base.paymaster, devChain: true } } });
  try {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/chains' });
    assert.equal(res.statusCode, 200);
    const [chain] = (
      res.json() as {
        chains: Array<{
          chainId: number;
          feeTokens: Array<{ address: Address; symbol: string; decimals: number; usable: boolean }>;
          demoAccount: { address: Address; owner: Address; ownerPrivateKey: `0x${string}` };
        }>;
      }
    ).chains;
    assert.ok(chain !== undefined && chain.chainId === 31337);
    assert.deepEqual(
      chain.feeTokens.map((t) => [t.symbol, t.decimals, t.usable]),
      [
        ['USDC', 6, true],
        ['PDT', 18, true],
      ],
    );
    assert.equal(privateKeyToAddress(chain.demoAccount.ownerPrivateKey), chain.demoAccount.owner);
    const client = ctx.deps.chains.get(31337)?.client;
    assert.ok(client !== undefined);
    for (const t of chain.feeTokens) {
      const balance: bigint = await client.readContract({
        address: t.address,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [chain.demoAccount.address],
      });
      assert.equal(balance, 1_000_000n * 10n ** BigInt(t.decimals), `${t.symbol} granted to the demo account`);
    }
  } finally {
    await ctx.close();
  }
});
