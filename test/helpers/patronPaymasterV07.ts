import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach } from 'node:test';
import {
  type Address,
  bytesToHex,
  concat,
  decodeErrorResult,
  encodeFunctionData,
  getAddress,
  type Hex,
  hexToBigInt,
  keccak256,
  parseAbi,
  parseEther,
  parseEventLogs,
} from 'viem';
import { entryPoint09Abi } from 'viem/account-abstraction';
import { privateKeyToAccount, sign } from 'viem/accounts';
import { loadAccountAbstractionArtifact } from '../../src/chain/aaArtifacts.js';
import { devTokenAbi } from '../../src/chain/artifacts.js';
import { deployPatronPaymasterV07, patronPaymasterV07Abi } from '../../src/chain/deployPatronPaymasterV07.js';
import { createDevClient, type DevClient, waitForSuccess } from '../../src/chain/devClient.js';
import {
  createEmbeddedChain,
  DEV_TOKENS,
  type DevTokenInfo,
  deployDevToken,
  type EmbeddedChain,
} from '../../src/chain/embeddedChain.js';
import { deployEntryPoint } from '../../src/chain/entryPoints.js';
import { eip191Digest, viemKeccak } from '../../src/paymaster/entryPoints/abiWords.js';
import type { TokenPaymasterFields } from '../../src/paymaster/entryPoints/paymasterModes.js';
import type { SignedGasV07 } from '../../src/paymaster/entryPoints/v07/chargesV07.js';
import {
  packUserOperationV07,
  sponsoredHashV07,
  tokenHashV07,
  userOpHashForVersion,
} from '../../src/paymaster/entryPoints/v07/hashesV07.js';
import {
  type EntryPointVersionV07,
  encodePaymasterAndDataV07,
  exactCapsV07,
  type GasCapsV07,
  type PaymasterFieldsV07,
  type UserOperationV07,
} from '../../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { COUNTER_ADDRESS, KEYS, revertOf } from './patronPaymasterV06.js';

/**
 * Fixtures for PatronPaymasterV07 on the embedded chain, one chain per EntryPoint version: the canonical
 * EntryPoint, that version's SimpleAccountFactory, the paymaster with a 10 ETH deposit, the counter and two dev
 * tokens; helpers to build, sign (as the service and the account do) and submit ops.
 */
export const VERSIONS: readonly EntryPointVersionV07[] = ['0.7', '0.8', '0.9'];

/** An op as it goes on chain: the flat fields plus its paymasterAndData. */
export type OpV07 = UserOperationV07 & { paymasterAndData: Hex };

export const AA34 = 'AA34 signature error';
export const AA32 = 'AA32 paymaster expired or not due';
export const AA33 = 'AA33 reverted';

const simpleAccountFactoryAbi = parseAbi([
  'function createAccount(address owner, uint256 salt) returns (address)',
  'function getAddress(address owner, uint256 salt) view returns (address)',
]);
export const accountAbi = parseAbi([
  'function execute(address dest, uint256 value, bytes func)',
  'function executeBatch(address[] dest, uint256[] value, bytes[] func)',
]);
/** v0.8+ BaseAccount.executeBatch takes Call structs. */
const accountV08Abi = parseAbi([
  'struct Call { address target; uint256 value; bytes data; }',
  'function executeBatch(Call[] calls)',
]);
const COUNTER_RUNTIME: Hex = '0x60005460010160005500';

export interface V07Fixture {
  readonly version: EntryPointVersionV07;
  readonly chain: EmbeddedChain;
  readonly chainId: number;
  /** The owner's client: deploys everything and owns the paymaster. */
  readonly client: DevClient;
  readonly bundler: DevClient;
  readonly stranger: DevClient;
  readonly entryPoint: Address;
  readonly paymaster: Address;
  readonly factory: Address;
  /** DEV_TOKENS, deployed (USDC-like 6 decimals, then an 18-decimal token). */
  readonly tokens: readonly DevTokenInfo[];
  close(): Promise<void>;
}

