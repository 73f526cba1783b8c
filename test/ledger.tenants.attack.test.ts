import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { toSimpleSmartAccount } from 'permissionless/accounts';
import { type Address, encodeFunctionData, type Hex, hexToBytes, parseEther, parseEventLogs, toHex } from 'viem';
import { entryPoint07Abi, toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import { compileSolidity } from './helpers/compileSolidity.js';
import { COUNTER_ADDRESS, KEYS } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { hexWire, newSimpleAccountOp, quantity } from './helpers/rpcV07.js';
import {
  BACKEND,
  createTenant,
  openSecondInstance,
  TEST_DATABASE_URL,
  type Tenant,
  withoutHoldShares,
} from './helpers/testContext.js';

/**
 * Issue 31, "a dApp's spend is its own", the attacker's way on EntryPoint v0.7: two dApps (two public API keys) sign
 * the same op key (sender, nonce) with gas caps (ERC-7677 `pm_getPaymasterData`, `calculateGasLimits: true`), each
 * under its own never-resetting wei cap. The attacker includes one of the two signatures with its own bundler,
 * directly or through a contract of its own. Settlement must charge exactly the dApp whose signature the EntryPoint
 * accepted, close the other's reservation as superseded, and tell only the charged dApp of the inclusion; the other
 * dApp's ledger, caps, events and next ops are untouched. Before issue 31 the two signatures shared one reservation
 * row (its id had no dApp): B's cost landed on A's cap (2.67× its limit in the red team's run), in A's ledger and
 * A's outbox, and A's next op was refused for good.
 */
let app: RpcFixture;
/** Burns ~0.5M gas whatever it is called with: PUSH2 20000; loop { PUSH1 1; SWAP1; SUB; DUP1; PUSH1 3; JUMPI }. */
const BURNER: Address = '0x00000000000000000000000000000000b0b0b0b1';
const BURNER_CODE: Hex = '0x614e205b600190038060035700';
/** The attacker's bundler contract: forwards whatever call it is given (so the tx's `to` is not the EntryPoint). */
const WRAPPER = compileSolidity({
  name: 'Wrapper',
  source: `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract Wrapper {
  function run(address target, bytes calldata data) external {
    (bool ok, bytes memory r) = target.call(data);
    if (!ok) assembly { revert(add(r, 32), mload(r)) }
  }
}`,
});
let wrapper: Address;

before(async () => {
  app = await startRpcFixture();
  await app.fx.client.setCode({ address: BURNER, bytecode: BURNER_CODE });
  const hash = await app.fx.bundler.deployContract({ abi: WRAPPER.abi, bytecode: WRAPPER.bytecode });
  const receipt = await app.fx.client.waitForTransactionReceipt({ hash });
  assert.ok(receipt.contractAddress);
  wrapper = receipt.contractAddress;
});
after(() => app.close());

const entryPoint = () => app.fx.entryPoints['0.7'];
const cheap = [{ to: COUNTER_ADDRESS, data: '0x01' as const }];
const burn = [{ to: BURNER, data: '0x' as const }];

type Account = Awaited<ReturnType<typeof toSimpleSmartAccount>>;
type Op = Awaited<ReturnType<typeof newSimpleAccountOp>>['op'];
type Answer = { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

/** What A or B signs through its public API key, on the app given (the first instance by default). */
async function paymasterData(tenant: Tenant, op: Op, via = app.ctx.app): Promise<Record<string, unknown>> {
  const res = await via.inject({
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
        { mode: 'SPONSORED', calculateGasLimits: true },
      ],
    }),
  });
  const body = res.json() as Answer;
  assert.ok(body.result, JSON.stringify(body.error));
  return body.result;
}

/** The op as the attacker submits it with `d`'s paymaster fields: its own signature, its own bundler's handleOps. */
async function include(args: {
  account: Account;
  op: Op;
  d: Record<string, unknown>;
  through?: 'entryPoint' | 'wrapper';
}): Promise<{ cost: bigint; txHash: Hex }> {
  const { account, op, d } = args;
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
  const handleOps = encodeFunctionData({
    abi: entryPoint07Abi,
    functionName: 'handleOps',
    args: [[toPackedUserOperation({ ...full, signature })], app.fx.bundler.account.address],
  });
  const hash =
    args.through === 'wrapper'
      ? await app.fx.bundler.writeContract({
          address: wrapper,
          abi: WRAPPER.abi,
          functionName: 'run',
          args: [entryPoint(), handleOps],
          gas: 8_000_000n,
        })
      : await app.fx.bundler.sendTransaction({ to: entryPoint(), data: handleOps, gas: 8_000_000n });
  const receipt = await app.fx.client.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success');
  const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  assert.ok(event, 'UserOperationEvent');
  return { cost: event.args.actualGasCost, txHash: hash };
}

