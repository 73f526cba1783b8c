import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createBicoPaymasterClient } from '@biconomy/abstractjs';
import { to7702SimpleSmartAccount, toSafeSmartAccount, toSimpleSmartAccount } from 'permissionless/accounts';
import { createPimlicoClient } from 'permissionless/clients/pimlico';
import {
  type Address,
  BaseError,
  concat,
  getAddress,
  type Hex,
  http,
  keccak256,
  numberToHex,
  RpcRequestError,
  size,
  slice,
  stringToHex,
} from 'viem';
import {
  createBundlerClient,
  createPaymasterClient,
  formatUserOperationRequest,
  toSimple7702SmartAccount,
} from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { loadAccountAbstractionArtifact } from '../src/chain/aaArtifacts.js';
import { waitForSuccess } from '../src/chain/devClient.js';
import { userOpHashForVersion } from '../src/paymaster/entryPoints/v07/hashesV07.js';
import {
  decodePaymasterAndDataV07,
  type GasCapsV07,
  withinCapsV07,
} from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { COUNTER_ADDRESS } from './helpers/patronPaymasterV06.js';
import { bicoBundlerClient, delegatedSimple7702V09, smartAccountClient } from './helpers/sdkClientsV07.js';
import {
  assertPaidByPatron,
  bundlerFees,
  type RecordedRpc,
  type SdkE2eV07,
  type SdkEntryPointVersion,
  useSdkE2eV07,
} from './helpers/sdkE2eV07.js';

/**
 * Today's client SDKs, unmodified and called as their documentation shows, sending user operations through
 * Patron's paymaster URL (`/api/v2/{chainId}/{apiKey}`) and a real bundler (alto) to the in-process dev chain,
 * on EntryPoint v0.7 and v0.8 (and one EIP-7702 op on v0.9): viem's ERC-7677 `createPaymasterClient` with
 * permissionless's SimpleAccount (through permissionless's `createSmartAccountClient` and viem's
 * `createBundlerClient`), EIP-7702 accounts whose first op carries the owner's authorization, a Safe with
 * permissionless's Pimlico client as paymaster, and @biconomy/abstractjs's paymaster client (its one
 * pm_getPaymasterData before estimation). Every op is checked on chain: the UserOperationEvent's success and
 * paymaster (Patron's, for that EntryPoint), the deposit lowered by exactly actualGasCost, alto as the bundle's
 * sender, and the counter contract called.
 *
 * SDK behaviour relied on (read from node_modules):
 * - viem's prepareUserOperation: stub (pm_getPaymasterStubData) → eth_estimateUserOperationGas for what the stub
 *   leaves out → pm_getPaymasterData over the final gas → the account signs → eth_sendUserOperation. A paymaster
 *   client without a stub method (createBicoPaymasterClient) has its pm_getPaymasterData called in the stub's
 *   place, once; viem 2.57 keeps only the paymaster fields of that answer, so the bundler then estimates every
 *   account limit, after the paymaster signed.
 * - Fees: the source permissionless documents for its smart account client, the bundler's
 *   `pimlico_getUserOperationGasPrice` (helpers/sdkE2eV07.ts `bundlerFees`).
 * - EIP-7702: neither viem nor permissionless signs the authorization; the dApp signs it with the owner and
 *   passes it to sendUserOperation (viem only puts a dummy one in while estimating an undelegated account).
 *   viem's toSimple7702SmartAccount sends `factory: "0x7702"` (the marker unpadded); permissionless's
 *   to7702SimpleSmartAccount sends no factory, only `eip7702Auth`.
 */
const e2e = useSdkE2eV07();

const counterCall = { to: COUNTER_ADDRESS, data: '0x' as Hex };
/** viem's default receipt polling is every 4 s on a chain without a block time; the dev chain mines at once. */
const receiptPolling = { pollingInterval: 100, timeout: 30_000 } as const;

