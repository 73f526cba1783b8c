import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, createPublicClient, custom, type Hex, parseEventLogs, size, slice, toHex } from 'viem';
import {
  entryPoint09Abi,
  getUserOperationHash,
  toPackedUserOperation,
  toSimple7702SmartAccount,
  type UserOperation,
} from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { userOpHashForVersion } from '../src/paymaster/entryPoints/v07/hashesV07.js';
import {
  BLOCK_RANGE_FLAG,
  decodePaymasterAndDataV07,
  PAYMASTER_SIG_MAGIC,
} from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { COUNTER_ADDRESS, counterValue, testKey } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';

/**
 * EntryPoint v0.9's opt-ins through the app (docs/reference/json-rpc.md, "Parallel signing on v0.9"): the two-step parallel signing
 * (`signingPhase: "commit"`, then "finalize" with the account's signature made over the commit's userOpHash) and
 * block-number windows (`validityUnit: "blocks"`), every op submitted with handleOps on the dev chain's v0.9
 * EntryPoint by a Simple7702Account v0.9 (an EOA delegated beforehand), and the refusals: a tampered commitment,
 * a finalize without one, the opt-ins on v0.7/v0.8.
 */
let app: RpcFixture;
before(async () => {
  app = await startRpcFixture();
});
after(() => app.close());

const hex = (n: bigint) => toHex(n);
const quantity = (v: unknown) => BigInt(String(v));
const chainHex = () => hex(BigInt(app.fx.chain.chainId));

