import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createSmartAccountClient } from 'permissionless';
import { toSafeSmartAccount } from 'permissionless/accounts';
import { createPimlicoClient } from 'permissionless/clients/pimlico';
import { prepareUserOperationForErc20Paymaster } from 'permissionless/experimental/pimlico';
import {
  type Address,
  concat,
  erc20Abi,
  getAddress,
  type Hex,
  http,
  isErc6492Signature,
  keccak256,
  maxUint256,
  pad,
  parseEventLogs,
  type SignedAuthorization,
  stringToHex,
  toHex,
} from 'viem';
import {
  createBundlerClient,
  createPaymasterClient,
  formatUserOperationRequest,
  type SmartAccount,
  toSimple7702SmartAccount,
} from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { MODE_TOKEN } from '../src/paymaster/entryPoints/paymasterModes.js';
import { decodePaymasterAndDataV07 } from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { COUNTER_ADDRESS, mintToken, tokenBalance } from './helpers/patronPaymasterV06.js';
import {
  assertPaidByPatron,
  bundlerFees,
  type SdkE2eV07,
  type SdkEntryPointVersion,
  useSdkE2eV07,
} from './helpers/sdkE2eV07.js';

/**
 * A first-time user pays gas in USDC without any prior approve and without the dApp's guarantee: the permit
 * (token mode 3), through today's SDKs unmodified, with alto as the bundler, on the dev chain (its USDC has USDC's
 * permit). What the app does, with the SDK's own calls only:
 * 1. prepares the op's sender, nonce, fees and stub signature (viem's prepareUserOperation `parameters`);
 * 2. asks Patron's stub with `{ token }` through the paymaster client's `request` (ERC-7677's method; viem's
 *    getPaymasterStubData action keeps only the paymaster fields, so the extra `permitTypedData` is read here);
 * 3. signs `permitTypedData` with the smart account's own signTypedData (ERC-6492 while undeployed: Patron unwraps);
 * 4. sends the op with `paymasterContext: { token, permit: { value, signature } }`: the SDK's stub, the bundler's
 *    estimate, pm_getPaymasterData (Patron simulates the op with the permit and signs mode 3), the account's
 *    signature, eth_sendUserOperation.
 * Checked on chain: the op executed from Patron's deposit, the permit executed (the token's nonce moved), the
 * signed maximum prefunded and the rest refunded (the token's Transfer events), the charge paid to the fee receiver,
 * and the allowance left what the permit set minus the prefund.
 */
const e2e = useSdkE2eV07({ tokens: true });

const counterCall = { to: COUNTER_ADDRESS, data: '0x' as Hex };
const receiptPolling = { pollingInterval: 100, timeout: 30_000 } as const;
const ownerFor = (label: string) => privateKeyToAccount(keccak256(stringToHex(`patron-test-sdk-permit-${label}`)));
const FUNDS = 100_000_000n;

const usdcOf = (x: SdkE2eV07): DevTokenInfo => {
  const [usdc] = x.fx.tokens;
  assert.ok(usdc?.permit, 'the dev chain’s USDC has its permit');
  return usdc;
};

/** The permitTypedData of Patron's stub answer, as JSON (docs/reference/json-rpc.md, "The permit"). */
interface PermitTypedDataJson {
  domain: { name: string; version: string; chainId: number; verifyingContract: Address };
  types: Record<string, readonly { name: string; type: string }[]>;
  primaryType: 'Permit';
  message: { owner: Address; spender: Address; value: string; nonce: string; deadline: string };
}

/** A client that prepares ops (viem's bundler client, permissionless's smart account client). */
interface Preparer {
  prepareUserOperation(args: {
    calls: readonly { to: Address; data: Hex }[];
    parameters: readonly ('factory' | 'fees' | 'nonce' | 'signature' | 'authorization')[];
    authorization?: SignedAuthorization | undefined;
  }): Promise<Record<string, unknown>>;
}