export async function startV07Fixture(version: EntryPointVersionV07): Promise<V07Fixture> {
  const owner = privateKeyToAccount(KEYS.owner);
  const bundlerAccount = privateKeyToAccount(KEYS.bundler);
  const strangerAccount = privateKeyToAccount(KEYS.stranger);
  const chain = await createEmbeddedChain({
    fundedAccounts: [owner.address, bundlerAccount.address, strangerAccount.address],
    balance: parseEther('1000'),
  });
  const client = createDevClient({ chain, account: owner });
  const entryPoint = await deployEntryPoint(client, version);
  const { abi, bytecode } = loadAccountAbstractionArtifact(version, 'SimpleAccountFactory');
  const factoryHash = await client.deployContract({ abi, bytecode, args: [entryPoint] });
  const factoryAddress = (await waitForSuccess(client, factoryHash, 'SimpleAccountFactory')).contractAddress;
  assert.ok(factoryAddress, 'SimpleAccountFactory deployed');
  const paymaster = await deployPatronPaymasterV07({
    client,
    entryPoint,
    owner: owner.address,
    verifyingSigner: privateKeyToAccount(KEYS.signer).address,
  });
  await waitForSuccess(
    client,
    await client.writeContract({
      address: paymaster,
      abi: patronPaymasterV07Abi,
      functionName: 'deposit',
      value: parseEther('10'),
    }),
    'paymaster deposit',
  );
  await client.setCode({ address: COUNTER_ADDRESS, bytecode: COUNTER_RUNTIME });
  const tokens: DevTokenInfo[] = [];
  for (const t of DEV_TOKENS) tokens.push(await deployDevToken({ client, ...t }));
  return {
    version,
    chain,
    chainId: chain.chainId,
    client,
    bundler: createDevClient({ chain, account: bundlerAccount }),
    stranger: createDevClient({ chain, account: strangerAccount }),
    entryPoint,
    paymaster,
    factory: getAddress(factoryAddress),
    tokens,
    close: () => chain.close(),
  };
}

/** The validity window the paymaster signs. */
export interface ValidityWindow {
  validUntil: number;
  validAfter: number;
}

export interface V07Chain {
  readonly fx: V07Fixture;
  /** Reset before each test to [now − 60 s, now + 1 h] of the chain's clock; a test may replace it. */
  window: ValidityWindow;
}

/**
 * Registers, in the calling `describe`, one chain of `version` for the suite (then `setUp`), an EVM snapshot
 * before each test and a revert after it, and a fresh validity window (as usePatronChain does for v0.6).
 */
export function useV07Chain(
  version: EntryPointVersionV07,
  options: { setUp?(fx: V07Fixture): Promise<void> } = {},
): V07Chain {
  let fx: V07Fixture | undefined;
  let snapshot: Hex | undefined;
  let window: ValidityWindow | undefined;
  const started = (): V07Fixture => {
    assert.ok(fx, 'the chain is used before its `before` hook ran');
    return fx;
  };
  before(async () => {
    fx = await startV07Fixture(version);
    await options.setUp?.(fx);
  });
  after(async () => {
    await fx?.close();
  });
  beforeEach(async () => {
    snapshot = await started().client.snapshot();
    const now = await latestTimestamp(started());
    window = { validUntil: now + 3600, validAfter: now - 60 };
  });
  afterEach(async () => {
    assert.ok(snapshot, 'a snapshot was taken before the test');
    await started().client.revert({ id: snapshot });
  });
  return {
    get fx() {
      return started();
    },
    get window() {
      assert.ok(window, 'the window is set before each test');
      return window;
    },
    set window(w) {
      window = w;
    },
  };
}

export async function latestTimestamp(fx: V07Fixture): Promise<number> {
  return Number((await fx.client.getBlock()).timestamp);
}

/** How often the counter at COUNTER_ADDRESS was called. */
export async function counterValue(fx: V07Fixture): Promise<bigint> {
  return hexToBigInt((await fx.client.getStorageAt({ address: COUNTER_ADDRESS, slot: '0x0' })) ?? '0x0');
}

export function paymasterDeposit(fx: V07Fixture): Promise<bigint> {
  return fx.client.readContract({ address: fx.paymaster, abi: patronPaymasterV07Abi, functionName: 'getDeposit' });
}

export function executeCallData(data: Hex, target: Address = COUNTER_ADDRESS): Hex {
  return encodeFunctionData({ abi: accountAbi, functionName: 'execute', args: [target, 0n, data] });
}