async function tenantWithCap(limit: bigint) {
  const tenant = await createTenant(app.ctx.deps);
  // One client IP plays both dApps' users: the caps are under test, not the hold shares.
  await withoutHoldShares(app.ctx.deps, tenant.dappId);
  const policy = await app.ctx.deps.policies.create({
    dappId: tenant.dappId,
    name: 'budget',
    rules: { caps: [{ scope: 'dapp', unit: 'wei', limit: limit.toString() }] },
  });
  // An endpoint, so the dApp's events are written to the outbox (delivery is not what this file tests).
  await app.ctx.deps.lifecycleEvents.endpoints.set({
    dappId: tenant.dappId,
    url: 'http://127.0.0.1:9/events',
    active: true,
  });
  return { tenant, policyId: policy.id, limit };
}

type Capped = Awaited<ReturnType<typeof tenantWithCap>>;

async function usage(t: Capped) {
  const [cap] = await app.ctx.deps.policies.usage({ dappId: t.tenant.dappId, policyId: t.policyId });
  assert.ok(cap);
  return { used: BigInt(cap.used), reserved: BigInt(cap.reserved) };
}

/** The dApp's ledger as its owner reads it (admin API). */
async function ledger(t: Capped): Promise<{ sender: string; status: string; actualWei: string | null }[]> {
  const res = await app.ctx.app.inject({
    method: 'GET',
    url: `/api/admin/dapps/${t.tenant.dappId}/ledger?limit=100`,
    headers: { authorization: `Bearer ${t.tenant.authToken}` },
  });
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { data: { items: { sender: string; status: string; actualWei: string | null }[] } }).data.items;
}

/** The types of the dApp's outbox events about `sender`, oldest first. */
async function events(t: Capped, sender: Address): Promise<{ type: string; reason?: unknown }[]> {
  await app.ctx.deps.lifecycleEvents.recorder.flush();
  const rows = await app.ctx.deps.store.lifecycleEvents.listByDapp({ dappId: t.tenant.dappId, limit: 500 });
  return rows
    .map((r) => JSON.parse(r.payload) as { type: string; data: { sender?: string; reason?: unknown } })
    .filter((e) => e.data.sender?.toLowerCase() === sender.toLowerCase())
    .map((e) => ({ type: e.type, ...(e.data.reason === undefined ? {} : { reason: e.data.reason }) }))
    .reverse();
}

/**
 * A and B sign one op key (B's op the dearer one), the attacker includes `winner`'s signature `through` its bundler,
 * settlement runs: the winner is charged the op's cost, the loser's reservation is superseded, and only the winner's
 * ledger and outbox hear of the inclusion.
 */