const ownerFor = (label: string) => privateKeyToAccount(keccak256(stringToHex(`patron-test-sdk-v07-${label}`)));

/** What a test compares against after its op: the deposit and the counter before it. */
async function beforeOp(version: SdkEntryPointVersion) {
  const x = e2e();
  return { depositBefore: await x.deposit(version), counterBefore: await x.counter() };
}

/** The calls recorded from `from` on, as `target:method` (paymaster and bundler only; chain reads are left out). */
function callsSince(from: number): string[] {
  return e2e()
    .calls.slice(from)
    .map((c) => `${c.target}:${c.method}`);
}

function patronCallsSince(from: number): RecordedRpc[] {
  return e2e()
    .calls.slice(from)
    .filter((c) => c.target === 'patron');
}

/** The paymaster and bundler calls of one op through viem's flow, in the order viem makes them. */
const FLOW = new Set([
  'patron:pm_getPaymasterStubData',
  'alto:eth_estimateUserOperationGas',
  'patron:pm_getPaymasterData',
  'alto:eth_sendUserOperation',
]);

const bigintJson = (_key: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

/** The gas limits of the op the SDK handed alto (its last eth_sendUserOperation since `from`). */
function sentOp(from: number) {
  const send = e2e()
    .calls.slice(from)
    .filter((c) => c.target === 'alto' && c.method === 'eth_sendUserOperation')
    .at(-1);
  const op = send?.params[0] as Record<string, unknown> | undefined;
  assert.ok(op, 'the SDK sent the op to alto');
  return {
    verificationGasLimit: BigInt(String(op.verificationGasLimit)),
    callGasLimit: BigInt(String(op.callGasLimit)),
    preVerificationGas: BigInt(String(op.preVerificationGas)),
  };
}

/** The gas caps Patron signed, read back from an ERC-7677 answer's v0.7+ fields (Patron's own codec). */
function signedCaps(result: Record<string, unknown>): GasCapsV07 {
  const paymasterAndData = concat([
    String(result.paymaster) as Hex,
    numberToHex(BigInt(String(result.paymasterVerificationGasLimit)), { size: 16 }),
    numberToHex(BigInt(String(result.paymasterPostOpGasLimit)), { size: 16 }),
    String(result.paymasterData) as Hex,
  ]);
  return decodePaymasterAndDataV07(paymasterAndData).caps;
}

/** The v0.7+ paymaster fields of an ERC-7677 answer, checked to name Patron's paymaster for the version. */
function paymasterFieldsOf(x: SdkE2eV07, call: RecordedRpc | undefined, version: SdkEntryPointVersion) {
  assert.ok(call, 'a paymaster call was made');
  assert.equal(call.status, 200, JSON.stringify(call.response));
  const result = (call.response as { result?: Record<string, unknown> }).result;
  assert.ok(result, JSON.stringify(call.response));
  assert.equal(getAddress(String(result.paymaster)), x.paymaster(version), 'the answer names Patron’s paymaster');
  return result;
}

describe('alto 0.0.20 as the bundler', () => {
  test('serves EntryPoints v0.7, v0.8 and v0.9 against the dev chain', async () => {
    const x = e2e();
    const res = await fetch(x.alto.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_supportedEntryPoints', params: [] }),
    });
    const body = (await res.json()) as { result?: string[] };
    assert.deepEqual(
      body.result?.map((a) => getAddress(a)),
      (['0.7', '0.8', '0.9'] as const).map((v) => getAddress(x.entryPoint(v))),
    );
  });
});

