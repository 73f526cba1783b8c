import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { hexToBytes } from 'viem';
import type { Config } from '../src/config/config.js';
import { metricsOnCall } from '../src/metrics/metricsOnCall.js';
import { createPatronMetrics } from '../src/metrics/patronMetrics.js';
import { viemKeccak } from '../src/paymaster/entryPoints/abiWords.js';
import { type UserOperationV06, userOpHashV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { issuedSignature } from '../src/paymaster/requestFacts.js';
import type { CallReport } from '../src/rpc/callReport.js';
import {
  buildDeployingOp,
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  signAccount,
  startPatronFixture,
  submitHandleOps,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp } from './helpers/rpcFixture.js';
import { createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';
import { closedPort } from './helpers/webhookReceiver.js';

/** /metrics (docs/reference/metrics.md, "Metrics"): off by default, the token, the counters after real calls, bounded labels. */
const TOKEN = 'metrics-token-0123456789abcdef';
const onMainApp: Config['metrics'] = { enabled: true, port: undefined, host: '127.0.0.1', token: TOKEN };

/** A metric's value in the text format, for the series whose labels include every one given. */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

const seriesCount = (text: string) => text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;

describe('/metrics switches', () => {
  test('off by default: 404 in the REST envelope', async () => {
    const ctx = await createTestContext();
    try {
      const res = await ctx.app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().statusCode, 404);
      assert.equal(ctx.deps.metrics, undefined);
    } finally {
      await ctx.close();
    }
  });

  test('on the main app: 401 without or with a wrong token, 200 with it; the names are there', async () => {
    const ctx = await createTestContext({ config: { metrics: onMainApp } });
    try {
      for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef', `Basic ${TOKEN}`, TOKEN]) {
        const res = await ctx.app.inject({
          method: 'GET',
          url: '/metrics',
          headers: authorization === undefined ? {} : { authorization },
        });
        assert.equal(res.statusCode, 401, String(authorization));
        assert.deepEqual(Object.keys(res.json()).sort(), ['message', 'statusCode']);
        assert.equal(res.json().statusCode, 401);
      }
      const res = await ctx.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      for (const name of [
        'patron_rpc_requests_total',
        'patron_rpc_request_duration_seconds',
        'patron_webhook_calls_total',
        'patron_webhook_duration_seconds',
        'patron_signatures_total',
        'patron_reserved_wei_total',
        'patron_settled_wei_total',
        'patron_paymaster_deposit_wei',
        'patron_live_liabilities_wei',
        'patron_price_age_seconds',
        'patron_settlement_lag_blocks',
        'patron_solvency_signing',
        'patron_runway_seconds',
        'process_cpu_user_seconds_total',
      ]) {
        assert.match(res.body, new RegExp(`# TYPE ${name} `), name);
      }
    } finally {
      await ctx.close();
    }
  });

  test('on a port of its own: served there (token still checked), not on the main app', async () => {
    const port = await closedPort();
    const ctx = await createTestContext({
      config: { metrics: { enabled: true, port, host: '127.0.0.1', token: TOKEN } },
    });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const main = await ctx.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(main.statusCode, 404);
      const get = (authorization?: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = http.get(
            {
              host: '127.0.0.1',
              port,
              path: '/metrics',
              headers: authorization === undefined ? {} : { authorization },
            },
            (res) => {
              let body = '';
              res.on('data', (c: Buffer) => {
                body += c.toString();
              });
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
            },
          );
          req.on('error', reject);
        });
      assert.equal((await get()).status, 401);
      const ok = await get(`Bearer ${TOKEN}`);
      assert.equal(ok.status, 200);
      assert.match(ok.body, /# TYPE patron_rpc_requests_total counter/);
    } finally {
      await ctx.close();
    }
  });
});

