import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createBicoPaymasterClient } from '@biconomy/abstractjs';
import { createSmartAccountClient } from 'permissionless';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { createPimlicoClient } from 'permissionless/clients/pimlico';
import { prepareUserOperationForErc20Paymaster } from 'permissionless/experimental/pimlico';
import {
  type Address,
  decodeFunctionData,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  http,
  keccak256,
  maxUint256,
  parseEventLogs,
  stringToHex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { MODE_TOKEN } from '../src/paymaster/entryPoints/paymasterModes.js';
import { decodePaymasterAndDataV07 } from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { toBiconomyTokenPaymasterContext } from './helpers/abstractjsTokenContext.js';
import { COUNTER_ADDRESS, mintToken, tokenBalance } from './helpers/patronPaymasterV06.js';
import { bicoBundlerClient } from './helpers/sdkClientsV07.js';
import { assertPaidByPatron, bundlerFees, type SdkE2eV07, useSdkE2eV07 } from './helpers/sdkE2eV07.js';
import { createTenant, enableTokenGuarantees } from './helpers/testContext.js';

/**
 * The ERC-20 flows of today's SDKs, unmodified, through Patron's /api/v2 URL and alto on EntryPoint v0.7, each
 * checked on chain: the op executed paid from the paymaster's deposit (actualGasCost), the fee receiver paid the
 * TokenCharged charge, which is at most the signed maximum, itself at most what the account approved.
 * - permissionless: createPimlicoClient on Patron's URL as the paymaster, prepareUserOperationForErc20Paymaster as
 *   the client's prepareUserOperation and `paymasterContext: { token }`. It asks pimlico_getTokenQuotes, prepares
 *   the op over the `{ token }` stub with a dummy max approval, computes its own approval from the quote
 *   ((five limits + postOpGas) × maxFeePerGas × exchangeRate / 1e18), and asks pm_getPaymasterData for it.
 * - @biconomy/abstractjs: createBicoPaymasterClient's getTokenPaymasterQuotes on a prepared op, then the op with
 *   approve(quote.paymasterAddress, ceil(maxGasFee × 10^decimal)) through createBicoBundlerClient with the ERC20
 *   context. (Its own sendTokenPaymasterUserOp approves Biconomy's hard-coded paymaster; see docs/guides/clients.md.)
 */
const e2e = useSdkE2eV07({
  tokens: true,
  // These flows batch their approval into the op (mode 2): the dApp guarantees those charges, its choice.
  setUp: (x) => enableTokenGuarantees(x.ctx.deps, x.open),
});

const counterCall = { to: COUNTER_ADDRESS, data: '0x' as Hex };
const receiptPolling = { pollingInterval: 100, timeout: 30_000 } as const;
const ownerFor = (label: string) => privateKeyToAccount(keccak256(stringToHex(`patron-test-sdk-v07-token-${label}`)));

// PatronPaymasterV07 has PatronPaymaster's (v0.6) feeReceiver() and TokenCharged event, signature for signature.
const chargedAbi = patronPaymasterAbi;
const feeReceiverAbi = patronPaymasterAbi;

const usdcOf = (x: SdkE2eV07): DevTokenInfo => {
  const [usdc] = x.fx.tokens;
  assert.ok(usdc, 'the dev chain has USDC');
  return usdc;
};

/** A fresh v0.7 SimpleAccount holding 100 USDC. */
async function fundedAccount(x: SdkE2eV07, label: string) {
  const account = await toSimpleSmartAccount({
    client: x.publicClient,
    owner: ownerFor(label),
    entryPoint: { address: x.entryPoint('0.7'), version: '0.7' },
  });
  await mintToken(x.fx, usdcOf(x).address, account.address, 100_000_000n);
  return account;
}

async function feeReceiver(x: SdkE2eV07): Promise<Address> {
  return x.fx.client.readContract({ address: x.paymaster('0.7'), abi: feeReceiverAbi, functionName: 'feeReceiver' });
}

/** The approval of the paymaster in the token among the op's calls (the last sent to alto since `from`). */
function sentApproval(
  x: SdkE2eV07,
  from: number,
  decode: (callData: Hex) => readonly { to: Address; data?: Hex | undefined }[],
) {
  const send = x.calls.slice(from).findLast((c) => c.target === 'alto' && c.method === 'eth_sendUserOperation');
  const op = send?.params[0] as { callData?: Hex; paymasterData?: Hex } | undefined;
  assert.ok(op?.callData && op.paymasterData, 'the SDK sent the op to alto');
  const approvals = decode(op.callData).flatMap((call) => {
    if (getAddress(call.to) !== getAddress(usdcOf(x).address) || call.data === undefined) return [];
    const f = decodeFunctionData({ abi: erc20Abi, data: call.data });
    return f.functionName === 'approve' && getAddress(f.args[0]) === x.paymaster('0.7') ? [f.args[1]] : [];
  });
  assert.equal(approvals.length, 1, 'one approval of Patron’s paymaster in the op');
  const decoded = decodePaymasterAndDataV07(`${x.paymaster('0.7')}${'00'.repeat(32)}${op.paymasterData.slice(2)}`);
  assert.equal(decoded.fields.mode, MODE_TOKEN, 'a token-mode signature');
  const maxTokenCost = decoded.fields.mode === MODE_TOKEN ? decoded.fields.maxTokenCost : 0n;
  return { approved: approvals[0] ?? 0n, maxTokenCost };
}

/** The charge of the op's bundle: TokenCharged, paid to the paymaster's fee receiver. */
async function chargeOf(x: SdkE2eV07, txHash: Hex, receiverBefore: bigint, receiver: Address) {
  const receipt = await x.fx.client.getTransactionReceipt({ hash: txHash });
  const [charged] = parseEventLogs({ abi: chargedAbi, logs: receipt.logs, eventName: 'TokenCharged' });
  assert.ok(charged, 'TokenCharged');
  assert.equal(getAddress(charged.args.token), getAddress(usdcOf(x).address));
  assert.ok(charged.args.charge > 0n);
  const gained = (await tokenBalance(x.fx, usdcOf(x).address, receiver)) - receiverBefore;
  assert.equal(gained, charged.args.charge, 'the fee receiver gained the charge');
  return charged.args.charge;
}

/** The paymaster data of the op the SDK last sent to alto (since `from`), decoded: its mode and signed maximum. */
function sentTokenData(x: SdkE2eV07, from: number) {
  const send = x.calls.slice(from).findLast((c) => c.target === 'alto' && c.method === 'eth_sendUserOperation');
  const op = send?.params[0] as { callData?: Hex; paymasterData?: Hex } | undefined;
  assert.ok(op?.callData && op.paymasterData, 'the SDK sent the op to alto');
  const decoded = decodePaymasterAndDataV07(`${x.paymaster('0.7')}${'00'.repeat(32)}${op.paymasterData.slice(2)}`);
  assert.equal(decoded.fields.mode, MODE_TOKEN, 'a token-mode signature');
  const fields = decoded.fields.mode === MODE_TOKEN ? decoded.fields : undefined;
  return { callData: op.callData, guaranteed: fields?.guaranteed === true, maxTokenCost: fields?.maxTokenCost ?? 0n };
}

/**
 * Mode 1 in the bundle's receipt: the prefund (account → paymaster, the signed maximum), the refund (paymaster →
 * account) and the charge (paymaster → fee receiver) as the token's Transfer events, in that order; returns the
 * charge (TokenCharged's).
 */
async function prefundRefundCharge(x: SdkE2eV07, args: { txHash: Hex; sender: Address; maxTokenCost: bigint }) {
  const receipt = await x.fx.client.getTransactionReceipt({ hash: args.txHash });
  const [charged] = parseEventLogs({ abi: chargedAbi, logs: receipt.logs, eventName: 'TokenCharged' });
  assert.ok(charged, 'TokenCharged');
  const moves = parseEventLogs({ abi: erc20Abi, logs: receipt.logs, eventName: 'Transfer' })
    .filter((l) => getAddress(l.address) === getAddress(usdcOf(x).address))
    .map((l) => [getAddress(l.args.from), getAddress(l.args.to), l.args.value]);
  const [sender, pm] = [getAddress(args.sender), x.paymaster('0.7')];
  assert.deepEqual(moves, [
    [sender, pm, args.maxTokenCost],
    [pm, sender, args.maxTokenCost - charged.args.charge],
    [pm, getAddress(await feeReceiver(x)), charged.args.charge],
  ]);
  return charged.args.charge;
}

/**
 * permissionless's ERC-20 client as a dApp configures it: createPimlicoClient on Patron's URL (the dApp's key) as the
 * paymaster, its ERC-20 preparation, the `{ token }` context in USDC, alto as the bundler.
 */
function permissionlessErc20Client(x: SdkE2eV07, account: Awaited<ReturnType<typeof fundedAccount>>, apiKey: string) {
  const pimlico = createPimlicoClient({
    transport: http(x.paymasterUrl(apiKey)),
    entryPoint: { address: x.entryPoint('0.7'), version: '0.7' },
  });
  return createSmartAccountClient({
    account,
    chain: x.chain,
    client: x.publicClient,
    bundlerTransport: http(x.alto.url),
    paymaster: pimlico,
    paymasterContext: { token: usdcOf(x).address },
    userOperation: { ...bundlerFees(x), prepareUserOperation: prepareUserOperationForErc20Paymaster(pimlico) },
  });
}

describe('permissionless ERC-20: createPimlicoClient on Patron’s URL, prepareUserOperationForErc20Paymaster', () => {
  test('pimlico_getTokenQuotes, the { token } stub and data; the op executes and the charge is within the approval', async (t) => {
    const x = e2e();
    const usdc = usdcOf(x).address;
    const account = await fundedAccount(x, 'permissionless');
    const client = permissionlessErc20Client(x, account, x.open.apiKey);
    const receiver = await feeReceiver(x);
    const receiverBefore = await tokenBalance(x.fx, usdc, receiver);
    const [depositBefore, counterBefore] = [await x.deposit('0.7'), await x.counter()];
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
    const patron = x.calls.slice(from).filter((c) => c.target === 'patron');
    assert.deepEqual(
      patron.map((c) => c.method),
      ['pimlico_getTokenQuotes', 'pm_getPaymasterStubData', 'pm_getPaymasterData'],
    );
    for (const c of patron.slice(1)) assert.deepEqual(c.params[3], { token: usdc }, 'the { token } context');
    const charge = await chargeOf(x, receipt.transactionHash, receiverBefore, receiver);
    const { approved, maxTokenCost } = sentApproval(x, from, (data) => decodeSimpleAccountCalls(data));
    t.diagnostic(`approved ${approved}, signed maximum ${maxTokenCost}, charged ${charge}`);
    assert.ok(approved < maxUint256, 'the approval permissionless computed, not its dummy one');
    assert.ok(charge <= maxTokenCost && maxTokenCost <= approved, 'charge ≤ signed maximum ≤ approval');
  });
});

describe('permissionless ERC-20 on a dApp with token guarantees off (the default)', () => {
  test('the { token } stub refuses the batched approval of an account with no allowance, with Patron’s reason (-32021): nothing signed, nothing sent', async () => {
    const x = e2e();
    const account = await fundedAccount(x, 'permissionless-default');
    const tenant = await createTenant(x.ctx.deps);
    const client = permissionlessErc20Client(x, account, tenant.apiKey);
    const [depositBefore, from] = [await x.deposit('0.7'), x.calls.length];
    await assert.rejects(client.sendUserOperation({ calls: [counterCall] }), (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.match(err.message, /batches its USDC approval.*this dApp has token guarantees off \(the default\)/s);
      return true;
    });
    const patron = x.calls.slice(from).filter((c) => c.target === 'patron');
    assert.deepEqual(
      patron.map((c) => c.method),
      ['pimlico_getTokenQuotes', 'pm_getPaymasterStubData'],
      'the quote is served; the stub, the first call with the op, refuses it',
    );
    const refusal = (patron[1]?.response as { error?: { code?: number; data?: unknown } } | undefined)?.error;
    assert.equal(refusal?.code, -32021);
    assert.deepEqual(refusal?.data, { rule: 'guaranteeOff', paymaster: x.paymaster('0.7') });
    assert.equal(
      x.calls.slice(from).filter((c) => c.target === 'alto' && c.method === 'eth_sendUserOperation').length,
      0,
    );
    assert.equal(await x.deposit('0.7'), depositBefore, 'the deposit paid nothing');
  });
});

describe('permissionless ERC-20, two ops: the batched approval (mode 2), then the allowance in place (mode 1)', () => {
  test('the first op batches its approval and executes in mode 2; the second, with no approval left to batch, is mode 1 with prefund, refund and charge', async (t) => {
    const x = e2e();
    const usdc = usdcOf(x).address;
    const account = await fundedAccount(x, 'permissionless-two-ops');
    const client = permissionlessErc20Client(x, account, x.open.apiKey);
    const unlimited = {
      to: usdc,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [x.paymaster('0.7'), maxUint256] }),
    };
    // First op: permissionless batches its approval (none on chain yet); the wallet's own call approves the
    // paymaster without limit for the ops to come.
    let from = x.calls.length;
    const first = await client.sendUserOperation({ calls: [unlimited, counterCall] });
    const firstReceipt = await client.waitForUserOperationReceipt({ hash: first, ...receiptPolling });
    assert.equal(firstReceipt.success, true);
    const batched = sentTokenData(x, from);
    assert.equal(batched.guaranteed, true, 'mode 2: the approval is batched in the op');
    assert.equal(
      decodeSimpleAccountCalls(batched.callData).filter((c) => getAddress(c.to) === getAddress(usdc)).length,
      2,
      'permissionless’s approval and the wallet’s',
    );

    // Second op: the allowance is on chain, permissionless batches nothing, Patron signs mode 1.
    const [depositBefore, counterBefore] = [await x.deposit('0.7'), await x.counter()];
    const before = await tokenBalance(x.fx, usdc, account.address);
    from = x.calls.length;
    const second = await client.sendUserOperation({ calls: [counterCall] });
    const { receipt } = await client.waitForUserOperationReceipt({ hash: second, ...receiptPolling });
    await assertPaidByPatron(x, {
      version: '0.7',
      txHash: receipt.transactionHash,
      userOpHash: second,
      sender: account.address,
      depositBefore,
      counterBefore,
    });
    const prefunded = sentTokenData(x, from);
    assert.equal(prefunded.guaranteed, false, 'mode 1');
    assert.deepEqual(
      decodeSimpleAccountCalls(prefunded.callData).map((c) => getAddress(c.to)),
      [getAddress(COUNTER_ADDRESS)],
      'no approval batched',
    );
    const charge = await prefundRefundCharge(x, {
      txHash: receipt.transactionHash,
      sender: account.address,
      maxTokenCost: prefunded.maxTokenCost,
    });
    assert.equal(await tokenBalance(x.fx, usdc, account.address), before - charge, 'the account paid the charge only');
    t.diagnostic(
      `mode 1: prefund ${prefunded.maxTokenCost}, refund ${prefunded.maxTokenCost - charge}, charge ${charge}`,
    );
  });
});