describe('viem createPaymasterClient (ERC-7677) with permissionless SimpleAccount', () => {
  test('EntryPoint v0.7, permissionless createSmartAccountClient: stub, alto estimates, data, the op executes paid by Patron', async () => {
    const x = e2e();
    const account = await toSimpleSmartAccount({
      client: x.publicClient,
      owner: ownerFor('simple-v07'),
      entryPoint: { address: x.entryPoint('0.7'), version: '0.7' },
    });
    const client = smartAccountClient(
      x,
      account,
      createPaymasterClient({ transport: http(x.paymasterUrl(x.open.apiKey)) }),
    );
    const { depositBefore, counterBefore } = await beforeOp('0.7');
    const from = x.calls.length;

    const userOpHash = await client.sendUserOperation({ calls: [counterCall] });
    const { receipt } = await client.waitForUserOperationReceipt({ hash: userOpHash, ...receiptPolling });
    await assertPaidByPatron(x, {
      version: '0.7',
      txHash: receipt.transactionHash,
      userOpHash,
      sender: account.address,
      depositBefore,
      counterBefore,
    });
    assert.deepEqual(
      callsSince(from).filter((c) => FLOW.has(c)),
      [...FLOW],
      'stub, estimation by alto over the stub, final data, send',
    );
    const [stub, data] = patronCallsSince(from);
    assert.equal(stub?.method, 'pm_getPaymasterStubData');
    assert.equal(getAddress(String(stub?.params[1])), x.entryPoint('0.7'));
    assert.equal(paymasterFieldsOf(x, stub, '0.7').isFinal, false);
    assert.equal(data?.method, 'pm_getPaymasterData');
    // The wallet estimated on the stub and sends its final limits: they are signed exactly, no headroom.
    const sent = sentOp(from);
    assert.deepEqual(signedCaps(paymasterFieldsOf(x, data, '0.7')), {
      maxVerificationGasLimit: sent.verificationGasLimit,
      maxCallGasLimit: sent.callGasLimit,
      maxPreVerificationGas: sent.preVerificationGas,
    });
    assert.notEqual(await x.publicClient.getCode({ address: account.address }), undefined, 'deployed by its op');
  });

  test('EntryPoint v0.8, viem createBundlerClient: the same flow on the EIP-712 userOpHash', async () => {
    const x = e2e();
    const account = await toSimpleSmartAccount({
      client: x.publicClient,
      owner: ownerFor('simple-v08'),
      entryPoint: { address: x.entryPoint('0.8'), version: '0.8' },
    });
    const bundler = createBundlerClient({
      account,
      client: x.publicClient,
      transport: http(x.alto.url),
      paymaster: createPaymasterClient({ transport: http(x.paymasterUrl(x.open.apiKey)) }),
      userOperation: bundlerFees(x),
    });
    const { depositBefore, counterBefore } = await beforeOp('0.8');
    const from = x.calls.length;

    const userOpHash = await bundler.sendUserOperation({ calls: [counterCall] });
    const { receipt } = await bundler.waitForUserOperationReceipt({ hash: userOpHash, ...receiptPolling });
    await assertPaidByPatron(x, {
      version: '0.8',
      txHash: receipt.transactionHash,
      userOpHash,
      sender: account.address,
      depositBefore,
      counterBefore,
    });
    const [stub, data] = patronCallsSince(from);
    assert.equal(getAddress(String(stub?.params[1])), x.entryPoint('0.8'));
    paymasterFieldsOf(x, stub, '0.8');
    paymasterFieldsOf(x, data, '0.8');
  });

  test('EIP-7702 (permissionless to7702SimpleSmartAccount, EntryPoint v0.8): the first op carries the owner’s authorization, alto sends a type-4 bundle', async () => {
    const x = e2e();
    const owner = ownerFor('simple-7702');
    const account = await to7702SimpleSmartAccount({ client: x.publicClient, owner });
    assert.equal(account.address, owner.address, 'the EOA is the account');
    assert.equal(getAddress(account.entryPoint.address), x.entryPoint('0.8'));
    const delegate = x.fx.simple7702Accounts['0.8'];
    const client = smartAccountClient(
      x,
      account,
      createPaymasterClient({ transport: http(x.paymasterUrl(x.open.apiKey)) }),
    );
    // What the dApp does (permissionless's and viem's 7702 guides): the owner signs the delegation to the account's
    // logic at its current nonce; the bundler, not the owner, sends the transaction that carries it.
    const authorization = await owner.signAuthorization({
      address: delegate,
      chainId: x.chainId,
      nonce: await x.publicClient.getTransactionCount({ address: owner.address }),
    });
    const { depositBefore, counterBefore } = await beforeOp('0.8');
    const from = x.calls.length;

    const userOpHash = await client.sendUserOperation({ calls: [counterCall], authorization });
    const { receipt } = await client.waitForUserOperationReceipt({ hash: userOpHash, ...receiptPolling });
    const paid = await assertPaidByPatron(x, {
      version: '0.8',
      txHash: receipt.transactionHash,
      userOpHash,
      sender: owner.address,
      depositBefore,
      counterBefore,
    });
    assert.equal(paid.txType, 'eip7702', 'the bundle carried the authorization');
    assert.equal(
      await x.publicClient.getCode({ address: owner.address }),
      concat(['0xef0100', delegate.toLowerCase() as Hex]),
      'the EOA delegates to Simple7702Account v0.8',
    );
    const [stub] = patronCallsSince(from);
    const sentAuth = (stub?.params[0] as { eip7702Auth?: { address?: string } } | undefined)?.eip7702Auth;
    assert.equal(getAddress(String(sentAuth?.address)), delegate, 'the stub saw the authorization');

    // The next op of the now delegated EOA carries no authorization (viem adds one only to an undelegated
    // account): Patron binds the delegate it reads from the sender's code.
    const second = await beforeOp('0.8');
    const fromSecond = x.calls.length;
    const nextHash = await client.sendUserOperation({ calls: [counterCall] });
    const next = await client.waitForUserOperationReceipt({ hash: nextHash, ...receiptPolling });
    const paidNext = await assertPaidByPatron(x, {
      version: '0.8',
      txHash: next.receipt.transactionHash,
      userOpHash: nextHash,
      sender: owner.address,
      ...second,
    });
    assert.notEqual(paidNext.txType, 'eip7702', 'no authorization the second time');
    const [nextStub] = patronCallsSince(fromSecond);
    assert.equal((nextStub?.params[0] as { eip7702Auth?: unknown } | undefined)?.eip7702Auth, undefined);
  });

  test('EIP-7702 on EntryPoint v0.9 (viem toSimple7702SmartAccount, viem createBundlerClient): authorization, stub, data, executed', async () => {
    const x = e2e();
    const owner = ownerFor('simple-7702-v09');
    const account = await toSimple7702SmartAccount({ client: x.publicClient, owner, entryPoint: '0.9' });
    assert.equal(getAddress(account.entryPoint.address), x.entryPoint('0.9'));
    const delegate = x.fx.simple7702Accounts['0.9'];
    const bundler = createBundlerClient({
      account,
      client: x.publicClient,
      transport: http(x.alto.url),
      paymaster: createPaymasterClient({ transport: http(x.paymasterUrl(x.open.apiKey)) }),
      userOperation: bundlerFees(x),
    });
    const authorization = await owner.signAuthorization({
      address: delegate,
      chainId: x.chainId,
      nonce: await x.publicClient.getTransactionCount({ address: owner.address }),
    });
    const { depositBefore, counterBefore } = await beforeOp('0.9');
    const from = x.calls.length;

    const userOpHash = await bundler.sendUserOperation({ calls: [counterCall], authorization });
    const { receipt } = await bundler.waitForUserOperationReceipt({ hash: userOpHash, ...receiptPolling });
    const paid = await assertPaidByPatron(x, {
      version: '0.9',
      txHash: receipt.transactionHash,
      userOpHash,
      sender: owner.address,
      depositBefore,
      counterBefore,
    });
    assert.equal(paid.txType, 'eip7702');
    const [stub, data] = patronCallsSince(from);
    paymasterFieldsOf(x, stub, '0.9');
    paymasterFieldsOf(x, data, '0.9');
  });
});

