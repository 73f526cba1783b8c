import {
  type Address,
  BaseError,
  bytesToHex,
  ContractFunctionRevertedError,
  concat,
  encodeFunctionData,
  type Hex,
  hexToBigInt,
  keccak256,
  parseAbi,
  parseEther,
  parseEventLogs,
  stringToHex,
} from 'viem';
import { entryPoint06Abi, getUserOperationHash } from 'viem/account-abstraction';
import { privateKeyToAccount, sign } from 'viem/accounts';
import { devTokenAbi, patronPaymasterAbi } from '../../src/chain/artifacts.js';
import { devChainKnownAccounts } from '../../src/chain/canonicalAccounts.js';
import { type ChainRuntime, eip1193ChainRuntime } from '../../src/chain/chainRegistry.js';
import { createDevClient, type DevClient, waitForSuccess } from '../../src/chain/devClient.js';
import {
  type DevChain,
  deployPatronPaymaster,
  devChainDeployments,
  type EmbeddedChainType,
  type StartDevChainParams,
  startDevChain,
} from '../../src/chain/embeddedChain.js';
import { eip191Digest, viemKeccak } from '../../src/paymaster/entryPoints/abiWords.js';
import type { TokenPaymasterFields } from '../../src/paymaster/entryPoints/paymasterModes.js';
import {
  encodeSponsoredPaymasterAndData,
  encodeTokenPaymasterAndData,
  SPONSORED_PAYMASTER_AND_DATA_LENGTH,
  sponsoredHashV06,
  tokenHashV06,
  type UserOperationV06,
} from '../../src/paymaster/entryPoints/v06/patronPaymasterV06.js';

/**
 * Fixtures for PatronPaymaster on the embedded chain: throwaway keys derived from labels, a SimpleAccount v0.6
 * op with account deployment, and helpers to sign it the way the service does.
 */
export const testKey = (label: string): Hex => keccak256(stringToHex(`patron-test-${label}`));
export const KEYS = {
  owner: testKey('owner'),
  signer: testKey('signer'),
  bundler: testKey('bundler'),
  accountOwner: testKey('account-owner'),
  stranger: testKey('stranger'),
  /** The alto bundler's executor (test/helpers/altoBundler.ts), apart from `bundler` so their nonces never race. */
  alto: testKey('alto'),
} as const satisfies Record<string, Hex>;

export const simpleAccountFactoryAbi = parseAbi([
  'function createAccount(address owner, uint256 salt) returns (address)',
  'function getAddress(address owner, uint256 salt) view returns (address)',
]);
export const simpleAccountAbi = parseAbi([
  'function execute(address dest, uint256 value, bytes func)',
  'function executeBatch(address[] dest, bytes[] func)',
]);

/** Any call increments storage slot 0 (PUSH0 SLOAD, +1, PUSH0 SSTORE), so execution is observable. */
export const COUNTER_ADDRESS: Address = '0x00000000000000000000000000000000c0c0c0c0';
const COUNTER_RUNTIME: Hex = '0x60005460010160005500';

export interface PatronFixture extends DevChain {
  readonly bundler: DevClient;
  readonly stranger: DevClient;
}

/** The fixture's chain as the service's chain registry takes it (createTestContext's `chains`). */
export function fixtureChainRuntime(fx: PatronFixture): ChainRuntime {
  return eip1193ChainRuntime({
    chainId: fx.chain.chainId,
    request: fx.chain.request,
    entryPoint: fx.entryPoint,
    paymaster: fx.paymaster,
    deployments: devChainDeployments(fx),
    accounts: devChainKnownAccounts(fx),
  });
}

/**
 * `chainType`: the dev chain as an OP-stack L2 (EDR's OP chain type, its GasPriceOracle and L1Block predeploys);
 * `fork`: the dev chain as a fork of an endpoint (fork mode, docs/guides/fork-mode.md).
 */
export async function startPatronFixture(
  options: { readonly chainType?: EmbeddedChainType; readonly fork?: StartDevChainParams['fork'] } = {},
): Promise<PatronFixture> {
  const dev = await startDevChain({
    signerAddress: privateKeyToAccount(KEYS.signer).address,
    ownerPrivateKey: KEYS.owner,
    depositWei: parseEther('10'),
    ...(options.chainType === undefined ? {} : { chainType: options.chainType }),
    ...(options.fork === undefined ? {} : { fork: options.fork }),
  });
  const bundler = createDevClient({ chain: dev.chain, account: privateKeyToAccount(KEYS.bundler) });
  const stranger = createDevClient({ chain: dev.chain, account: privateKeyToAccount(KEYS.stranger) });
  await dev.client.setBalance({ address: bundler.account.address, value: parseEther('100') });
  await dev.client.setBalance({ address: stranger.account.address, value: parseEther('100') });
  await dev.client.setCode({ address: COUNTER_ADDRESS, bytecode: COUNTER_RUNTIME });
  return { ...dev, bundler, stranger };
}