/** Steps 1-3: the stub's permitTypedData for the op, signed by the account. */
async function signedPermit(
  x: SdkE2eV07,
  args: {
    readonly client: Preparer;
    /** The paymaster client's own `request` for pm_getPaymasterStubData (a viem or permissionless client). */
    readonly stub: (params: readonly unknown[]) => Promise<unknown>;
    readonly account: SmartAccount;
    /** An EIP-7702 account's first op: the owner's authorization (its delegate is what Patron binds). */
    readonly authorization?: SignedAuthorization;
  },
) {
  const usdc = usdcOf(x).address;
  const prepared = await args.client.prepareUserOperation({
    calls: [counterCall],
    parameters: ['factory', 'fees', 'nonce', 'signature', ...(args.authorization ? (['authorization'] as const) : [])],
    authorization: args.authorization,
  });
  const answer = (await args.stub([
    formatUserOperationRequest(prepared as never),
    args.account.entryPoint.address,
    toHex(x.chainId),
    { token: usdc },
  ])) as { permitTypedData?: PermitTypedDataJson };
  const typed = answer.permitTypedData;
  assert.ok(typed, `the stub asks for a permit: ${JSON.stringify(answer)}`);
  assert.equal(getAddress(typed.message.owner), getAddress(args.account.address));
  // The JSON's uint256 values are decimal strings; viem's types want bigints (at run time it takes both).
  const { EIP712Domain: _, ...types } = typed.types;
  const signature = await args.account.signTypedData({
    domain: typed.domain,
    types,
    primaryType: 'Permit',
    message: {
      ...typed.message,
      value: BigInt(typed.message.value),
      nonce: BigInt(typed.message.nonce),
      deadline: BigInt(typed.message.deadline),
    },
  } as never);
  return { typed, permit: { value: typed.message.value, signature } };
}

/** The op the SDK last sent to alto (since `from`): its mode-3 fields, decoded. */
function sentPermitOp(x: SdkE2eV07, from: number, version: SdkEntryPointVersion) {
  const send = x.calls.slice(from).findLast((c) => c.target === 'alto' && c.method === 'eth_sendUserOperation');
  const op = send?.params[0] as { paymasterData?: Hex } | undefined;
  assert.ok(op?.paymasterData, 'the SDK sent the op to alto');
  const decoded = decodePaymasterAndDataV07(concat([x.paymaster(version), pad('0x', { size: 32 }), op.paymasterData]));
  assert.equal(decoded.fields.mode, MODE_TOKEN);
  const fields = decoded.fields.mode === MODE_TOKEN ? decoded.fields : assert.fail('token mode');
  assert.ok(fields.permit, 'mode 3: the permit in the paymaster data');
  assert.notEqual(fields.guaranteed, true, 'no guarantee asked of the dApp');
  return { maxTokenCost: fields.maxTokenCost, permit: fields.permit };
}

/** The permit executed, the maximum prefunded and the rest refunded, the charge paid; returns the charge. */
async function assertPaidWithPermit(
  x: SdkE2eV07,
  args: { version: SdkEntryPointVersion; txHash: Hex; sender: Address; value: bigint; maxTokenCost: bigint },
) {
  const usdc = usdcOf(x).address;
  const pm = x.paymaster(args.version);
  const receipt = await x.fx.client.getTransactionReceipt({ hash: args.txHash });
  const [charged] = parseEventLogs({ abi: patronPaymasterAbi, logs: receipt.logs, eventName: 'TokenCharged' });
  assert.ok(charged, 'TokenCharged');
  const receiver = await x.fx.client.readContract({
    address: pm,
    abi: patronPaymasterAbi,
    functionName: 'feeReceiver',
  });
  const moves = parseEventLogs({ abi: erc20Abi, logs: receipt.logs })
    .filter((l) => getAddress(l.address) === getAddress(usdc))
    .map((l) =>
      l.eventName === 'Approval'
        ? ['approve', getAddress(l.args.owner), getAddress(l.args.spender), l.args.value]
        : [getAddress(l.args.from), getAddress(l.args.to), l.args.value],
    );
  const sender = getAddress(args.sender);
  assert.deepEqual(moves, [
    ['approve', sender, pm, args.value],
    [sender, pm, args.maxTokenCost],
    [pm, sender, args.maxTokenCost - charged.args.charge],
    [pm, getAddress(receiver), charged.args.charge],
  ]);
  const allowance = await x.fx.client.readContract({
    address: usdc,
    abi: erc20Abi,
    functionName: 'allowance',
    args: [sender, pm],
  });
  assert.equal(allowance, args.value - args.maxTokenCost, 'what the permit set, minus the prefund');
  assert.equal(await tokenBalance(x.fx, usdc, sender), FUNDS - charged.args.charge);
  return charged.args.charge;
}