describe('EntryPoint v0.9 parallel signing (signingPhase commit, then finalize)', () => {
  test('a v0.9 op signed in parallel: viem prepares on the commit, the account signs while Patron finalizes, alto executes it', async () => {
    const x = e2e();
    const owner = ownerFor('parallel-v09');
    // The EOA is delegated to Simple7702Account v0.9 beforehand (a type-4 transaction of its own).
    const account = await delegatedSimple7702V09(x, owner);
    const paymaster = createPaymasterClient({ transport: http(x.paymasterUrl(x.open.apiKey)) });
    const bundler = createBundlerClient({ client: x.publicClient, transport: http(x.alto.url) });
    const fees = await bundlerFees(x).estimateFeesPerGas();
    const { depositBefore, counterBefore } = await beforeOp('0.9');
    const from = x.calls.length;

    // Commit: viem's own flow (stub → alto's estimate → data), with the context of the commit phase.
    const prepared = await bundler.prepareUserOperation({
      account,
      calls: [counterCall],
      ...fees,
      paymaster,
      paymasterContext: { signingPhase: 'commit' },
    });
    assert.deepEqual(callsSince(from), [
      'patron:pm_getPaymasterStubData',
      'alto:eth_estimateUserOperationGas',
      'patron:pm_getPaymasterData',
    ]);
    const entryPoint = x.entryPoint('0.9');
    // Delegated already: viem sends no 0x7702 initCode.
    assert.equal(prepared.factory, undefined);
    const committed = prepared;
    const packedPnd = concat([
      committed.paymaster as Hex,
      numberToHex(committed.paymasterVerificationGasLimit ?? 0n, { size: 16 }),
      numberToHex(committed.paymasterPostOpGasLimit ?? 0n, { size: 16 }),
      committed.paymasterData as Hex,
    ]);
    assert.equal(decodePaymasterAndDataV07(packedPnd).signatureInSuffix, true, 'the commit has the suffix form');
    // The userOpHash, which leaves the suffix's signature out (Patron's codec, as the EntryPoint computes it).
    const userOpHash = userOpHashForVersion({
      userOp: {
        ...committed,
        initCode: '0x',
        paymasterVerificationGasLimit: committed.paymasterVerificationGasLimit ?? 0n,
        paymasterPostOpGasLimit: committed.paymasterPostOpGasLimit ?? 0n,
        paymasterAndData: packedPnd,
      },
      entryPoint,
      chainId: x.chainId,
      version: '0.9',
    });
    // viem and alto model v0.9's suffix as a separate `paymasterSignature` (toPackedUserOperation appends it with
    // its length and the magic): Patron's paymasterData is the EntryPoint's bytes, so its last 75 are split off.
    const split = (data: Hex) => ({
      paymasterData: slice(data, 0, size(data) - 75),
      paymasterSignature: slice(data, size(data) - 75, size(data) - 10),
    });
    // The account signs (viem's own hash of the split op) and Patron finalizes, at the same time.
    const [signature, finalized] = await Promise.all([
      account.signUserOperation({ ...committed, ...split(committed.paymasterData as Hex) }),
      paymaster.getPaymasterData({
        ...committed,
        chainId: x.chainId,
        entryPointAddress: entryPoint,
        context: { signingPhase: 'finalize' },
      }),
    ]);
    const finalData = (finalized as { paymasterData: Hex }).paymasterData;
    assert.equal(size(finalData), size(committed.paymasterData as Hex));
    assert.equal(
      split(finalData).paymasterData,
      split(committed.paymasterData as Hex).paymasterData,
      'the finalized prefix is the commit’s, byte for byte',
    );
    const op = { ...committed, ...split(finalData), signature };
    const sent = await bundler.request({
      method: 'eth_sendUserOperation',
      params: [formatUserOperationRequest(op), entryPoint],
    });
    assert.equal(sent, userOpHash, 'alto names the op by the hash the account signed');
    const { receipt } = await bundler.waitForUserOperationReceipt({ hash: userOpHash, ...receiptPolling });
    await assertPaidByPatron(x, {
      version: '0.9',
      txHash: receipt.transactionHash,
      userOpHash,
      sender: owner.address,
      depositBefore,
      counterBefore,
    });
  });
});

