import assert from 'node:assert/strict';
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
import {
  createTenant,
  createTestContext,
  type Tenant,
  type TestContext,
  withoutHoldShares,
} from './helpers/testContext.js';
import { answer, type Receiver, signedWith, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The events after the signature, through the whole service on the in-process chain, delivered to a real receiver
 * on 127.0.0.1 (SQLite, or PostgreSQL with PATRON_TEST_DATABASE_URL): `policy.threshold` at 80 % and 100 % of a
 * cap, once per window; `sponsorship.reorged` when a reorg removes an inclusion, then `sponsorship.included` again
 * at the new block; `sponsorship.expired` when the chain passes an unincluded op's window, in order after its
 * `sponsorship.signed`. The expiry moves the chain's clock, so it runs last.
 */
let fx: PatronFixture;
let ctx: TestContext;
let tenant: Tenant;
let receiver: Receiver;
let secret: string;

interface Body {
  readonly type: string;
  readonly data: Record<string, unknown>;
}

before(async () => {
  fx = await startPatronFixture();
  ctx = await createTestContext({
    chains: [fixtureChainRuntime(fx)],
    signerKey: hexToBytes(KEYS.signer),
    eventDelivery: { intervalMs: 0, backoffMs: 10 },
  });
  tenant = await createTenant(ctx.deps);
  await withoutHoldShares(ctx.deps, tenant.dappId);
  receiver = await startReceiver(answer({ ok: true }));
  secret = (
    await ctx.deps.lifecycleEvents.endpoints.set({ dappId: tenant.dappId, url: receiver.url('/e'), active: true })
  ).signingSecret;
  await ctx.deps.policies.create({
    dappId: tenant.dappId,
    name: 'five a day',
    rules: { caps: [{ scope: 'dapp', unit: 'ops', limit: '5', resets: 'daily' }] },
  });
});
after(async () => {
  await ctx.close();
  await fx.close();
  await receiver.close();
});

async function sponsor(salt: bigint): Promise<{ op: UserOperationV06; final: UserOperationV06 }> {
  const op = await buildDeployingOp(fx, salt);
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/${fx.chain.chainId}/${tenant.apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'pm_sponsorUserOperation',
      params: [biconomyWireOp(op, false), { mode: 'SPONSORED', calculateGasLimits: true }],
    }),
  });
  const result = (res.json() as { result?: Record<string, unknown> }).result;
  assert.ok(result, res.body);
  const final: UserOperationV06 = {
    ...op,
    paymasterAndData: result.paymasterAndData as `0x${string}`,
    callGasLimit: BigInt(result.callGasLimit as number),
    verificationGasLimit: BigInt(result.verificationGasLimit as number),
    preVerificationGas: BigInt(result.preVerificationGas as string),
  };
  return { op, final };
}

/** Writes what is queued and delivers until nothing is due; the bodies received since `from`. */
async function deliverAll(from: number): Promise<Body[]> {
  await ctx.deps.lifecycleEvents.recorder.flush();
  while ((await ctx.deps.lifecycleEvents.deliverer.runOnce()) > 0) {}
  return receiver.requests.slice(from).map((r) => JSON.parse(r.body) as Body);
}

