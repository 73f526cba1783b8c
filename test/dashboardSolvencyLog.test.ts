import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, formatEther, type Hex, hexToBytes, parseEther } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import type { Config } from '../src/config/config.js';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { devChainTokenSettings } from '../src/tokens/devChainTokens.js';
import {
  buildDeployingOp,
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  paymasterDeposit,
  signAccount,
  startPatronFixture,
  submitHandleOps,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp } from './helpers/rpcFixture.js';
import { createTenant, createTestContext, type Tenant, type TestContext, testConfig } from './helpers/testContext.js';

/**
 * What the dashboard reads for issue 11, through the admin API: the paymaster status's solvency per chain
 * (deposit, liabilities, required, signing, runway), the request log's policy decision and actual cost once
 * settled, and the native price's age on /metrics.
 */
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const metrics: Config['metrics'] = { enabled: true, port: undefined, host: '127.0.0.1', token: METRICS_TOKEN };
/** buildDeployingOp's worst case: (100,000 + 3 × 600,000 + 50,000) gas × 2 gwei. */
const WORST_CASE = 1_950_000n * 2_000_000_000n;

let fx: PatronFixture;
let ctx: TestContext;

before(async () => {
  fx = await startPatronFixture(); // paymaster deposit: 10 ETH
  const chain = fixtureChainRuntime(fx);
  ctx = await createTestContext({
    chains: [chain],
    tokenChains: [devChainTokenSettings({ chainId: chain.chainId, client: chain.client, tokens: fx.tokens })],
    signerKey: hexToBytes(KEYS.signer),
    config: { metrics },
  });
});
after(async () => {
  await ctx?.close();
  await fx?.close();
});