/** ERC-7677's stub method through a client's typed `request` (its schema names the params; the answer is read raw). */
const stubOf = (client: { request: (args: never) => Promise<unknown> }) => (params: readonly unknown[]) =>
  client.request({ method: 'pm_getPaymasterStubData', params } as never);

/**
 * Everything the op's bundle must show (assertPaidByPatron's checks, mode 3 in the paymaster data the SDK sent, the
 * permit's and the prefund's token moves); returns a line for the test's diagnostic.
 */
async function assertPermitOp(
  x: SdkE2eV07,
  args: {
    version: SdkEntryPointVersion;
    txHash: Hex;
    userOpHash: Hex;
    sender: Address;
    typed: PermitTypedDataJson;
    from: number;
    before: { depositBefore: bigint; counterBefore: bigint };
  },
) {
  const paid = await assertPaidByPatron(x, { ...args, ...args.before });
  const sent = sentPermitOp(x, args.from, args.version);
  const charge = await assertPaidWithPermit(x, {
    version: args.version,
    txHash: args.txHash,
    sender: args.sender,
    value: BigInt(args.typed.message.value),
    maxTokenCost: sent.maxTokenCost,
  });
  return { paid, line: `permit ${args.typed.message.value}, prefund ${sent.maxTokenCost}, charge ${charge}` };
}

/** What a test compares after its op: the deposit of the version's paymaster and the counter. */
const beforeOp = async (x: SdkE2eV07, version: SdkEntryPointVersion) => ({
  depositBefore: await x.deposit(version),
  counterBefore: await x.counter(),
});

/** permissionless's Pimlico client on Patron's URL, and its smart account client through alto. */
function permissionlessClients(
  x: SdkE2eV07,
  account: Awaited<ReturnType<typeof freshSafe>>,
  options: { readonly paymasterContext?: Record<string, unknown>; readonly erc20Flow?: boolean } = {},
) {
  const pimlico = createPimlicoClient({
    transport: http(x.paymasterUrl(x.open.apiKey)),
    entryPoint: { address: x.entryPoint('0.7'), version: '0.7' },
  });
  const client = createSmartAccountClient({
    account,
    chain: x.chain,
    client: x.publicClient,
    bundlerTransport: http(x.alto.url),
    paymaster: pimlico,
    paymasterContext: options.paymasterContext,
    userOperation: {
      ...bundlerFees(x),
      ...(options.erc20Flow ? { prepareUserOperation: prepareUserOperationForErc20Paymaster(pimlico) } : {}),
    },
  });
  return { pimlico, client };
}

async function freshSafe(x: SdkE2eV07, label: string) {
  const account = await toSafeSmartAccount({
    client: x.publicClient,
    owners: [ownerFor(label)],
    version: '1.4.1',
    entryPoint: { address: x.entryPoint('0.7'), version: '0.7' },
  });
  await mintToken(x.fx, usdcOf(x).address, account.address, FUNDS);
  assert.equal(await x.publicClient.getCode({ address: account.address }), undefined, 'not deployed yet');
  return account;
}

describe('the permit through viem’s createBundlerClient and createPaymasterClient (EntryPoint v0.7, Safe 1.4.1)', () => {
  test('an undeployed Safe that never approved anything pays its first op in USDC', async (t) => {
    const x = e2e();
    const usdc = usdcOf(x).address;
    const account = await freshSafe(x, 'viem-safe');
    const paymaster = createPaymasterClient({ transport: http(x.paymasterUrl(x.open.apiKey)) });
    const bundler = createBundlerClient({
      account,
      client: x.publicClient,
      transport: http(x.alto.url),
      paymaster,
      userOperation: bundlerFees(x),
    });
    const { typed, permit } = await signedPermit(x, { client: bundler, stub: stubOf(paymaster), account });
    assert.equal(isErc6492Signature(permit.signature), true, 'the undeployed Safe signs in ERC-6492 form');
    const before = await beforeOp(x, '0.7');
    const from = x.calls.length;

    const hash = await bundler.sendUserOperation({ calls: [counterCall], paymasterContext: { token: usdc, permit } });
    const { receipt } = await bundler.waitForUserOperationReceipt({ hash, ...receiptPolling });
    const patron = x.calls.slice(from).filter((c) => c.target === 'patron');
    assert.deepEqual(
      patron.map((c) => c.method),
      ['pm_getPaymasterStubData', 'pm_getPaymasterData'],
    );
    const checked = await assertPermitOp(x, {
      version: '0.7',
      txHash: receipt.transactionHash,
      userOpHash: hash,
      sender: account.address,
      typed,
      from,
      before,
    });
    t.diagnostic(checked.line);
  });
});