/** The account's batch call in this version's encoding (v0.7: three arrays; v0.8+: Call structs). */
export function batchCallData(
  version: EntryPointVersionV07,
  calls: readonly { readonly target: Address; readonly data: Hex }[],
): Hex {
  if (version === '0.7') {
    return encodeFunctionData({
      abi: accountAbi,
      functionName: 'executeBatch',
      args: [calls.map((c) => c.target), calls.map(() => 0n), calls.map((c) => c.data)],
    });
  }
  return encodeFunctionData({
    abi: accountV08Abi,
    functionName: 'executeBatch',
    args: [calls.map((c) => ({ target: c.target, value: 0n, data: c.data }))],
  });
}

/** The SimpleAccount (owner KEYS.accountOwner, `salt`) of the fixture's factory, counterfactual or deployed. */
export function accountAddress(fx: V07Fixture, salt = 0n): Promise<Address> {
  return fx.client.readContract({
    address: fx.factory,
    abi: simpleAccountFactoryAbi,
    functionName: 'getAddress',
    args: [privateKeyToAccount(KEYS.accountOwner).address, salt],
  });
}

export function entryPointNonce(fx: V07Fixture, sender: Address): Promise<bigint> {
  return fx.client.readContract({
    address: fx.entryPoint,
    abi: entryPoint09Abi,
    functionName: 'getNonce',
    args: [sender, 0n],
  });
}

/** factory || createAccount(KEYS.accountOwner, salt). */
export function createAccountInitCode(fx: V07Fixture, salt = 0n): Hex {
  const owner = privateKeyToAccount(KEYS.accountOwner).address;
  const createAccount = encodeFunctionData({
    abi: simpleAccountFactoryAbi,
    functionName: 'createAccount',
    args: [owner, salt],
  });
  return concat([fx.factory, createAccount]);
}

/**
 * An unsigned op that deploys a SimpleAccount (factory initCode, salt 0) and calls the counter through it; the
 * nonce is read for the overridden sender when one is given.
 */
export async function buildDeployingOp(fx: V07Fixture, overrides: Partial<OpV07> = {}): Promise<OpV07> {
  const sender = overrides.sender ?? (await accountAddress(fx));
  return {
    sender,
    nonce: await entryPointNonce(fx, sender),
    initCode: createAccountInitCode(fx),
    callData: executeCallData('0x'),
    callGasLimit: 100_000n,
    verificationGasLimit: 400_000n,
    preVerificationGas: 60_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    paymasterVerificationGasLimit: 100_000n,
    paymasterPostOpGasLimit: 0n,
    paymasterAndData: '0x',
    signature: '0x',
    ...overrides,
  };
}

export interface PaymasterSigning extends ValidityWindow {
  /** Defaults to the verifying signer. */
  readonly key?: Hex;
  /** What the signature is made for; default: the fixture's chain, paymaster and EntryPoint. */
  readonly signedChainId?: bigint;
  readonly signedPaymaster?: Address;
  readonly signedEntryPoint?: Address;
  readonly eip7702Delegate?: Address;
  /**
   * The sender's code hash the digest binds for an op without initCode; signPaymaster reads it from the chain when
   * not given (the service does the same through chain/senderCode.ts).
   */
  readonly senderCodeHash?: Hex;
  /** The gas caps signed; default: the op's own limits (exact binding). */
  readonly caps?: GasCapsV07;
  /** Token mode when given. */
  readonly token?: TokenPaymasterFields;
  readonly signatureInSuffix?: boolean;
}

/** The gas an op signed with `caps` (default: its own limits) is bounded by, as worstCaseCostV07 and maxTokenCostV07 take it. */
export function signedGasOf(op: OpV07, caps: GasCapsV07 = exactCapsV07(op)): SignedGasV07 {
  return {
    ...caps,
    paymasterVerificationGasLimit: op.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: op.paymasterPostOpGasLimit,
  };
}