describe('permissionless createPimlicoClient as the paymaster', () => {
  test('Safe 1.4.1 (toSafeSmartAccount, EntryPoint v0.7): the Pimlico client on Patron’s URL sponsors, the Safe deploys and calls', async () => {
    const x = e2e();
    const account = await toSafeSmartAccount({
      client: x.publicClient,
      owners: [ownerFor('safe')],
      version: '1.4.1',
      entryPoint: { address: x.entryPoint('0.7'), version: '0.7' },
    });
    const paymaster = createPimlicoClient({
      transport: http(x.paymasterUrl(x.open.apiKey)),
      entryPoint: { address: x.entryPoint('0.7'), version: '0.7' },
    });
    const client = smartAccountClient(x, account, paymaster);
    const { depositBefore, counterBefore } = await beforeOp('0.7');
    const from = x.calls.length;

    const userOpHash = await client.sendUserOperation({ calls: [counterCall] });
    const { receipt } = await client.waitForUserOperationReceipt({ hash: userOpHash, ...receiptPolling });
    await assertPaidByPatron(x, {
      version: '0.7',
      txHash: receipt.transactionHash,
      userOpHash,
      sender: account.address,
      depositBefore,
      counterBefore,
    });
    assert.deepEqual(
      patronCallsSince(from).map((c) => c.method),
      ['pm_getPaymasterStubData', 'pm_getPaymasterData'],
      'the Pimlico client as paymaster speaks ERC-7677',
    );
    assert.notEqual(await x.publicClient.getCode({ address: account.address }), undefined, 'the Safe was deployed');
  });
});