describe('lifecycle events after the signature', () => {
  test('policy.threshold: 80 % and 100 % of a cap, each once in its window, signed', async () => {
    const from = receiver.requests.length;
    for (const salt of [1n, 2n, 3n]) await sponsor(salt);
    assert.deepEqual(
      (await deliverAll(from)).map((b) => b.type),
      ['sponsorship.signed', 'sponsorship.signed', 'sponsorship.signed'],
      '3 of 5: no threshold yet',
    );
    await sponsor(4n);
    const at80 = (await deliverAll(from)).filter((b) => b.type === 'policy.threshold');
    assert.equal(at80.length, 1);
    assert.deepEqual(
      { ...at80[0]?.data, windowStart: undefined, windowEnd: undefined, policyId: undefined },
      {
        policyName: 'five a day',
        scope: 'dapp',
        unit: 'ops',
        threshold: 80,
        used: '4',
        settled: '0',
        limit: '5',
        chainId: fx.chain.chainId,
        windowStart: undefined,
        windowEnd: undefined,
        policyId: undefined,
      },
    );
    assert.match(String(at80[0]?.data.windowEnd), /^\d{4}-\d\d-\d\dT00:00:00.000Z$/);
    const thresholdPost = receiver.requests.find((r) => r.body.includes('"policy.threshold"'));
    assert.equal(signedWith(secret, thresholdPost), true);

    await sponsor(5n);
    const all = (await deliverAll(from)).filter((b) => b.type === 'policy.threshold');
    assert.deepEqual(
      all.map((b) => [b.data.threshold, b.data.used]),
      [
        [80, '4'],
        [100, '5'],
      ],
    );
    // The same crossing again in the window (an instance that saw it too, a release and a new reservation) is one
    // event: the outbox's dedupe key.
    const rows = await ctx.deps.store.lifecycleEvents.listByDapp({ dappId: tenant.dappId, limit: 100 });
    const again = rows.find((r) => r.type === 'policy.threshold');
    assert.ok(again);
    await ctx.deps.store.lifecycleEvents.append([{ ...again, id: `evt_again_${again.seq}` }]);
    assert.equal(
      (await ctx.deps.store.lifecycleEvents.listByDapp({ dappId: tenant.dappId, limit: 100 })).length,
      rows.length,
      'a second write of one crossing is dropped',
    );
    // Room again for the next tests.
    await ctx.deps.policies.delete({ dappId: tenant.dappId, policyId: String(all[0]?.data.policyId) });
  });

  test('a reorg that removes an inclusion: sponsorship.reorged, then included again at the new block, in order', async () => {
    await ctx.deps.policies.create({
      dappId: tenant.dappId,
      name: 'roomy',
      rules: { caps: [{ scope: 'dapp', unit: 'ops', limit: '1000' }] },
    });
    const from = receiver.requests.length;
    await ctx.deps.settlement.runOnce();
    const { final } = await sponsor(11n);
    const signedOp = await signAccount(fx, final);
    const branch = await fx.client.snapshot();
    const first = await submitHandleOps(fx, [signedOp]);
    const oldBlock = first.receipt.blockNumber;
    await ctx.deps.settlement.runOnce();
    const before = await deliverAll(from);
    assert.deepEqual(
      before.map((b) => b.type),
      ['sponsorship.signed', 'sponsorship.included'],
    );
    const oldHash = before[1]?.data.blockHash;

    // The other branch: the same height holds another block; the op comes two blocks later.
    await fx.client.revert({ id: branch });
    const parent = await fx.client.getBlock({ blockNumber: oldBlock - 1n });
    await fx.client.setNextBlockTimestamp({ timestamp: parent.timestamp + 100n });
    await fx.client.mine({ blocks: 1 });
    const again = await submitHandleOps(fx, [signedOp]);
    assert.ok(again.receipt.blockNumber > oldBlock);
    const report = await ctx.deps.settlement.runOnce();
    assert.equal(
      report.some((r) => r.reorg),
      true,
      'settlement saw the reorg',
    );
    const after = (await deliverAll(from)).slice(2);
    assert.deepEqual(
      after.map((b) => b.type),
      ['sponsorship.reorged', 'sponsorship.included'],
    );
    assert.equal(after[0]?.data.removedBlockHash, oldHash);
    assert.equal(after[0]?.data.removedBlockNumber, oldBlock.toString());
    assert.equal(after[0]?.data.userOpHash, before[1]?.data.userOpHash);
    assert.equal(after[1]?.data.blockNumber, again.receipt.blockNumber.toString());
    assert.notEqual(after[1]?.data.blockHash, oldHash);
    // Read again (a restart, a second round): no second reorged nor included.
    await ctx.deps.settlement.runOnce();
    assert.equal((await deliverAll(from)).length, 4);
  });

  test("sponsorship.expired: the chain passed an unincluded op's window; after its signed event, once", async () => {
    const from = receiver.requests.length;
    await sponsor(21n);
    const [signed] = await deliverAll(from);
    assert.equal(signed?.type, 'sponsorship.signed');
    const validUntil = Number(signed?.data.validUntil);
    await fx.client.setNextBlockTimestamp({ timestamp: BigInt(validUntil + 1) });
    await fx.client.mine({ blocks: 1 });
    await ctx.deps.settlement.runOnce();
    await ctx.deps.settlement.runOnce();
    const expired = (await deliverAll(from)).filter(
      (b) => b.type === 'sponsorship.expired' && b.data.userOpHash === signed?.data.userOpHash,
    );
    assert.equal(expired.length, 1);
    assert.deepEqual(
      { ...expired[0]?.data, reservationId: undefined },
      {
        chainId: signed?.data.chainId,
        entryPoint: signed?.data.entryPoint,
        paymaster: signed?.data.paymaster,
        sender: signed?.data.sender,
        nonce: signed?.data.nonce,
        userOpHash: signed?.data.userOpHash,
        validUntil,
        reservationId: undefined,
        reason: 'window',
        released: signed?.data.reserved,
      },
    );
    assert.equal(expired[0]?.data.reservationId, signed?.data.reservationId);
    // The earlier ops of this file that were never included expired too, each once, each after its signature.
    const rows = await ctx.deps.store.lifecycleEvents.listByDapp({ dappId: tenant.dappId, limit: 200 });
    const byOp = new Map<string, string[]>();
    for (const r of [...rows].reverse()) byOp.set(r.opKey, [...(byOp.get(r.opKey) ?? []), r.type]);
    const expiredOps = [...byOp.values()].filter((types) => types.includes('sponsorship.expired'));
    assert.equal(expiredOps.length, 6, 'the five of the threshold test and this one');
    for (const types of expiredOps) assert.deepEqual(types, ['sponsorship.signed', 'sponsorship.expired']);
  });
});