describe('@biconomy/abstractjs ERC-20: getTokenPaymasterQuotes, then the approval of the quoted paymaster', () => {
  test('the quote on a prepared op, the approval batched, createBicoBundlerClient with the ERC20 context: executes', async (t) => {
    const x = e2e();
    const usdc = usdcOf(x).address;
    const account = await fundedAccount(x, 'bico');
    const paymaster = createBicoPaymasterClient({ paymasterUrl: x.paymasterUrl(x.open.apiKey) });
    const bundler = bicoBundlerClient(
      x,
      account,
      paymaster,
      toBiconomyTokenPaymasterContext({ feeTokenAddress: usdc }),
    );
    const approve = (spender: Address, amount: bigint) => ({
      to: usdc,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] }),
    });
    // Biconomy's own preparation (prepareTokenPaymasterUserOp): the calls behind an unlimited approval.
    const prepared = await bundler.prepareUserOperation({
      calls: [approve(x.paymaster('0.7'), maxUint256), counterCall],
    });
    const quotes = await paymaster.getTokenPaymasterQuotes({ userOp: prepared, tokenList: [usdc] });
    const [quote] = quotes.feeQuotes;
    assert.ok(quote, JSON.stringify(quotes));
    assert.equal(getAddress(quotes.paymasterAddress), x.paymaster('0.7'));
    const amount = BigInt(Math.ceil(quote.maxGasFee * 10 ** quote.decimal));

    const receiver = await feeReceiver(x);
    const receiverBefore = await tokenBalance(x.fx, usdc, receiver);
    const [depositBefore, counterBefore] = [await x.deposit('0.7'), await x.counter()];
    const from = x.calls.length;
    const userOpHash = await bundler.sendUserOperation({
      calls: [approve(getAddress(quotes.paymasterAddress), amount), counterCall],
    });
    const { receipt } = await bundler.waitForUserOperationReceipt({ hash: userOpHash, ...receiptPolling });
    await assertPaidByPatron(x, {
      version: '0.7',
      txHash: receipt.transactionHash,
      userOpHash,
      sender: account.address,
      depositBefore,
      counterBefore,
    });
    const charge = await chargeOf(x, receipt.transactionHash, receiverBefore, receiver);
    const { approved, maxTokenCost } = sentApproval(x, from, (data) => decodeSimpleAccountCalls(data));
    t.diagnostic(`quoted ${amount}, signed maximum ${maxTokenCost}, charged ${charge}`);
    assert.equal(approved, amount, 'the op approved the quote');
    assert.ok(charge <= maxTokenCost && maxTokenCost <= approved, 'charge ≤ signed maximum ≤ approval');
  });
});