describe('@biconomy/abstractjs createBicoPaymasterClient (no Nexus on the dev chain: a v0.7 SimpleAccount)', () => {
  // toBiconomySponsoredPaymasterContext is not reachable through the package's exports (its `./paymaster` entry
  // points at files the package does not ship), so the SDK's own bundler client is used: given a paymaster and no
  // context, createBicoBundlerClient passes its biconomySponsoredPaymasterContext, as it does for a Nexus account.
  // Its default fee source is Biconomy's bundler's biconomy_getGasFeeValues, which alto does not serve: the fees
  // come from alto instead (bundlerFees), the one option set here that a Nexus user would not set.
  test('one pm_getPaymasterData before estimation with calculateGasLimits, then the SDK’s bundler client sends the op', async (t) => {
    const x = e2e();
    const account = await toSimpleSmartAccount({
      client: x.publicClient,
      owner: ownerFor('bico'),
      entryPoint: { address: x.entryPoint('0.7'), version: '0.7' },
    });
    const bundler = bicoBundlerClient(
      x,
      account,
      createBicoPaymasterClient({ paymasterUrl: x.paymasterUrl(x.open.apiKey) }),
    );
    const { depositBefore, counterBefore } = await beforeOp('0.7');
    const from = x.calls.length;

    const userOpHash = await bundler.sendUserOperation({ calls: [counterCall] });
    const { receipt } = await bundler.waitForUserOperationReceipt({ hash: userOpHash, ...receiptPolling });
    await assertPaidByPatron(x, {
      version: '0.7',
      txHash: receipt.transactionHash,
      userOpHash,
      sender: account.address,
      depositBefore,
      counterBefore,
    });
    const patron = patronCallsSince(from);
    assert.deepEqual(
      patron.map((c) => c.method),
      ['pm_getPaymasterData'],
      'one paymaster call, no stub',
    );
    const [data] = patron;
    assert.deepEqual(data?.params[3], {
      mode: 'SPONSORED',
      expiryDuration: 300,
      calculateGasLimits: true,
      sponsorshipInfo: { smartAccountInfo: { name: 'BICONOMY', version: '2.0.0' } },
    });
    // viem's getPaymasterData keeps only the paymaster fields of the answer (Patron's computed limits beside them
    // are dropped), so the bundler estimates the account's limits after the paymaster has signed: the signature
    // holds because it covers caps, and alto's estimate lies within them.
    assert.deepEqual(
      callsSince(from).filter((c) => FLOW.has(c)),
      ['patron:pm_getPaymasterData', 'alto:eth_estimateUserOperationGas', 'alto:eth_sendUserOperation'],
    );
    const caps = signedCaps(paymasterFieldsOf(x, data, '0.7'));
    const sent = sentOp(from);
    t.diagnostic(`signed caps ${JSON.stringify(caps, bigintJson)}; alto's limits ${JSON.stringify(sent, bigintJson)}`);
    assert.ok(
      withinCapsV07(sent, caps),
      `the op alto got (${JSON.stringify(sent, bigintJson)}) is within the signed caps (${JSON.stringify(caps, bigintJson)})`,
    );
  });
});