/** The paymaster's digest as the service computes it (local hash, EIP-191), for the signing below. */
export function paymasterDigest(fx: V07Fixture, op: OpV07, s: PaymasterSigning): Hex {
  const params = {
    userOp: op,
    chainId: s.signedChainId ?? BigInt(fx.chainId),
    paymaster: s.signedPaymaster ?? fx.paymaster,
    entryPoint: s.signedEntryPoint ?? fx.entryPoint,
    validUntil: s.validUntil,
    validAfter: s.validAfter,
    caps: s.caps ?? exactCapsV07(op),
    ...(s.eip7702Delegate === undefined ? {} : { eip7702Delegate: s.eip7702Delegate }),
    ...(s.senderCodeHash === undefined ? {} : { senderCodeHash: s.senderCodeHash }),
  };
  const hash =
    s.token === undefined ? sponsoredHashV07(params, viemKeccak) : tokenHashV07({ ...params, ...s.token }, viemKeccak);
  return bytesToHex(eip191Digest(hash, viemKeccak));
}

/** Signs paymasterAndData as the service does: local hash, EIP-191 digest, raw ECDSA, r||s||v. */
export async function signPaymaster(fx: V07Fixture, op: OpV07, s: PaymasterSigning): Promise<OpV07> {
  const bound =
    s.senderCodeHash === undefined && op.initCode === '0x'
      ? { ...s, senderCodeHash: await codeHashOf(fx, op.sender) }
      : s;
  const signature = await sign({ hash: paymasterDigest(fx, op, bound), privateKey: s.key ?? KEYS.signer, to: 'bytes' });
  const fields: PaymasterFieldsV07 = s.token === undefined ? { mode: 0 } : { mode: 1, ...s.token };
  return {
    ...op,
    paymasterAndData: encodePaymasterAndDataV07({
      paymaster: fx.paymaster,
      paymasterVerificationGasLimit: op.paymasterVerificationGasLimit,
      paymasterPostOpGasLimit: op.paymasterPostOpGasLimit,
      fields,
      validUntil: s.validUntil,
      validAfter: s.validAfter,
      caps: s.caps ?? exactCapsV07(op),
      signature,
      ...(s.signatureInSuffix === undefined ? {} : { signatureInSuffix: s.signatureInSuffix }),
    }),
  };
}

/** EXTCODEHASH of an address as the chain has it now: keccak256 of its code (of no code for an empty account). */
export async function codeHashOf(fx: V07Fixture, address: Address): Promise<Hex> {
  return keccak256((await fx.client.getCode({ address })) ?? '0x');
}

/** The EntryPoint's userOpHash of the op, computed locally. */
export function userOpHashOf(fx: V07Fixture, op: OpV07, eip7702Delegate?: Address): Hex {
  return userOpHashForVersion({
    userOp: op,
    entryPoint: fx.entryPoint,
    chainId: fx.chainId,
    version: fx.version,
    ...(eip7702Delegate === undefined ? {} : { eip7702Delegate }),
  });
}

/**
 * The account's signature over the userOpHash: v0.7's SimpleAccount checks an EIP-191 signature, v0.8+'s
 * SimpleAccount and Simple7702Account a raw one (the hash is already EIP-712).
 */
export async function signAccount(
  fx: V07Fixture,
  op: OpV07,
  options: { readonly key?: Hex; readonly eip7702Delegate?: Address } = {},
): Promise<OpV07> {
  const key = options.key ?? KEYS.accountOwner;
  const hash = userOpHashOf(fx, op, options.eip7702Delegate);
  const signature =
    fx.version === '0.7'
      ? await privateKeyToAccount(key).signMessage({ message: { raw: hash } })
      : await sign({ hash, privateKey: key, to: 'hex' });
  return { ...op, signature };
}

export function packed(op: OpV07) {
  return packUserOperationV07(op);
}

/** How the EntryPoint refused an op (a bundler's pre-check), or 'ok'; `inner` is the AA33 revert, decoded. */
export interface Outcome {
  readonly reason: string;
  readonly inner?: { readonly errorName: string; readonly args: readonly unknown[] };
}