describe('the permit through permissionless’s createSmartAccountClient (EntryPoint v0.7, Safe 1.4.1)', () => {
  test('with its Pimlico client as the paymaster (ERC-7677 methods on Patron’s URL)', async (t) => {
    const x = e2e();
    const usdc = usdcOf(x).address;
    const account = await freshSafe(x, 'permissionless-safe');
    const { pimlico, client } = permissionlessClients(x, account);
    const { typed, permit } = await signedPermit(x, { client, stub: stubOf(pimlico), account });
    const before = await beforeOp(x, '0.7');
    const from = x.calls.length;

    const hash = await client.sendUserOperation({ calls: [counterCall], paymasterContext: { token: usdc, permit } });
    const { receipt } = await client.waitForUserOperationReceipt({ hash, ...receiptPolling });
    const checked = await assertPermitOp(x, {
      version: '0.7',
      txHash: receipt.transactionHash,
      userOpHash: hash,
      sender: account.address,
      typed,
      from,
      before,
    });
    t.diagnostic(checked.line);
  });

  test('prepareUserOperationForErc20Paymaster with the permit in its context: it still batches its approve, Patron signs mode 3 (no guarantee)', async () => {
    const x = e2e();
    const usdc = usdcOf(x).address;
    const account = await freshSafe(x, 'permissionless-erc20-safe');
    const { pimlico, client: plain } = permissionlessClients(x, account);
    const { permit } = await signedPermit(x, { client: plain, stub: stubOf(pimlico), account });
    const { client: erc20 } = permissionlessClients(x, account, {
      paymasterContext: { token: usdc, permit },
      erc20Flow: true,
    });
    const from = x.calls.length;
    const hash = await erc20.sendUserOperation({ calls: [counterCall] });
    const { receipt } = await erc20.waitForUserOperationReceipt({ hash, ...receiptPolling });
    assert.equal(receipt.status, 'success');
    sentPermitOp(x, from, '0.7');
    // Its batched approval ran after the prefund and replaced the allowance the permit had left.
    const allowance = await x.fx.client.readContract({
      address: usdc,
      abi: erc20Abi,
      functionName: 'allowance',
      args: [account.address, x.paymaster('0.7')],
    });
    assert.ok(allowance > 0n && allowance < maxUint256);
  });
});

describe('the permit of an EIP-7702 account (viem toSimple7702SmartAccount, EntryPoint v0.8)', () => {
  test('the EOA’s first op carries its authorization and its permit; the token asks its delegate (ERC-1271)', async (t) => {
    const x = e2e();
    const usdc = usdcOf(x).address;
    const owner = ownerFor('simple-7702');
    const account = await toSimple7702SmartAccount({ client: x.publicClient, owner });
    await mintToken(x.fx, usdc, account.address, FUNDS);
    const paymaster = createPaymasterClient({ transport: http(x.paymasterUrl(x.open.apiKey)) });
    const bundler = createBundlerClient({
      account,
      client: x.publicClient,
      transport: http(x.alto.url),
      paymaster,
      userOperation: bundlerFees(x),
    });
    const authorization = await owner.signAuthorization({
      address: x.fx.simple7702Accounts['0.8'],
      chainId: x.chainId,
      nonce: await x.publicClient.getTransactionCount({ address: owner.address }),
    });
    const { typed, permit } = await signedPermit(x, {
      client: bundler,
      stub: stubOf(paymaster),
      account,
      authorization,
    });
    const before = await beforeOp(x, '0.8');
    const from = x.calls.length;

    const hash = await bundler.sendUserOperation({
      calls: [counterCall],
      authorization,
      paymasterContext: { token: usdc, permit },
    });
    const { receipt } = await bundler.waitForUserOperationReceipt({ hash, ...receiptPolling });
    const checked = await assertPermitOp(x, {
      version: '0.8',
      txHash: receipt.transactionHash,
      userOpHash: hash,
      sender: account.address,
      typed,
      from,
      before,
    });
    assert.equal(checked.paid.txType, 'eip7702', 'the bundle carried the authorization');
    t.diagnostic(checked.line);
  });
});