describe('/metrics after real calls through the app', () => {
  let fx: PatronFixture;
  let ctx: TestContext;
  let tenant: Tenant;
  before(async () => {
    fx = await startPatronFixture();
    ctx = await createTestContext({
      chains: [fixtureChainRuntime(fx)],
      signerKey: hexToBytes(KEYS.signer),
      config: { metrics: onMainApp },
    });
    tenant = await createTenant(ctx.deps);
  });
  after(async () => {
    await ctx.close();
    await fx.close();
  });

  const rpc = async (method: string, params: unknown[]) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/api/v1/${fx.chain.chainId}/${tenant.apiKey}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return res.json() as { result?: Record<string, unknown>; error?: { code: number } };
  };
  const scrape = async () =>
    (await ctx.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body;

  test('a sponsorship, an invalid call and the op’s inclusion move their counters', async () => {
    const chain = String(fx.chain.chainId);
    const op = await buildDeployingOp(fx, 11n);
    const sponsored = await rpc('pm_sponsorUserOperation', [
      biconomyWireOp(op, false),
      { mode: 'SPONSORED', calculateGasLimits: true },
    ]);
    assert.ok(sponsored.result, JSON.stringify(sponsored));
    const invalid = await rpc('pm_sponsorUserOperation', [{ sender: 'nope' }, { mode: 'SPONSORED' }]);
    assert.equal(invalid.error?.code, -32602);

    let text = await scrape();
    const sponsoredSeries = {
      method: 'pm_sponsorUserOperation',
      mode: 'SPONSORED',
      outcome: 'sponsored',
      rule: 'none',
    };
    assert.equal(value(text, 'patron_rpc_requests_total', sponsoredSeries), 1);
    assert.equal(value(text, 'patron_rpc_requests_total', { outcome: 'error' }), 1);
    assert.equal(value(text, 'patron_rpc_request_duration_seconds_count', { method: 'pm_sponsorUserOperation' }), 2);
    assert.equal(value(text, 'patron_signatures_total', { chain, mode: 'SPONSORED' }), 1);
    const reserved = value(text, 'patron_reserved_wei_total', { chain });
    assert.ok(reserved > 0);
    // The v0.6 paymaster signed; the chain's other paymasters (v0.7 to v0.9) have their own deposits and figures.
    const v06 = { chain, paymaster: fx.paymaster };
    assert.equal(value(text, 'patron_live_liabilities_wei', v06), reserved, 'the open signature is a liability');
    assert.equal(value(text, 'patron_live_liabilities_wei', { chain }), reserved, 'on the v0.6 paymaster only');
    assert.equal(value(text, 'patron_paymaster_deposit_wei', v06), 10e18);
    assert.equal(value(text, 'patron_solvency_signing', v06), 1);

    // Included on chain, then seen by settlement: the settled wei move, and the liability is gone.
    const r = sponsored.result ?? {};
    const final: UserOperationV06 = {
      ...op,
      paymasterAndData: r.paymasterAndData as `0x${string}`,
      callGasLimit: BigInt(r.callGasLimit as number),
      verificationGasLimit: BigInt(r.verificationGasLimit as number),
      preVerificationGas: BigInt(r.preVerificationGas as string),
    };
    const { events } = await submitHandleOps(fx, [await signAccount(fx, final)]);
    const cost = events[0]?.args.actualGasCost ?? 0n;
    assert.ok(cost > 0n);
    await ctx.deps.settlement.runOnce();
    await ctx.deps.solvency.checkNow();
    text = await scrape();
    assert.equal(value(text, 'patron_settled_wei_total', { chain }), Number(cost));
    assert.ok(Number(cost) <= reserved, 'the worst case bounds the actual cost');
    assert.equal(value(text, 'patron_live_liabilities_wei', { chain }), 0);
    // Settlement told the metrics of its round (the gauge holds its last report): the chain's lag is a series.
    assert.match(text, new RegExp(`^patron_settlement_lag_blocks\\{chain="${chain}"\\} \\d+$`, 'm'));
    assert.ok(value(text, 'patron_runway_seconds', { chain, paymaster: fx.paymaster }) > 0);
  });
});