const rpcV2 = async (method: string, params: unknown[]) => {
  const res = await app.ctx.app.inject({
    method: 'POST',
    url: `/api/v2/${app.fx.chain.chainId}/${app.tenant.apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params }),
  });
  return {
    status: res.statusCode,
    body: res.json() as { result?: Record<string, unknown>; error?: { code: number; message: string } },
  };
};

/** The op as ERC-7677 clients send it: hex quantities. */
function wire(op: Record<string, unknown>) {
  return Object.fromEntries(Object.entries(op).map(([k, v]) => [k, typeof v === 'bigint' ? hex(v) : v]));
}

let salt = 0;
/** An EOA delegated to Simple7702Account v0.9 (a type-4 transaction sent by the bundler key), calling the counter. */
async function delegatedAccountOp() {
  const owner = privateKeyToAccount(testKey(`v09-parallel-${salt++}`));
  const authorization = await owner.signAuthorization({
    contractAddress: app.fx.simple7702Accounts['0.9'],
    chainId: app.fx.chain.chainId,
    nonce: 0,
  });
  const tx = await app.fx.bundler.sendTransaction({ to: owner.address, authorizationList: [authorization] });
  assert.equal((await app.fx.client.waitForTransactionReceipt({ hash: tx })).status, 'success');
  const client = createPublicClient({ chain: app.fx.client.chain, transport: custom(app.fx.chain) });
  const account = await toSimple7702SmartAccount({ client, owner, entryPoint: '0.9' });
  const block = await app.fx.client.getBlock();
  const maxPriorityFeePerGas = 1_000_000_000n;
  const op = {
    sender: account.address,
    nonce: await account.getNonce(),
    callData: await account.encodeCalls([{ to: COUNTER_ADDRESS, data: '0x01' }]),
    maxFeePerGas: (block.baseFeePerGas ?? 0n) * 2n + maxPriorityFeePerGas,
    maxPriorityFeePerGas,
    signature: await account.getStubSignature(),
  };
  return { owner, op };
}

const GAS = { callGasLimit: 200_000n, verificationGasLimit: 300_000n, preVerificationGas: 52_000n };

type Op = Awaited<ReturnType<typeof delegatedAccountOp>>['op'] & typeof GAS;

/** The op with an answer's v0.7+ paymaster fields. */
function withPaymaster(op: Op, r: Record<string, unknown>) {
  return {
    ...op,
    paymaster: r.paymaster as Address,
    paymasterVerificationGasLimit: quantity(r.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: quantity(r.paymasterPostOpGasLimit),
    paymasterData: r.paymasterData as Hex,
  };
}

const packed = (op: ReturnType<typeof withPaymaster>) =>
  `0x${[
    op.paymaster.slice(2),
    hex(op.paymasterVerificationGasLimit).slice(2).padStart(32, '0'),
    hex(op.paymasterPostOpGasLimit).slice(2).padStart(32, '0'),
    op.paymasterData.slice(2),
  ].join('')}` as Hex;

/** The v0.9 userOpHash as the EntryPoint computes it (the suffix's signature and length left out). */
const userOpHash = (op: ReturnType<typeof withPaymaster>) =>
  userOpHashForVersion({
    userOp: { ...op, initCode: '0x', paymasterAndData: packed(op) },
    entryPoint: app.fx.entryPoints['0.9'],
    chainId: app.fx.chain.chainId,
    version: '0.9',
  });

/** Stub (commit), the wallet's limits (fixed here), then the data commit. */
async function commit(context: Record<string, unknown> = { signingPhase: 'commit' }) {
  const { owner, op } = await delegatedAccountOp();
  const ep = app.fx.entryPoints['0.9'];
  const stub = await rpcV2('pm_getPaymasterStubData', [wire(op), ep, chainHex(), context]);
  assert.equal(stub.status, 200, JSON.stringify(stub.body));
  const s = stub.body.result ?? {};
  const withGas = { ...op, ...GAS };
  const data = await rpcV2('pm_getPaymasterData', [wire(withPaymaster(withGas, s)), ep, chainHex(), context]);
  assert.equal(data.status, 200, JSON.stringify(data.body));
  return { owner, stub: s, committed: withPaymaster(withGas, data.body.result ?? {}), result: data.body.result ?? {} };
}

const finalize = (op: Record<string, unknown>, context: Record<string, unknown> = { signingPhase: 'finalize' }) =>
  rpcV2('pm_getPaymasterData', [wire(op), app.fx.entryPoints['0.9'], chainHex(), context]);

/** The head, read afresh (viem's getBlockNumber caches it for seconds). */
const headBlock = async () => Number(BigInt(String(await app.fx.chain.request({ method: 'eth_blockNumber' }))));

const deposit = () =>
  app.fx.client.readContract({
    address: app.fx.entryPoints['0.9'],
    abi: entryPoint09Abi,
    functionName: 'balanceOf',
    args: [app.fx.paymasters['0.9']],
  });

function handleOpsArgs(op: ReturnType<typeof withPaymaster>) {
  return {
    address: app.fx.entryPoints['0.9'],
    abi: entryPoint09Abi,
    functionName: 'handleOps',
    args: [[toPackedUserOperation(op as UserOperation<'0.9'>)], app.fx.bundler.account.address],
  } as const;
}

/** handleOps from the bundler key: the op succeeds, the paymaster pays actualGasCost, the counter moves. */
async function execute(op: ReturnType<typeof withPaymaster>) {
  const before = await deposit();
  const counter = await counterValue(app.fx);
  const hash = await app.fx.bundler.writeContract({ ...handleOpsArgs(op), gas: 5_000_000n });
  const receipt = await app.fx.client.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success');
  const [event] = parseEventLogs({ abi: entryPoint09Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  assert.ok(event, 'UserOperationEvent');
  assert.equal(event.args.success, true);
  assert.equal(event.args.paymaster, app.fx.paymasters['0.9']);
  assert.equal(before - (await deposit()), event.args.actualGasCost);
  assert.equal(await counterValue(app.fx), counter + 1n);
  return event.args;
}

describe('EntryPoint v0.9 parallel signing (signingPhase)', () => {
  test('commit, the account signs while Patron finalizes: the same prefix, the op executes, settled by its hash', async () => {
    const { owner, stub, committed, result } = await commit();
    // The stub and the commit have the suffixed form's length (164 bytes of paymasterAndData), ending in the magic.
    assert.equal(size(stub.paymasterData as Hex), 164 - 52);
    assert.equal(size(committed.paymasterData), 164 - 52);
    assert.equal(slice(committed.paymasterData, -8), PAYMASTER_SIG_MAGIC);
    assert.equal(result.isFinal, false);
    const decoded = decodePaymasterAndDataV07(packed(committed));
    assert.deepEqual(decoded.caps, {
      maxVerificationGasLimit: GAS.verificationGasLimit,
      maxCallGasLimit: GAS.callGasLimit,
      maxPreVerificationGas: GAS.preVerificationGas,
    });
    const hash = userOpHash(committed);
    // What a viem client computes with the suffix split out as paymasterSignature: the same hash.
    const viemHash = getUserOperationHash({
      chainId: app.fx.chain.chainId,
      entryPointAddress: app.fx.entryPoints['0.9'],
      entryPointVersion: '0.9',
      userOperation: {
        ...committed,
        paymasterData: slice(committed.paymasterData, 0, size(committed.paymasterData) - 75),
        paymasterSignature: slice(committed.paymasterData, -75, -10),
      } as UserOperation<'0.9'>,
    });
    assert.equal(viemHash, hash);
    const [signature, final] = await Promise.all([owner.sign({ hash }), finalize(committed)]);
    assert.equal(final.status, 200, JSON.stringify(final.body));
    const f = final.body.result ?? {};
    assert.equal(f.isFinal, true);
    const finalData = f.paymasterData as Hex;
    assert.equal(size(finalData), size(committed.paymasterData));
    assert.equal(slice(finalData, 0, size(finalData) - 75), slice(committed.paymasterData, 0, size(finalData) - 75));
    assert.notEqual(finalData, committed.paymasterData, 'the placeholder is replaced by the signature');
    const op = { ...withPaymaster(committed, f), signature };
    assert.equal(userOpHash(op), hash, 'the finalized op has the hash the account signed');
    const event = await execute(op);
    assert.equal(event.userOpHash, hash);
    await app.ctx.deps.requestLog.flush();
    await app.ctx.deps.settlement.runOnce();
    const logged = await app.ctx.deps.store.requestLog.query({
      accountId: app.tenant.accountId,
      sender: op.sender.toLowerCase(),
      limit: 10,
    });
    const row = logged.find((r) => r.userOpHash === hash.toLowerCase());
    assert.ok(row, 'the finalize is logged by the EntryPoint’s userOpHash');
    assert.equal(row.actualCostWei, event.actualGasCost.toString());
  });

  test('a tampered commitment is refused at finalize, naming what differs', async () => {
    const { committed } = await commit();
    const pd = committed.paymasterData;
    const at = (offset: number, bytes: string) =>
      `0x${pd.slice(2, 2 + offset * 2)}${bytes}${pd.slice(2 + (offset + bytes.length / 2) * 2)}` as Hex;
    const cases: [string, Record<string, unknown>, RegExp][] = [
      // validUntil (paymasterData bytes 1..7) a second later: a longer window than committed is another window.
      ['another window', { paymasterData: at(1, '0000ffffffff') }, /does not match|lasts more than/],
      ['another call cap', { paymasterData: at(21, '00000000000fffff') }, /committed gas caps .* are not the op's/],
      ['other op limits', { callGasLimit: GAS.callGasLimit + 1n }, /committed gas caps .* are not the op's/],
      ['another paymaster gas', { paymasterVerificationGasLimit: 90_000n }, /paymaster gas limits .* not the ones/],
      ['another paymaster', { paymaster: app.fx.paymasters['0.8'] }, /is not Patron's/],
      ['no suffix', { paymasterData: slice(pd, 0, size(pd) - 10) }, /no paymasterSignature suffix/],
    ];
    for (const [name, change, message] of cases) {
      const r = await finalize({ ...committed, ...change });
      assert.equal(r.body.error?.code, -32602, `${name}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error?.message ?? '', message, name);
    }
    // The commitment itself still finalizes: nothing was reserved by the refusals.
    const ok = await finalize(committed);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  test('a window shifted within the policy is signed as sent: a new userOpHash, which the account never signed', async () => {
    const { committed } = await commit();
    const decoded = decodePaymasterAndDataV07(packed(committed));
    const earlier = (decoded.validUntil - 1).toString(16).padStart(12, '0');
    const pd = committed.paymasterData;
    const r = await finalize({ ...committed, paymasterData: `0x${pd.slice(2, 4)}${earlier}${pd.slice(16)}` as Hex });
    // Patron re-signs the committed fields as they are: the signature is over the tampered window, which the
    // account did not sign; the op would fail the account's check, never Patron's. It is still Patron's own window.
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.notEqual(
      userOpHash({ ...committed, paymasterData: r.body.result?.paymasterData as Hex }),
      userOpHash(committed),
    );
  });

  test('finalize without the commit’s paymaster fields, a stub finalize, calculateGasLimits: -32602', async () => {
    const { committed } = await commit();
    const { paymasterData: _, ...withoutData } = committed;
    const r = await finalize(withoutData);
    assert.equal(r.body.error?.code, -32602);
    assert.match(r.body.error?.message ?? '', /signingPhase "finalize" needs the op's paymaster, paymasterData/);
    const ep = app.fx.entryPoints['0.9'];
    const stub = await rpcV2('pm_getPaymasterStubData', [
      wire(committed),
      ep,
      chainHex(),
      { signingPhase: 'finalize' },
    ]);
    assert.equal(stub.body.error?.code, -32602);
    assert.match(stub.body.error?.message ?? '', /takes "commit" only/);
    const calc = await finalize(committed, { signingPhase: 'commit', calculateGasLimits: true });
    assert.equal(calc.body.error?.code, -32602);
    const unknown = await finalize(committed, { signingPhase: 'sign' });
    assert.equal(unknown.body.error?.code, -32602);
    assert.match(
      unknown.body.error?.message ?? '',
      /^Invalid params: params\[3\]\.signingPhase: must be "commit" or "finalize"$/,
    );
  });

  test('signingPhase and block windows on v0.7 and v0.8: -32602 naming v0.9', async () => {
    const { op } = await delegatedAccountOp();
    for (const version of ['0.7', '0.8'] as const) {
      for (const context of [{ signingPhase: 'commit' }, { signingPhase: 'finalize' }, { validityUnit: 'blocks' }]) {
        const r = await rpcV2('pm_getPaymasterData', [
          wire({ ...op, ...GAS }),
          app.fx.entryPoints[version],
          chainHex(),
          context,
        ]);
        assert.equal(r.body.error?.code, -32602, JSON.stringify(r.body));
        assert.match(r.body.error?.message ?? '', new RegExp(`served on EntryPoint v0\\.9 only; .* is v${version}`));
      }
    }
  });

  test('the token mode does not take the opt-ins: -32030 naming the field (Biconomy and Pimlico token contexts)', async () => {
    const { op } = await delegatedAccountOp();
    const token = app.fx.tokens[0]?.address;
    assert.ok(token);
    for (const context of [
      { mode: 'ERC20', tokenInfo: { feeTokenAddress: token }, signingPhase: 'commit' },
      { token, validityUnit: 'blocks' },
    ]) {
      const r = await rpcV2('pm_getPaymasterData', [
        wire({ ...op, ...GAS }),
        app.fx.entryPoints['0.9'],
        chainHex(),
        context,
      ]);
      assert.equal(r.body.error?.code, -32030, JSON.stringify(r.body));
      assert.match(
        r.body.error?.message ?? '',
        /params\[3\]\.(signingPhase|validityUnit) is served in the sponsored mode only/,
      );
    }
  });
});