const get = (t: Tenant, url: string) =>
  ctx.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${t.authToken}` } });
const sponsor = async (t: Tenant, op: UserOperationV06) => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/${fx.chain.chainId}/${t.apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'pm_sponsorUserOperation',
      params: [biconomyWireOp(op), { mode: 'SPONSORED', calculateGasLimits: false }],
    }),
  });
  return res.json() as { result?: { paymasterAndData: Hex }; error?: { code: number } };
};

interface LogEntry {
  outcome: string;
  policy: {
    decision: string;
    rule: string | null;
    policyId: string | null;
    policyIds: string[];
    reserved: Array<{ unit: string; amount: string }>;
    guarantee: boolean;
  } | null;
  userOpHash: string | null;
  actualCostWei: string | null;
}
const logEntries = async (t: Tenant): Promise<LogEntry[]> => {
  const res = await get(t, '/api/admin/request-log');
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.entries;
};

describe('paymaster status: solvency', () => {
  test('a fresh chain signs; its deposit is the EntryPoint balanceOf(paymaster); no spend, no runway', async () => {
    const t = await createTenant(ctx.deps);
    await ctx.deps.solvency.checkNow();
    const onChain = await paymasterDeposit(fx);
    const res = await get(t, '/api/admin/paymaster-status');
    assert.equal(res.statusCode, 200, res.body);
    const [c] = res.json().data.chains;
    const s = c.solvency;
    assert.deepEqual(s.deposit, { wei: onChain.toString(), eth: formatEther(onChain) });
    assert.equal(s.signing, true);
    assert.equal(s.heldReason, null);
    assert.equal(typeof s.marginBps, 'number');
    assert.match(s.liabilities.wei, /^\d+$/);
    assert.match(s.required.wei, /^\d+$/);
    assert.match(s.floor.wei, /^\d+$/);
    assert.ok(!Number.isNaN(Date.parse(s.checkedAt)));
    if (s.spendPerHour === null) assert.equal(s.runwaySeconds, null);
  });

  test('a deposit below the floor: signing held, and the reason is the floor', async () => {
    const held = await createTestContext({
      chains: [fixtureChainRuntime(fx)],
      signerKey: hexToBytes(KEYS.signer),
      config: { solvency: { ...testConfig().solvency, enabled: true, floorWei: parseEther('20') } },
    });
    try {
      await held.deps.solvency.checkNow();
      const t = await createTenant(held.deps);
      const res = await held.app.inject({
        method: 'GET',
        url: '/api/admin/paymaster-status',
        headers: { authorization: `Bearer ${t.authToken}` },
      });
      const s = res.json().data.chains[0].solvency;
      assert.equal(s.signing, false);
      assert.equal(s.heldReason, 'floor');
      assert.equal(s.floor.wei, parseEther('20').toString());
    } finally {
      await held.close();
    }
  });

  test('the answer schema in /openapi.json names the solvency fields', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).body;
    for (const field of ['heldReason', 'runwaySeconds', 'spendPerHour', 'actualCostWei', 'userOpHash']) {
      assert.ok(doc.includes(`"${field}"`), field);
    }
    // One row per deployment in `paymasters`; `chains` (the first deployment per chain) is kept, deprecated.
    const answer =
      JSON.parse(doc).paths['/api/admin/paymaster-status'].get.responses['200'].content['application/json'].schema
        .properties.data.properties;
    assert.ok(answer.paymasters.items.required.includes('entryPointVersion'));
    assert.equal(answer.chains.deprecated, true);
  });
});

describe('request log: the policy decision and the actual cost', () => {
  test('a sponsored op under a wei cap: reserved, then settled at the UserOperationEvent actualGasCost', async () => {
    const t = await createTenant(ctx.deps);
    const policy = await ctx.deps.policies.create({
      dappId: t.dappId,
      name: 'wei cap',
      rules: { caps: [{ scope: 'dapp', unit: 'wei', limit: (WORST_CASE * 10n).toString() }] },
    });
    const op = await buildDeployingOp(fx, 901n);
    const { result } = await sponsor(t, op);
    assert.ok(result, 'sponsored');
    await ctx.deps.requestLog.flush();
    const [signedEntry] = await logEntries(t);
    assert.equal(signedEntry?.outcome, 'sponsored');
    assert.deepEqual(signedEntry?.policy, {
      decision: 'passed',
      rule: null,
      policyId: null,
      policyIds: [policy.id],
      reserved: [{ unit: 'wei', amount: WORST_CASE.toString() }],
      guarantee: false,
    });
    assert.match(signedEntry?.userOpHash ?? '', /^0x[0-9a-f]{64}$/);
    assert.equal(signedEntry?.actualCostWei, null, 'not settled yet');

    const signed = await signAccount(fx, { ...op, paymasterAndData: result.paymasterAndData });
    const { events } = await submitHandleOps(fx, [signed]);
    const cost = events[0]?.args.actualGasCost;
    assert.ok(cost !== undefined && cost > 0n);
    assert.equal(events[0]?.args.userOpHash.toLowerCase(), signedEntry?.userOpHash);
    await ctx.deps.settlement.runOnce();
    const [settled] = await logEntries(t);
    assert.equal(settled?.actualCostWei, cost.toString());
  });

  test('a denied op shows the decision, the rule and the policy; nothing reserved, no hash, no cost', async () => {
    const t = await createTenant(ctx.deps);
    const op = await buildDeployingOp(fx, 902n);
    const policy = await ctx.deps.policies.create({
      dappId: t.dappId,
      name: 'no-bots',
      rules: { senders: { block: [op.sender] } },
    });
    const { error } = await sponsor(t, op);
    assert.equal(error?.code, -32012);
    await ctx.deps.requestLog.flush();
    const [entry] = await logEntries(t);
    assert.equal(entry?.outcome, 'denied');
    assert.deepEqual(entry?.policy, {
      decision: 'denied',
      rule: 'senderBlocked',
      policyId: policy.id,
      policyIds: [],
      reserved: [],
      guarantee: false,
    });
    assert.equal(entry?.userOpHash, null);
    assert.equal(entry?.actualCostWei, null);
  });
});

describe('request log: a solvency denial', () => {
  test('an op refused while signing is held is logged with its mode and sender', async () => {
    const held = await createTestContext({
      chains: [fixtureChainRuntime(fx)],
      signerKey: hexToBytes(KEYS.signer),
      config: { solvency: { ...testConfig().solvency, enabled: true, floorWei: parseEther('20') } },
    });
    try {
      await held.deps.solvency.checkNow();
      const t = await createTenant(held.deps);
      const op = await buildDeployingOp(fx, 903n);
      const res = await held.app.inject({
        method: 'POST',
        url: `/api/v1/${fx.chain.chainId}/${t.apiKey}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'pm_sponsorUserOperation',
          params: [biconomyWireOp(op), { mode: 'SPONSORED', calculateGasLimits: false }],
        }),
      });
      assert.equal(res.json().error?.code, -32042, res.body);
      await held.deps.requestLog.flush();
      const log = await held.app.inject({
        method: 'GET',
        url: '/api/admin/request-log',
        headers: { authorization: `Bearer ${t.authToken}` },
      });
      const [entry] = log.json().data.entries;
      assert.equal(entry?.outcome, 'denied');
      assert.equal(entry?.errorCode, -32042);
      // Before, the guard refused ahead of the op's report and the entry had neither.
      assert.equal(entry?.mode, 'SPONSORED');
      assert.equal(entry?.sender, op.sender.toLowerCase());
    } finally {
      await held.close();
    }
  });
});