describe('@biconomy/abstractjs ERC-20, two ops: the batched approval (mode 2), then the allowance in place (mode 1)', () => {
  test('each op batches the quoted approval; the first (no allowance yet) is mode 2, the second (an unlimited one on chain) mode 1 with prefund, refund and charge', async (t) => {
    const x = e2e();
    const usdc = usdcOf(x).address;
    const account = await fundedAccount(x, 'bico-two-ops');
    const paymaster = createBicoPaymasterClient({ paymasterUrl: x.paymasterUrl(x.open.apiKey) });
    const bundler = bicoBundlerClient(
      x,
      account,
      paymaster,
      toBiconomyTokenPaymasterContext({ feeTokenAddress: usdc }),
    );
    const approve = (spender: Address, amount: bigint) => ({
      to: usdc,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] }),
    });
    /** The quoted approval: prepare behind an unlimited one (the SDK's own preparation), quote, ceil(maxGasFee). */
    const quoted = async () => {
      const prepared = await bundler.prepareUserOperation({
        calls: [approve(x.paymaster('0.7'), maxUint256), counterCall],
      });
      const quotes = await paymaster.getTokenPaymasterQuotes({ userOp: prepared, tokenList: [usdc] });
      const [quote] = quotes.feeQuotes;
      assert.ok(quote, JSON.stringify(quotes));
      return {
        spender: getAddress(quotes.paymasterAddress),
        amount: BigInt(Math.ceil(quote.maxGasFee * 10 ** quote.decimal)),
      };
    };

    // First op: the SDK's unlimited approval batched (Biconomy's own preparation approves without limit).
    const q1 = await quoted();
    let from = x.calls.length;
    const first = await bundler.sendUserOperation({ calls: [approve(q1.spender, maxUint256), counterCall] });
    assert.equal((await bundler.waitForUserOperationReceipt({ hash: first, ...receiptPolling })).success, true);
    assert.equal(sentTokenData(x, from).guaranteed, true, 'mode 2: no allowance on chain yet');

    // Second op: the quoted approval batched again (abstractjs always batches it), the allowance already on chain.
    const q2 = await quoted();
    const [depositBefore, counterBefore] = [await x.deposit('0.7'), await x.counter()];
    const before = await tokenBalance(x.fx, usdc, account.address);
    from = x.calls.length;
    const second = await bundler.sendUserOperation({ calls: [approve(q2.spender, q2.amount), counterCall] });
    const { receipt } = await bundler.waitForUserOperationReceipt({ hash: second, ...receiptPolling });
    await assertPaidByPatron(x, {
      version: '0.7',
      txHash: receipt.transactionHash,
      userOpHash: second,
      sender: account.address,
      depositBefore,
      counterBefore,
    });
    const prefunded = sentTokenData(x, from);
    assert.equal(prefunded.guaranteed, false, 'mode 1: the allowance on chain covers the maximum');
    const charge = await prefundRefundCharge(x, {
      txHash: receipt.transactionHash,
      sender: account.address,
      maxTokenCost: prefunded.maxTokenCost,
    });
    assert.equal(await tokenBalance(x.fx, usdc, account.address), before - charge, 'the account paid the charge only');
    t.diagnostic(
      `mode 1: prefund ${prefunded.maxTokenCost}, refund ${prefunded.maxTokenCost - charge}, charge ${charge}`,
    );
  });
});

const simpleAccountBatchAbi = [
  {
    type: 'function',
    name: 'executeBatch',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'dest', type: 'address[]' },
      { name: 'value', type: 'uint256[]' },
      { name: 'func', type: 'bytes[]' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'execute',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'dest', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'func', type: 'bytes' },
    ],
    outputs: [],
  },
] as const;

/** SimpleAccount v0.7's execute / executeBatch, as the calls they make. */
function decodeSimpleAccountCalls(callData: Hex): { to: Address; data?: Hex | undefined }[] {
  const f = decodeFunctionData({ abi: simpleAccountBatchAbi, data: callData });
  if (f.functionName === 'execute') return [{ to: f.args[0], data: f.args[2] }];
  return f.args[0].map((to, i) => ({ to, data: f.args[2][i] }));
}