describe('EntryPoint v0.9 block-number windows (validityUnit: "blocks")', () => {
  test('the op executes in its window; past its last block the EntryPoint refuses it (AA37)', async () => {
    const head = await headBlock();
    const { owner, committed } = await commit({ signingPhase: 'commit', validityUnit: 'blocks' });
    const decoded = decodePaymasterAndDataV07(packed(committed));
    assert.ok(decoded.validUntil > BLOCK_RANGE_FLAG && decoded.validAfter > BLOCK_RANGE_FLAG, 'the flag on both');
    const until = decoded.validUntil - BLOCK_RANGE_FLAG;
    // 120 s (the default expiry) at 12 s per block: 10 blocks.
    assert.ok(until - head >= 10 && until - head <= 12, `validUntil block ${until}, head ${head}`);
    const hash = userOpHash(committed);
    const [signature, final] = await Promise.all([owner.sign({ hash }), finalize(committed)]);
    assert.equal(final.status, 200, JSON.stringify(final.body));
    await execute({ ...withPaymaster(committed, final.body.result ?? {}), signature });

    // A single-step data call with a block window; then the chain moves past its last block.
    const next = await delegatedAccountOp();
    const ep = app.fx.entryPoints['0.9'];
    const context = { validityUnit: 'blocks' };
    const stub = await rpcV2('pm_getPaymasterStubData', [wire(next.op), ep, chainHex(), context]);
    const s = withPaymaster({ ...next.op, ...GAS }, stub.body.result ?? {});
    const data = await rpcV2('pm_getPaymasterData', [wire(s), ep, chainHex(), context]);
    assert.equal(data.status, 200, JSON.stringify(data.body));
    const signed = withPaymaster({ ...next.op, ...GAS }, data.body.result ?? {});
    const window = decodePaymasterAndDataV07(packed(signed));
    const last = window.validUntil - BLOCK_RANGE_FLAG;
    const op = { ...signed, signature: await next.owner.sign({ hash: userOpHash(signed) }) };
    await app.fx.chain.request({
      method: 'hardhat_mine',
      params: [hex(BigInt(last - (await headBlock()) + 1))],
    });
    assert.ok((await headBlock()) >= last, 'mined to the last block of the window');
    await assert.rejects(
      app.fx.client.simulateContract({ ...handleOpsArgs(op), account: app.fx.bundler.account }),
      /AA37 paymaster inval block range/,
    );
    // Nor does Patron finalize a commitment whose window has passed.
    const late = await finalize(committed);
    assert.equal(late.body.error?.code, -32602);
    assert.match(late.body.error?.message ?? '', /the committed window has expired/);
  });
});
