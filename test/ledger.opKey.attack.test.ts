import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { toSimpleSmartAccount } from 'permissionless/accounts';
import { type Address, type Hex, parseEther, parseEventLogs, toHex } from 'viem';
import { entryPoint07Abi, toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import { COUNTER_ADDRESS } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { hexWire, newSimpleAccountOp, quantity } from './helpers/rpcV07.js';
import { BACKEND, createTenant, type Tenant, withoutHoldShares } from './helpers/testContext.js';

/**
 * Hole 1 of issue 20, the attacker's way on EntryPoint v0.7: ERC-7677 `pm_getPaymasterData` with
 * `calculateGasLimits: true` and the limits left out signs gas caps, so the reservation is keyed by the op key
 * (sender, nonce). The attacker asks for a cheap op, then for the same sender and nonce with callData that burns
 * a million gas, includes whatever it got signed with its own bundler (beneficiary itself), and settlement reads
 * the cost. The ledger must hold the largest worst case signed per key: what the deposit paid stays within the
 * dApp's cap. Also: a key released (the chain passed its window) and signed again is reserved again.
 */
let app: RpcFixture;
/** Burns ~0.5M gas whatever it is called with (within the unused-gas penalty bound's call gas): PUSH2 20000; loop { PUSH1 1; SWAP1; SUB; DUP1; PUSH1 3; JUMPI }. */
const BURNER: Address = '0x00000000000000000000000000000000b0b0b0b0';
const BURNER_CODE: Hex = '0x614e205b600190038060035700';

before(async () => {
  app = await startRpcFixture();
  await app.fx.client.setCode({ address: BURNER, bytecode: BURNER_CODE });
});
after(() => app.close());

const entryPoint = () => app.fx.entryPoints['0.7'];
const paymaster = () => app.fx.paymasters['0.7'];
const cheap = [{ to: COUNTER_ADDRESS, data: '0x01' as const }];
const burn = [{ to: BURNER, data: '0x' as const }];

type Account = Awaited<ReturnType<typeof toSimpleSmartAccount>>;
type Op = Awaited<ReturnType<typeof newSimpleAccountOp>>['op'];

async function paymasterData(tenant: Tenant, op: Op, expiryDuration = 600) {
  const res = await app.ctx.app.inject({
    method: 'POST',
    url: `/api/v2/${app.fx.chain.chainId}/${tenant.apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'pm_getPaymasterData',
      params: [
        hexWire({ ...op, callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n }),
        entryPoint(),
        toHex(BigInt(app.fx.chain.chainId)),
        { mode: 'SPONSORED', calculateGasLimits: true, expiryDuration },
      ],
    }),
  });
  return res.json() as { result?: Record<string, unknown>; error?: { code: number; data?: { rule?: string } } };
}

/** The op as the attacker submits it: the answered limits, its own signature, its own bundler's handleOps. */
async function include(account: Account, op: Op, d: Record<string, unknown>): Promise<bigint> {
  const full = {
    ...op,
    callGasLimit: quantity(d.callGasLimit),
    verificationGasLimit: quantity(d.verificationGasLimit),
    preVerificationGas: quantity(d.preVerificationGas),
    paymaster: d.paymaster as Address,
    paymasterVerificationGasLimit: quantity(d.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: quantity(d.paymasterPostOpGasLimit),
    paymasterData: d.paymasterData as Hex,
  } as UserOperation<'0.7'>;
  const signature = await account.signUserOperation({ ...full, chainId: app.fx.chain.chainId });
  const hash = await app.fx.bundler.writeContract({
    address: entryPoint(),
    abi: entryPoint07Abi,
    functionName: 'handleOps',
    args: [[toPackedUserOperation({ ...full, signature })], app.fx.bundler.account.address],
    gas: 8_000_000n,
  });
  const receipt = await app.fx.client.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success');
  const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  assert.ok(event, 'UserOperationEvent');
  return event.args.actualGasCost;
}

const deposit = () =>
  app.fx.client.readContract({
    address: entryPoint(),
    abi: entryPoint07Abi,
    functionName: 'balanceOf',
    args: [paymaster()],
  });

async function weiCapUsage(tenant: Tenant, policyId: string) {
  const [cap] = await app.ctx.deps.policies.usage({ dappId: tenant.dappId, policyId });
  assert.ok(cap);
  return { used: BigInt(cap.used), reserved: BigInt(cap.reserved), limit: BigInt(cap.limit) };
}

async function tenantWithCap(limit: bigint) {
  const tenant = await createTenant(app.ctx.deps);
  // The attacker's one IP against a cap of two and a half ops: this file tests the re-signed key, not holds.
  await withoutHoldShares(app.ctx.deps, tenant.dappId);
  const policy = await app.ctx.deps.policies.create({
    dappId: tenant.dappId,
    name: 'budget',
    rules: { caps: [{ scope: 'dapp', unit: 'wei', limit: limit.toString() }] },
  });
  return { tenant, policyId: policy.id };
}

describe(`a re-signed op key holds its largest worst case (EntryPoint v0.7, ${BACKEND})`, () => {
  test('cheap then expensive for 5 fresh senders, included by the attacker and settled: the deposit paid within the cap', async () => {
    // What one expensive op reserves, measured on a dApp with room to spare; the cap admits two and a half.
    const probe = await tenantWithCap(parseEther('1000'));
    const sample = await newSimpleAccountOp(app.fx, '0.7', burn);
    assert.ok((await paymasterData(probe.tenant, sample.op)).result);
    const expensiveWorst = (await weiCapUsage(probe.tenant, probe.policyId)).reserved;
    assert.ok(expensiveWorst > 0n);
    const cap = (expensiveWorst * 5n) / 2n;
    const { tenant, policyId } = await tenantWithCap(cap);

    const before = await deposit();
    let expensiveSigned = 0;
    let paid = 0n;
    for (let i = 0; i < 5; i++) {
      const { account, op } = await newSimpleAccountOp(app.fx, '0.7', cheap);
      const first = await paymasterData(tenant, op);
      // Same sender, same nonce, other callData: the op key the first signature was reserved under.
      const costly = { ...op, callData: await account.encodeCalls(burn) };
      const second = await paymasterData(tenant, costly);
      if (second.result !== undefined) {
        expensiveSigned++;
        paid += await include(account, costly, second.result);
      } else {
        assert.equal(second.error?.code, -32012);
        assert.equal(second.error?.data?.rule, 'cap');
        if (first.result !== undefined) paid += await include(account, op, first.result);
      }
    }
    assert.ok(expensiveSigned >= 1 && expensiveSigned <= 2, `${expensiveSigned} expensive ops signed`);
    assert.equal(before - (await deposit()), paid, 'what the deposit paid is what the events say');
    await app.ctx.deps.settlement.runOnce();
    const usage = await weiCapUsage(tenant, policyId);
    assert.equal(usage.used, paid, 'settled at the actual costs');
    assert.equal(usage.reserved, 0n, 'every signed op is settled');
    assert.ok(paid <= cap, `paid ${paid} wei against a cap of ${cap}`);
  });

  test('a key released once the chain passed its window and signed again is reserved again', async () => {
    const { tenant, policyId } = await tenantWithCap(parseEther('1000'));
    const { account, op } = await newSimpleAccountOp(app.fx, '0.7', cheap);
    const first = await paymasterData(tenant, op, 60);
    assert.ok(first.result, JSON.stringify(first.error));
    const held = (await weiCapUsage(tenant, policyId)).reserved;
    assert.ok(held > 0n);
    await app.ctx.deps.settlement.runOnce();
    const head = await app.fx.client.getBlock();
    // The chain passes the window (a minute from the server's now): the settlement cursor block is after validUntil
    // (and stays inside the next signature's window, which Patron opens by the server's clock).
    const past = BigInt(Math.floor(Date.now() / 1000) + 61);
    await app.fx.client.setNextBlockTimestamp({ timestamp: head.timestamp >= past ? head.timestamp + 1n : past });
    await app.fx.client.mine({ blocks: 1 });
    await app.ctx.deps.settlement.runOnce();
    assert.equal((await weiCapUsage(tenant, policyId)).reserved, 0n, 'released by the chain');
    // Signed again (the nonce is unused): reserved again, at the new worst case.
    const costly = { ...op, callData: await account.encodeCalls(burn) };
    const again = await paymasterData(tenant, costly);
    assert.ok(again.result, JSON.stringify(again.error));
    const reserved = (await weiCapUsage(tenant, policyId)).reserved;
    assert.ok(reserved > held, `reserved ${reserved} > the cheap op's ${held}`);
    const cost = await include(account, costly, again.result);
    await app.ctx.deps.settlement.runOnce();
    assert.deepEqual(await weiCapUsage(tenant, policyId), { used: cost, reserved: 0n, limit: parseEther('1000') });
  });
});