describe('metricsOnCall labels', () => {
  const op: UserOperationV06 = {
    sender: '0x0000000000000000000000000000000000000001',
    nonce: 0n,
    initCode: '0x',
    callData: '0x',
    callGasLimit: 1n,
    verificationGasLimit: 1n,
    preVerificationGas: 1n,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
    paymasterAndData: '0x',
    signature: '0x',
  };
  const base: CallReport = {
    at: 0,
    method: 'pm_sponsorUserOperation',
    accountId: 'acc',
    dappId: 'dapp',
    chainId: 8453,
    facts: [],
    latencyMs: 12,
  };

  test('denials by rule, webhook outcomes, signatures; unknown values become "other"', async () => {
    const metrics = createPatronMetrics({ chainIds: [8453], processMetrics: false });
    const observe = metricsOnCall(metrics);
    observe({ ...base, error: { code: -32012, message: 'x', data: { rule: 'cap' } } });
    observe({ ...base, error: { code: -32012, message: 'x', data: { rule: 'somethingNew' } } });
    observe({ ...base, error: { code: -32040, message: 'x', data: { rule: 'maxOpCost' } } });
    observe({
      ...base,
      facts: [{ kind: 'webhook', allowed: false, reason: 'timeout', latencyMs: 2000, calls: 1 }],
      error: { code: -32011, message: 'x', data: { reason: 'timeout' } },
    });
    observe({ ...base, error: { code: -32010, message: 'x' } });
    observe({ ...base, error: { code: -32042, message: 'x', data: { rule: 'solvency' } } });
    observe({ ...base, error: { code: -32603, message: 'x' } });
    // Unreadable chain fees are an error (transient, HTTP 503), not a denial, and still name their guard.
    observe({ ...base, error: { code: -32041, message: 'x', data: { rule: 'chainFees', chainId: 8453 } } });
    observe({
      ...base,
      method: 'pm_getFeeQuoteOrData',
      facts: [{ kind: 'op', mode: 'ERC20', sender: op.sender }],
      outcome: 'quotes',
    });
    observe({
      ...base,
      chainId: 999,
      facts: [
        { kind: 'op', mode: 'SPONSORED', sender: op.sender },
        { kind: 'webhook', allowed: true, latencyMs: 30, calls: 1 },
        {
          kind: 'signed',
          mode: 'SPONSORED',
          paymasterAndData: '0x',
          ...issuedSignature({
            chain: { chainId: 999, paymaster: op.sender, entryPoint: op.sender },
            worstCaseWei: 5n,
            validUntil: 0,
            window: { unit: 'seconds', until: 0 },
            sender: op.sender,
            nonce: op.nonce,
            opKey: () => '0x00',
            signature: '00',
            hash: () => userOpHashV06({ userOp: op, entryPoint: op.sender, chainId: 999 }, viemKeccak),
          }),
        },
      ],
      outcome: 'signs',
    });
    observe({ ...base, method: 'eth_whatever', error: { code: -32602, message: 'x' } });
    const text = (await metrics.render()).body;
    const req = 'patron_rpc_requests_total';
    assert.equal(value(text, req, { outcome: 'denied', rule: 'cap' }), 1);
    assert.equal(value(text, req, { outcome: 'denied', rule: 'other' }), 1);
    assert.equal(value(text, req, { outcome: 'denied', rule: 'maxOpCost' }), 1);
    assert.equal(value(text, req, { outcome: 'denied', rule: 'webhook_timeout' }), 1);
    assert.equal(value(text, req, { outcome: 'denied', rule: 'webhook_denied' }), 1);
    assert.equal(value(text, req, { outcome: 'denied', rule: 'solvency' }), 1);
    assert.equal(value(text, req, { outcome: 'error', rule: 'none' }), 2);
    assert.equal(value(text, req, { outcome: 'error', rule: 'chainFees' }), 1);
    assert.equal(value(text, req, { method: 'pm_getFeeQuoteOrData', mode: 'ERC20', outcome: 'quoted' }), 1);
    assert.equal(value(text, req, { method: 'other' }), 1);
    assert.equal(value(text, 'patron_webhook_calls_total', { outcome: 'timeout' }), 1);
    assert.equal(value(text, 'patron_webhook_calls_total', { outcome: 'allowed' }), 1);
    assert.equal(value(text, 'patron_signatures_total', { chain: 'other', mode: 'SPONSORED' }), 1);
    assert.equal(value(text, 'patron_reserved_wei_total', { chain: 'other' }), 5);
  });

  test('the request log’s losses: dropped and failed entries, as the recorder counts them at each scrape', async () => {
    const losses = { dropped: 0, failed: 0 };
    const metrics = createPatronMetrics({ chainIds: [8453], processMetrics: false, requestLogLosses: () => losses });
    let text = (await metrics.render()).body;
    assert.match(text, /^patron_request_log_dropped_total 0$/m);
    losses.dropped = 7;
    losses.failed = 2;
    text = (await metrics.render()).body;
    assert.equal(value(text, 'patron_request_log_dropped_total'), 7);
    assert.equal(value(text, 'patron_request_log_failed_total'), 2);
    losses.dropped = 9;
    assert.equal(value((await metrics.render()).body, 'patron_request_log_dropped_total'), 9);
  });

  test('a thousand dApps, senders, methods and reasons add no series', async () => {
    const metrics = createPatronMetrics({ chainIds: [8453], processMetrics: false });
    const observe = metricsOnCall(metrics);
    const call = (i: number): CallReport => ({
      ...base,
      method: i % 2 === 0 ? 'pm_sponsorUserOperation' : `pm_made_up_${i}`,
      dappId: `dapp-${i}`,
      accountId: `acc-${i}`,
      chainId: i % 3 === 0 ? 8453 : 100_000 + i,
      facts: [
        { kind: 'op', mode: 'SPONSORED', sender: `0x${i.toString(16).padStart(40, '0')}` },
        { kind: 'webhook', allowed: false, reason: `reason-${i}`, latencyMs: i, calls: 1 },
      ],
      error: { code: -32012, message: `denied ${i}`, data: { rule: `rule-${i}`, reason: `r-${i}` } },
    });
    for (let i = 0; i < 10; i++) observe(call(i));
    metrics.observeIncluded({ chainId: 7, userOpHash: '0x01', actualGasCost: 1n });
    const before = seriesCount((await metrics.render()).body);
    for (let i = 10; i < 1010; i++) observe(call(i));
    for (let i = 0; i < 1000; i++)
      metrics.observeIncluded({ chainId: 100 + i, userOpHash: `0x${i}`, actualGasCost: 1n });
    const text = (await metrics.render()).body;
    assert.equal(seriesCount(text), before);
    assert.doesNotMatch(text, /dapp-|acc-|0x0000000000|reason-|rule-/);
  });
});