describe('refusals reach the SDK user', () => {
  /** The RpcRequestError viem threw, found in the cause chain. */
  function rpcErrorOf(err: unknown): RpcRequestError {
    assert.ok(err instanceof BaseError, `expected a viem error, got ${String(err)}`);
    const found = err.walk((e) => e instanceof RpcRequestError);
    assert.ok(found instanceof RpcRequestError, `no RpcRequestError in ${err.message}`);
    return found;
  }

  test('an unknown API key: sendUserOperation throws with Patron’s message and code', async () => {
    const x = e2e();
    const account = await toSimpleSmartAccount({
      client: x.publicClient,
      owner: ownerFor('unknown-key'),
      entryPoint: { address: x.entryPoint('0.7'), version: '0.7' },
    });
    const pm = createPaymasterClient({ transport: http(x.paymasterUrl('pk.unknown-key-0000')) });
    const client = smartAccountClient(x, account, pm);
    await assert.rejects(client.sendUserOperation({ calls: [counterCall] }), (err: unknown) => {
      const rpc = rpcErrorOf(err);
      assert.equal(rpc.code, -32001);
      assert.equal(rpc.details, 'Invalid API key: check the paymaster URL');
      assert.ok(err instanceof BaseError && err.message.includes('Invalid API key: check the paymaster URL'));
      return true;
    });
  });

  test('an EntryPoint the chain has no Patron paymaster for: the stub is refused with -32602 naming it and what is served', async () => {
    const x = e2e();
    // A second EntryPoint v0.7 at a non-canonical address: a chain's real EntryPoint that Patron does not serve.
    const { abi, bytecode } = loadAccountAbstractionArtifact('0.7', 'EntryPoint');
    const deployed = await waitForSuccess(
      x.fx.client,
      await x.fx.client.deployContract({ abi, bytecode }),
      'a second EntryPoint v0.7',
    );
    assert.ok(deployed.contractAddress, 'deployed');
    const foreign: Address = getAddress(deployed.contractAddress);
    const account = await toSimpleSmartAccount({
      client: x.publicClient,
      owner: ownerFor('foreign-entrypoint'),
      entryPoint: { address: foreign, version: '0.7' },
    });
    const client = smartAccountClient(
      x,
      account,
      createPaymasterClient({ transport: http(x.paymasterUrl(x.open.apiKey)) }),
    );
    await assert.rejects(client.sendUserOperation({ calls: [counterCall] }), (err: unknown) => {
      const rpc = rpcErrorOf(err);
      assert.equal(rpc.code, -32602);
      assert.match(
        rpc.details,
        new RegExp(
          `^Invalid params: params\\[1\\]: EntryPoint ${foreign} is not served here; chain ${x.chainId} is served for v0\\.6 at `,
          'i',
        ),
      );
      assert.ok(err instanceof BaseError && err.message.includes('is not served here'));
      return true;
    });
  });
});