/** eth_call of handleOps from the bundler. */
export async function simulateOp(fx: V07Fixture, op: OpV07): Promise<Outcome> {
  try {
    await fx.bundler.simulateContract({
      address: fx.entryPoint,
      abi: entryPoint09Abi,
      functionName: 'handleOps',
      args: [[packed(op)], fx.bundler.account.address],
    });
    return { reason: 'ok' };
  } catch (err) {
    const { errorName, args } = revertOf(err);
    if (errorName === 'FailedOp') return { reason: String(args[1]) };
    if (errorName === 'FailedOpWithRevert') {
      const data = args[2] as Hex;
      try {
        const inner = decodeErrorResult({ abi: patronPaymasterV07Abi, data });
        return { reason: String(args[1]), inner: { errorName: inner.errorName, args: inner.args ?? [] } };
      } catch {
        return { reason: String(args[1]), inner: { errorName: 'undecoded', args: [data] } };
      }
    }
    throw new Error(`expected FailedOp, got ${String(errorName)}`);
  }
}

/** The FailedOp reason alone, or 'ok'. */
export async function failedOpReason(fx: V07Fixture, op: OpV07): Promise<string> {
  return (await simulateOp(fx, op)).reason;
}

/** Submits the ops with handleOps from the bundler EOA (fixed gas, no estimate) and returns receipt and events. */
export async function submitHandleOps(fx: V07Fixture, ops: readonly OpV07[], gas = 5_000_000n) {
  const hash = await fx.bundler.writeContract({
    address: fx.entryPoint,
    abi: entryPoint09Abi,
    functionName: 'handleOps',
    args: [ops.map(packed), fx.bundler.account.address],
    gas,
  });
  const receipt = await fx.client.waitForTransactionReceipt({ hash });
  const events = parseEventLogs({ abi: entryPoint09Abi, eventName: 'UserOperationEvent', logs: receipt.logs });
  return { receipt, events };
}

/** handleOps that must succeed with exactly one UserOperationEvent; returns it with the block's base fee. */
export async function handleOne(fx: V07Fixture, op: OpV07) {
  const { receipt, events } = await submitHandleOps(fx, [op]);
  assert.equal(receipt.status, 'success');
  const [event, ...more] = events;
  assert.ok(event !== undefined && more.length === 0, 'exactly one UserOperationEvent');
  const block = await fx.client.getBlock({ blockNumber: receipt.blockNumber });
  return { receipt, event, baseFee: block.baseFeePerGas ?? 0n };
}

/** The gas price the EntryPoint charges an op at: min(maxFeePerGas, maxPriorityFeePerGas + basefee). */
export function opGasPrice(op: OpV07, baseFee: bigint): bigint {
  const withBase = op.maxPriorityFeePerGas + baseFee;
  // biome-ignore lint/complexity/useMathMinMax: bigint, which Math.min does not take
  return withBase < op.maxFeePerGas ? withBase : op.maxFeePerGas;
}

export async function setFeeReceiver(fx: V07Fixture, receiver: Address): Promise<void> {
  const hash = await fx.client.writeContract({
    address: fx.paymaster,
    abi: patronPaymasterV07Abi,
    functionName: 'setFeeReceiver',
    args: [receiver],
  });
  await waitForSuccess(fx.client, hash, 'setFeeReceiver');
}

export async function mintToken(fx: V07Fixture, token: Address, to: Address, amount: bigint): Promise<void> {
  const hash = await fx.client.writeContract({
    address: token,
    abi: devTokenAbi,
    functionName: 'mint',
    args: [to, amount],
  });
  await waitForSuccess(fx.client, hash, 'mint');
}

export function tokenBalance(fx: V07Fixture, token: Address, who: Address): Promise<bigint> {
  return fx.client.readContract({ address: token, abi: devTokenAbi, functionName: 'balanceOf', args: [who] });
}

/** Calls validatePaymasterUserOp as the EntryPoint would (eth_call from its address). */
export function validateAsEntryPoint(fx: V07Fixture, op: OpV07) {
  return fx.client
    .simulateContract({
      address: fx.paymaster,
      abi: patronPaymasterV07Abi,
      functionName: 'validatePaymasterUserOp',
      args: [packed(op), '0x0000000000000000000000000000000000000000000000000000000000000000', 0n],
      account: fx.entryPoint,
    })
    .then(
      ({ result }) => ({ ok: true as const, context: result[0], validationData: result[1] }),
      (err: unknown) => ({ ok: false as const, ...revertOf(err) }),
    );
}
