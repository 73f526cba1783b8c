import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Config } from '../src/config/config.js';
import type { MeeTankLike } from '../src/mee/tankWatch.js';
import { createTestContext, type TestContext, testConfig } from './helpers/testContext.js';

/**
 * The gas tanks' balance watch as deps.ts wires it: the real chain client of the in-process dev chain reads a real
 * ERC-20 balance (the dev USDC the demo account holds), and /metrics shows it with the runway and the alert level.
 */
const TOKEN = 'metrics-token-0123456789abcdef';
const metrics: Config['metrics'] = { enabled: true, port: undefined, host: '127.0.0.1', token: TOKEN };
let ctx: TestContext;
const tanks: MeeTankLike[] = [];
let listed = 0;

before(async () => {
  const base = testConfig();
  ctx = await createTestContext({
    config: { metrics, paymaster: { ...base.paymaster, devChain: true } },
    meeTanks: {
      listTanks: async () => {
        listed++;
        return tanks;
      },
      // 3,000,000 USDC a day against the demo account's 1,000,000: a third of a day of runway.
      tankSpend24h: async () => 3_000_000n * 10n ** 6n,
    },
  });
});
after(() => ctx.close());

const scrape = async () =>
  (await ctx.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body;

test('with no tank the watch lists, reads no chain and shows no series', async () => {
  await ctx.deps.tankWatch.runOnce();
  assert.ok(listed >= 1);
  assert.deepEqual(ctx.deps.tankWatch.state(), []);
  const body = await scrape();
  assert.match(body, /# TYPE patron_mee_tank_token_balance gauge/);
  assert.doesNotMatch(body, /^patron_mee_tank_token_balance\{/m);
});

test('a tank’s token balance is read from its chain and scraped, with its runway and low level', async () => {
  const dev = ctx.deps.devChain;
  assert.ok(dev?.demoAccount !== undefined);
  const usdc = dev.tokens.find((t) => t.symbol === 'USDC');
  assert.ok(usdc !== undefined);
  tanks.push({
    id: 'tank_test',
    dappId: 'dapp_test',
    chainId: dev.chain.chainId,
    address: dev.demoAccount.address,
    token: usdc.address,
    tokenDecimals: usdc.decimals,
    status: 'active',
    lowBalance: undefined,
  });
  await ctx.deps.tankWatch.runOnce();
  const [s] = ctx.deps.tankWatch.state();
  assert.equal(s?.balance, 1_000_000n * 10n ** 6n);
  assert.equal(s?.runwaySeconds, 28_800);
  assert.equal(s?.low, true, 'under a day of runway');
  const body = await scrape();
  const labels = `chain="${dev.chain.chainId}",tank="${dev.demoAccount.address.toLowerCase()}",token="${usdc.address.toLowerCase()}",dapp="dapp_test"`;
  assert.match(body, new RegExp(`^patron_mee_tank_token_balance\\{${labels}\\} 1000000000000$`, 'm'));
  assert.match(body, new RegExp(`^patron_mee_tank_runway_seconds\\{${labels}\\} 28800$`, 'm'));
  assert.match(body, new RegExp(`^patron_mee_tank_low\\{${labels}\\} 1$`, 'm'));
});