/**
 * A second PatronPaymaster (v0.6) on the fixture's EntryPoint, owned by the fixture and verifying KEYS.signer, with
 * `depositWei` deposited and no stake: for a service pointed at a configured chain rather than the dev chain's own.
 */
export async function deployFundedPaymaster(fx: PatronFixture, depositWei: bigint): Promise<Address> {
  const paymaster = await deployPatronPaymaster({
    client: fx.client,
    entryPoint: fx.entryPoint,
    owner: fx.client.account.address,
    verifyingSigner: privateKeyToAccount(KEYS.signer).address,
  });
  const hash = await fx.client.writeContract({
    address: paymaster,
    abi: patronPaymasterAbi,
    functionName: 'deposit',
    value: depositWei,
  });
  await waitForSuccess(fx.client, hash, 'deposit');
  return paymaster;
}

/** The paymaster's deposit at the EntryPoint, which sponsored operations draw from. */
export function paymasterDeposit(fx: PatronFixture): Promise<bigint> {
  return fx.client.readContract({
    address: fx.entryPoint,
    abi: entryPoint06Abi,
    functionName: 'balanceOf',
    args: [fx.paymaster],
  });
}

/** How often the counter at COUNTER_ADDRESS was called. */
export async function counterValue(fx: PatronFixture): Promise<bigint> {
  return hexToBigInt((await fx.client.getStorageAt({ address: COUNTER_ADDRESS, slot: '0x0' })) ?? '0x0');
}

export function executeCallData(data: Hex): Hex {
  return encodeFunctionData({ abi: simpleAccountAbi, functionName: 'execute', args: [COUNTER_ADDRESS, 0n, data] });
}

/** An unsigned op that deploys a SimpleAccount (factory initCode) and calls the counter through it. */
export async function buildDeployingOp(fx: PatronFixture, salt = 0n): Promise<UserOperationV06> {
  const owner = privateKeyToAccount(KEYS.accountOwner).address;
  const args = [owner, salt] as const;
  const sender = await fx.client.readContract({
    address: fx.simpleAccountFactory,
    abi: simpleAccountFactoryAbi,
    functionName: 'getAddress',
    args,
  });
  const nonce = await fx.client.readContract({
    address: fx.entryPoint,
    abi: entryPoint06Abi,
    functionName: 'getNonce',
    args: [sender, 0n],
  });
  const createAccount = encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: 'createAccount', args });
  return {
    sender,
    nonce,
    initCode: concat([fx.simpleAccountFactory, createAccount]),
    callData: executeCallData('0x'),
    callGasLimit: 100_000n,
    verificationGasLimit: 600_000n,
    preVerificationGas: 50_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    paymasterAndData: `0x${'00'.repeat(SPONSORED_PAYMASTER_AND_DATA_LENGTH)}`,
    signature: '0x',
  };
}

export interface PaymasterSigning {
  readonly validUntil: number;
  readonly validAfter: number;
  /** Defaults to the verifying signer. */
  readonly key?: Hex;
  /** What the signature is made for; default: the fixture's chain and paymaster. */
  readonly signedChainId?: bigint;
  readonly signedPaymaster?: Address;
}

/** Signs paymasterAndData as the service does: local hash, EIP-191 digest, raw ECDSA, r||s||v. */
export async function signPaymaster(
  fx: PatronFixture,
  op: UserOperationV06,
  s: PaymasterSigning,
): Promise<UserOperationV06> {
  const hash = sponsoredHashV06(
    {
      userOp: op,
      chainId: s.signedChainId ?? BigInt(fx.chain.chainId),
      paymaster: s.signedPaymaster ?? fx.paymaster,
      validUntil: s.validUntil,
      validAfter: s.validAfter,
    },
    viemKeccak,
  );
  const digest = bytesToHex(eip191Digest(hash, viemKeccak));
  const signature = await sign({ hash: digest, privateKey: s.key ?? KEYS.signer, to: 'bytes' });
  const { validUntil, validAfter } = s;
  return {
    ...op,
    paymasterAndData: encodeSponsoredPaymasterAndData({ paymaster: fx.paymaster, validUntil, validAfter, signature }),
  };
}

/** Signs token-mode paymasterAndData as the service does. */
export async function signTokenPaymaster(
  fx: PatronFixture,
  op: UserOperationV06,
  s: PaymasterSigning & TokenPaymasterFields,
): Promise<UserOperationV06> {
  const hash = tokenHashV06(
    {
      userOp: op,
      chainId: s.signedChainId ?? BigInt(fx.chain.chainId),
      paymaster: s.signedPaymaster ?? fx.paymaster,
      validUntil: s.validUntil,
      validAfter: s.validAfter,
      token: s.token,
      exchangeRate: s.exchangeRate,
      priceMarkup: s.priceMarkup,
      maxTokenCost: s.maxTokenCost,
      guaranteed: s.guaranteed,
    },
    viemKeccak,
  );
  const digest = bytesToHex(eip191Digest(hash, viemKeccak));
  const signature = await sign({ hash: digest, privateKey: s.key ?? KEYS.signer, to: 'bytes' });
  const { validUntil, validAfter, token, exchangeRate, priceMarkup, maxTokenCost, guaranteed } = s;
  return {
    ...op,
    paymasterAndData: encodeTokenPaymasterAndData({
      paymaster: fx.paymaster,
      validUntil,
      validAfter,
      token,
      exchangeRate,
      priceMarkup,
      maxTokenCost,
      guaranteed,
      signature,
    }),
  };
}