// After the describe above: its v0.6 op was signed, included and settled, and no other paymaster signed anything.
describe('paymaster status: one row per deployment, each with its own figures', () => {
  test('the v0.6 row has the spend and a runway; the v0.7-v0.9 rows none; each deposit is its own', async () => {
    const t = await createTenant(ctx.deps);
    await ctx.deps.solvency.checkNow();
    const res = await get(t, '/api/admin/paymaster-status');
    assert.equal(res.statusCode, 200, res.body);
    const rows = res.json().data.paymasters as Array<{
      entryPointVersion: string;
      entryPoint: Address;
      paymaster: Address;
      solvency: { deposit: { wei: string }; spendPerHour: unknown; runwaySeconds: number | null };
    }>;
    assert.deepEqual(
      rows.map((r) => r.entryPointVersion),
      ['0.6', '0.7', '0.8', '0.9'],
    );
    for (const r of rows) {
      const onChain = await fx.client.readContract({
        address: r.entryPoint,
        abi: entryPoint06Abi,
        functionName: 'balanceOf',
        args: [r.paymaster],
      });
      assert.equal(r.solvency.deposit.wei, onChain.toString(), r.entryPointVersion);
      if (r.entryPointVersion === '0.6') {
        assert.notEqual(r.solvency.spendPerHour, null);
        assert.equal(typeof r.solvency.runwaySeconds, 'number');
      } else {
        assert.deepEqual([r.solvency.spendPerHour, r.solvency.runwaySeconds], [null, null], r.entryPointVersion);
      }
    }
    assert.notEqual(rows[0]?.solvency.deposit.wei, rows[1]?.solvency.deposit.wei, 'the v0.6 deposit paid for the op');
  });
});

describe('the native price age', () => {
  test('after the catalog has read, the catalog knows when and /metrics reports a small age', async () => {
    const at = ctx.deps.tokenCatalog.nativePriceUpdatedAtMs(fx.chain.chainId);
    assert.ok(at !== undefined, 'read at start-up');
    assert.ok(Date.now() - at < 60_000);
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    assert.equal(res.statusCode, 200);
    const line = res.body.split('\n').find((l) => l.startsWith('patron_price_age_seconds{'));
    assert.ok(line, 'the gauge has a value');
    assert.match(line, new RegExp(`chain="${fx.chain.chainId}"`));
    const age = Number(line.slice(line.lastIndexOf(' ') + 1));
    assert.ok(age >= 0 && age < 60, String(age));
    assert.equal(ctx.deps.tokenCatalog.nativePriceUpdatedAtMs(1), undefined, 'an unconfigured chain');
  });
});