async function sameKeyIncluded(args: {
  winner: 'A' | 'B';
  through: 'entryPoint' | 'wrapper';
  /** Another instance on the same database, where B signs. */
  signBVia?: { readonly app: typeof app.ctx.app; readonly deps: typeof app.ctx.deps };
}) {
  const A = await tenantWithCap(parseEther('1'));
  const B = await tenantWithCap(parseEther('1'));
  const { account, op } = await newSimpleAccountOp(app.fx, '0.7', cheap);
  const costly = { ...op, callData: await account.encodeCalls(burn) };
  const dA = await paymasterData(A.tenant, op);
  const dB = await paymasterData(B.tenant, costly, args.signBVia?.app);
  // That instance's outbox write, which its recorder makes within 250 ms (RECORDER_FLUSH_MS): on this chain the op is
  // included and settled sooner than any real op can be after its signature.
  await args.signBVia?.deps.lifecycleEvents.recorder.flush();
  const [heldA, heldB] = [(await usage(A)).reserved, (await usage(B)).reserved];
  assert.ok(heldA > 0n && heldB > heldA, 'each dApp reserved its own signature, in its own cap');

  const included =
    args.winner === 'A'
      ? await include({ account, op, d: dA, through: args.through })
      : await include({ account, op: costly, d: dB, through: args.through });
  await app.ctx.deps.settlement.runOnce();

  const [winner, loser] = args.winner === 'A' ? [A, B] : [B, A];
  assert.deepEqual(await usage(winner), { used: included.cost, reserved: 0n }, 'the winner pays what the op cost');
  assert.deepEqual(await usage(loser), { used: 0n, reserved: 0n }, "the loser's reservation is released, nothing used");
  const [winnerRow] = await ledger(winner);
  assert.equal(winnerRow?.status, 'included');
  assert.equal(winnerRow?.actualWei, included.cost.toString());
  const [loserRow] = await ledger(loser);
  assert.equal(loserRow?.status, 'superseded', "the loser's ledger never lists the op as its sponsorship");
  assert.equal(loserRow?.actualWei, null);
  assert.deepEqual(
    (await events(winner, op.sender)).map((e) => e.type),
    ['sponsorship.signed', 'sponsorship.included'],
  );
  assert.deepEqual(await events(loser, op.sender), [
    { type: 'sponsorship.signed' },
    { type: 'sponsorship.expired', reason: 'nonceUsed' },
  ]);

  // Both dApps go on: each next op of the sender (nonce + 1) signs against a cap holding nothing of the other's.
  const next = { ...op, factory: undefined, factoryData: undefined, nonce: op.nonce + 1n };
  for (const t of [A, B]) await paymasterData(t.tenant, next);
  assert.ok((await usage(loser)).reserved > 0n);
}

describe(`two dApps sign one op key; the included signature's dApp is charged (EntryPoint v0.7, ${BACKEND})`, () => {
  test("B's dearer signature included by the attacker's bundler: B pays, A's reservation is superseded", () =>
    sameKeyIncluded({ winner: 'B', through: 'entryPoint' }));

  test("A's signature included instead: A pays, B's reservation is superseded", () =>
    sameKeyIncluded({ winner: 'A', through: 'entryPoint' }));

  test("B's signature included through the attacker's own contract (the tx's to is not the EntryPoint)", () =>
    sameKeyIncluded({ winner: 'B', through: 'wrapper' }));

  test('B signs on a second instance sharing the database: the same attribution', {
    skip: TEST_DATABASE_URL === undefined ? 'needs PostgreSQL (PATRON_TEST_DATABASE_URL)' : false,
  }, async () => {
    const second = await openSecondInstance(app.ctx, {
      chains: [app.ctx.deps.chains.list()[0] ?? assert.fail('a chain')],
      signerKey: hexToBytes(KEYS.signer),
    });
    try {
      await sameKeyIncluded({ winner: 'B', through: 'entryPoint', signBVia: second });
    } finally {
      await second.close();
    }
  });
});

describe(`an op key used by an op Patron did not pay for (EntryPoint v0.7, ${BACKEND})`, () => {
  test("the account pays its own op with the signed nonce: the dApp's reservation is superseded at once", async () => {
    const A = await tenantWithCap(parseEther('1'));
    const { account, op } = await newSimpleAccountOp(app.fx, '0.7', cheap);
    await paymasterData(A.tenant, op);
    assert.ok((await usage(A)).reserved > 0n);
    // The sender pays for itself (no paymaster), with the very nonce Patron signed: the signature is dead.
    await app.fx.bundler.sendTransaction({ to: op.sender, value: parseEther('0.1') });
    const own = {
      ...op,
      callGasLimit: 100_000n,
      verificationGasLimit: 500_000n,
      preVerificationGas: 60_000n,
    } as UserOperation<'0.7'>;
    const signature = await account.signUserOperation({ ...own, chainId: app.fx.chain.chainId });
    const hash = await app.fx.bundler.writeContract({
      address: entryPoint(),
      abi: entryPoint07Abi,
      functionName: 'handleOps',
      args: [[toPackedUserOperation({ ...own, signature })], app.fx.bundler.account.address],
      gas: 8_000_000n,
    });
    assert.equal((await app.fx.client.waitForTransactionReceipt({ hash })).status, 'success');
    await app.ctx.deps.settlement.runOnce();
    assert.deepEqual(await usage(A), { used: 0n, reserved: 0n }, 'released as soon as the chain shows the key used');
    const [row] = await ledger(A);
    assert.equal(row?.status, 'superseded');
    assert.deepEqual(await events(A, op.sender), [
      { type: 'sponsorship.signed' },
      { type: 'sponsorship.expired', reason: 'nonceUsed' },
    ]);
  });
});
