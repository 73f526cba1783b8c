import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { hexToBytes } from 'viem';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
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
import { answer, type Receiver, signedWith, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The emitters through the whole service: a real sponsorship on the in-process chain writes `sponsorship.signed`,
 * its inclusion seen by settlement writes `sponsorship.included`, both delivered in order to a real receiver; a dApp
 * with no endpoint gets no events; a receiver that hangs does not slow pm_sponsorUserOperation.
 */
const TIMEOUT_MS = 3000;
let fx: PatronFixture;
let ctx: TestContext;
let tenant: Tenant;
let quiet: Tenant;
let receiver: Receiver;
let secret: string;

before(async () => {
  fx = await startPatronFixture();
  ctx = await createTestContext({
    chains: [fixtureChainRuntime(fx)],
    signerKey: hexToBytes(KEYS.signer),
    config: { webhookTimeoutMs: TIMEOUT_MS },
    eventDelivery: { intervalMs: 0, backoffMs: 10 },
  });
  tenant = await createTenant(ctx.deps);
  quiet = await createTenant(ctx.deps);
  receiver = await startReceiver(answer({ ok: true }));
  secret = (
    await ctx.deps.lifecycleEvents.endpoints.set({
      dappId: tenant.dappId,
      url: receiver.url('/events'),
      active: true,
    })
  ).signingSecret;
});
after(async () => {
  await ctx.close();
  await fx.close();
  await receiver.close();
});

async function sponsor(who: Tenant, salt: bigint) {
  const op = await buildDeployingOp(fx, salt);
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/${fx.chain.chainId}/${who.apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'pm_sponsorUserOperation',
      params: [biconomyWireOp(op, false), { mode: 'SPONSORED', calculateGasLimits: true }],
    }),
  });
  const body = res.json() as { result?: Record<string, unknown> };
  assert.ok(body.result, res.body);
  return { op, result: body.result };
}

const events = () =>
  receiver.requests.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> });

describe('lifecycle event emitters', () => {
  test('signed, then included: in order, signed, with the reserved worst case and the actual cost', async () => {
    const { op, result } = await sponsor(tenant, 31n);
    await sponsor(quiet, 32n);
    await ctx.deps.lifecycleEvents.recorder.flush();
    assert.equal(await ctx.deps.lifecycleEvents.deliverer.runOnce(), 1, 'no event for the dApp without an endpoint');
    assert.equal(
      (await ctx.deps.store.lifecycleEvents.listByDapp({ dappId: quiet.dappId, limit: 10 })).length,
      0,
      'nothing written for it either',
    );
    const [signed] = events();
    assert.equal(signed?.type, 'sponsorship.signed');
    assert.equal(signedWith(secret, receiver.requests[0]), true);
    assert.equal(String(signed?.data.sender).toLowerCase(), op.sender.toLowerCase());
    assert.ok(BigInt(String(signed?.data.worstCaseWei)) > 0n);
    assert.equal(signed?.data.mode, 'SPONSORED');

    const final: UserOperationV06 = {
      ...op,
      paymasterAndData: result.paymasterAndData as `0x${string}`,
      callGasLimit: BigInt(result.callGasLimit as number),
      verificationGasLimit: BigInt(result.verificationGasLimit as number),
      preVerificationGas: BigInt(result.preVerificationGas as string),
    };
    const { events: onChain } = await submitHandleOps(fx, [await signAccount(fx, final)]);
    const cost = onChain[0]?.args.actualGasCost ?? 0n;
    await ctx.deps.settlement.runOnce();
    await ctx.deps.lifecycleEvents.recorder.flush();
    assert.equal(await ctx.deps.lifecycleEvents.deliverer.runOnce(), 1);
    const included = events()[1];
    assert.equal(included?.type, 'sponsorship.included');
    assert.equal(included?.data.userOpHash, signed?.data.userOpHash);
    assert.equal(included?.data.actualGasCostWei, cost.toString());
    assert.equal(included?.data.success, true);
    assert.match(String(included?.data.transactionHash), /^0x[0-9a-f]{64}$/);
    assert.ok(BigInt(String(included?.data.actualGasCostWei)) <= BigInt(String(signed?.data.worstCaseWei)));
  });

  test('a receiver that hangs does not slow pm_sponsorUserOperation', async () => {
    const before = receiver.requests.length;
    receiver.handler = () => new Promise(() => {});
    try {
      await sponsor(tenant, 41n);
      await ctx.deps.lifecycleEvents.recorder.flush();
      // The delivery round hangs on the receiver for its whole time budget, meanwhile sponsorships go on.
      const round = ctx.deps.lifecycleEvents.deliverer.runOnce();
      while (receiver.requests.length === before) await new Promise((r) => setTimeout(r, 5));
      const started = performance.now();
      for (const salt of [42n, 43n, 44n]) await sponsor(tenant, salt);
      const elapsed = performance.now() - started;
      assert.ok(elapsed < TIMEOUT_MS / 2, `three sponsorships took ${elapsed} ms while the receiver hung`);
      assert.equal(await round, 0, 'the hung post timed out');
    } finally {
      receiver.handler = answer({ ok: true });
    }
  });
});