/** SimpleAccount v0.6 checks an EIP-191 signature of the owner over the EntryPoint's userOpHash. */
export async function signAccount(fx: PatronFixture, op: UserOperationV06): Promise<UserOperationV06> {
  const hash = getUserOperationHash({
    chainId: fx.chain.chainId,
    entryPointAddress: fx.entryPoint,
    entryPointVersion: '0.6',
    userOperation: op,
  });
  const signature = await privateKeyToAccount(KEYS.accountOwner).signMessage({ message: { raw: hash } });
  return { ...op, signature };
}

export type Simulation = { ok: true } | { ok: false; errorName: string | undefined; args: readonly unknown[] };

/** The revert of a failed contract call, decoded with the called ABI (viem walks the cause chain). */
export function revertOf(err: unknown): { errorName: string | undefined; args: readonly unknown[] } {
  if (!(err instanceof BaseError)) throw err;
  const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
  if (!(reverted instanceof ContractFunctionRevertedError)) throw err;
  return { errorName: reverted.data?.errorName, args: reverted.data?.args ?? [] };
}

/** eth_call of handleOps from the bundler: what a bundler's pre-check sees. */
export async function simulateHandleOps(fx: PatronFixture, op: UserOperationV06): Promise<Simulation> {
  try {
    await fx.bundler.simulateContract({
      address: fx.entryPoint,
      abi: entryPoint06Abi,
      functionName: 'handleOps',
      args: [[op], fx.bundler.account.address],
    });
    return { ok: true };
  } catch (err) {
    return { ok: false, ...revertOf(err) };
  }
}

/** The FailedOp reason, or 'ok' when the simulation passed; anything else is rethrown as a test failure. */
export async function failedOpReason(fx: PatronFixture, op: UserOperationV06): Promise<string> {
  const sim = await simulateHandleOps(fx, op);
  if (sim.ok) return 'ok';
  if (sim.errorName !== 'FailedOp') throw new Error(`expected FailedOp, got ${String(sim.errorName)}`);
  return String(sim.args[1]);
}

export async function latestTimestamp(fx: PatronFixture): Promise<number> {
  const block = await fx.client.getBlock();
  return Number(block.timestamp);
}

/** The owner points the paymaster's token charges at `receiver`, so its balance change is the charge alone. */
export async function setFeeReceiver(fx: PatronFixture, receiver: Address): Promise<void> {
  const hash = await fx.client.writeContract({
    address: fx.paymaster,
    abi: patronPaymasterAbi,
    functionName: 'setFeeReceiver',
    args: [receiver],
  });
  await fx.client.waitForTransactionReceipt({ hash });
}

/** Mints a dev fee token (anyone may: it is a test token). */
export async function mintToken(fx: PatronFixture, token: Address, to: Address, amount: bigint): Promise<void> {
  const hash = await fx.client.writeContract({
    address: token,
    abi: devTokenAbi,
    functionName: 'mint',
    args: [to, amount],
  });
  await fx.client.waitForTransactionReceipt({ hash });
}

export function tokenBalance(fx: PatronFixture, token: Address, who: Address): Promise<bigint> {
  return fx.client.readContract({ address: token, abi: devTokenAbi, functionName: 'balanceOf', args: [who] });
}

/**
 * Submits the signed ops with `handleOps` from the bundler EOA and waits for the receipt; the caller asserts on
 * it (a FailedOp revert throws here, from the gas estimate). `gas` skips the estimate, as the contract tests do
 * to send a fixed 3M. Returns the receipt and its `UserOperationEvent`s.
 */
export async function submitHandleOps(
  fx: PatronFixture,
  ops: readonly UserOperationV06[],
  options: { readonly gas?: bigint } = {},
) {
  const hash = await fx.bundler.writeContract({
    address: fx.entryPoint,
    abi: entryPoint06Abi,
    functionName: 'handleOps',
    args: [[...ops], fx.bundler.account.address],
    ...(options.gas === undefined ? {} : { gas: options.gas }),
  });
  const receipt = await fx.client.waitForTransactionReceipt({ hash });
  const events = parseEventLogs({ abi: entryPoint06Abi, eventName: 'UserOperationEvent', logs: receipt.logs });
  return { receipt, events };
}
