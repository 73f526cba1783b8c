import { SimpleMerkleTree } from '@openzeppelin/merkle-tree';
import {
  type Address,
  concat,
  decodeAbiParameters,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  erc20Abi,
  formatUnits,
  type Hex,
  keccak256,
  parseAbi,
  size,
  slice,
  toHex,
  zeroHash,
} from 'viem';
import { entryPoint07Address, getUserOperationHash, type UserOperation } from 'viem/account-abstraction';

/**
 * A stand-in for the quote an MEE node answers to abstractjs 1.2.3's `getQuote` (its `GetQuotePayload`), built
 * from parts a test chooses, with every hash computed as the node and the K1 MEE validator compute it.
 *
 * Wire form: abstractjs types `paymentInfo.callGasLimit`/`verificationGasLimit` as bigint, but the SDK sends them
 * through viem's `stringify` (bigint → decimal string) and the node answers JSON, so on the wire, and in what
 * `getQuote` really returns, they are decimal strings. `MeeQuote` is that wire shape.
 */
/**
 * abstractjs 1.2.3's `MeeFilledUserOp` (dist/_types/clients/decorators/mee/getQuote.d.ts), restated: its index
 * re-exports extensionless paths that NodeNext resolution cannot follow, so its types reach us as `any`.
 */
export interface MeeFilledUserOp {
  sender: Address;
  nonce: string;
  initCode: Hex;
  callData: Hex;
  callGasLimit: string;
  verificationGasLimit: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  paymasterAndData: Hex;
  preVerificationGas: string;
  signature?: Hex;
}

/** abstractjs 1.2.3's `MeeFilledUserOpDetails`, restated (fields Patron never reads are left `unknown`). */
export interface MeeFilledUserOpDetails {
  userOp: MeeFilledUserOp;
  userOpHash: Hex;
  meeUserOpHash: Hex;
  lowerBoundTimestamp: string;
  upperBoundTimestamp: string;
  maxGasLimit: string;
  maxFeePerGas: string;
  chainId: string;
  eip7702Auth?: unknown;
  isCleanUpUserOp?: boolean;
  sessionDetails?: unknown;
  shortEncoding: boolean;
  metadata?: unknown[];
  signature?: Hex;
  isConfirmed?: boolean;
  executionSimulationRetryDelay?: string;
}

export interface MeeQuotePaymentInfo {
  sponsored: boolean;
  sender: Address;
  token: Address;
  nonce: string;
  chainId: string;
  callGasLimit: string;
  verificationGasLimit: string;
  sponsorshipUrl?: string;
  initCode?: Hex;
  shortEncoding?: boolean;
  eoa?: Address;
  tokenAmount: string;
  tokenWeiAmount: string;
  tokenValue: string;
}

export interface MeeQuote {
  hash: Hex;
  node: Address;
  commitment: Hex;
  paymentInfo: MeeQuotePaymentInfo;
  userOps: MeeFilledUserOpDetails[];
  quoteType?: 'simple';
}

/** Gas fields the node fills per op (it simulates; a test picks them). */
export interface MeeOpGas {
  callGasLimit?: bigint;
  verificationGasLimit?: bigint;
  preVerificationGas?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  paymasterVerificationGasLimit?: bigint;
  paymasterPostOpGasLimit?: bigint;
}

export interface MeeQuoteUserOpInput extends MeeOpGas {
  chainId: number;
  sender: Address;
  nonce: bigint;
  callData: Hex;
  initCode?: Hex;
  /** Per-op window (the SDK sends one per op; clean-up ops get a longer one); defaults to the quote's. */
  lowerBound?: number;
  upperBound?: number;
  shortEncoding?: boolean;
  isCleanUpUserOp?: boolean;
}

export interface MeeQuotePaymentInput extends MeeOpGas {
  chainId: number;
  tank: Address;
  token: Address;
  nonce: bigint;
  tokenWeiAmount: bigint;
  /** Decimals of the tank's token for `tokenAmount`; USDC's 6 by default. */
  tokenDecimals?: number;
  sponsorshipUrl?: string;
}

export interface BuildMeeQuoteArgs {
  node: Address;
  nodePaymaster: Address;
  payment: MeeQuotePaymentInput;
  userOps: readonly MeeQuoteUserOpInput[];
  lowerBound: number;
  upperBound: number;
  /** Leaves are the plain userOpHash instead of the meeUserOpHash (the quote's `shortEncoding` flag per op). */
  shortEncoding?: boolean;
}

/** Gas the payment op needs (a Nexus `execute` of one ERC-20 transfer); the SDK's own default callGasLimit. */
const PAYMENT_GAS: Required<MeeOpGas> = {
  callGasLimit: 75_000n,
  verificationGasLimit: 150_000n,
  preVerificationGas: 60_000n,
  maxFeePerGas: 1_500_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  paymasterVerificationGasLimit: 40_000n,
  paymasterPostOpGasLimit: 50_000n,
};

const USER_OP_GAS: Required<MeeOpGas> = { ...PAYMENT_GAS, callGasLimit: 200_000n, verificationGasLimit: 120_000n };

/**
 * The node paymaster's own data (bcnmy/mee-contracts BaseNodePaymaster, types/Constants.sol): refund mode
 * NODE_PM_MODE_USER 0x170de000 ‖ premium mode NODE_PM_PREMIUM_PERCENT 0x9ee4ce00 ‖ uint192 premium (5 decimals,
 * 10% = 10_00000). Patron never reads it; it is here so paymasterAndData has the length a real quote has.
 */
const NODE_PAYMASTER_DATA: Hex = encodePacked(
  ['bytes4', 'bytes4', 'uint192'],
  ['0x170de000', '0x9ee4ce00', 1_000_000n],
);

const nexusExecuteAbi = parseAbi(['function execute(bytes32 mode, bytes executionCalldata)']);

/**
 * ERC-7579 `execute(mode, executionCalldata)` of one call in the default mode (callType 0x00 single, execType 0x00
 * revert, all-zero mode): executionCalldata = abi.encodePacked(target, value, callData). The same bytes for Nexus
 * 1.2.0 and 1.3.x (abstractjs toNexusAccount.encodeExecute; meeQuote.test.ts compares them).
 */
export function encodeNexusExecuteSingle(call: { to: Address; value: bigint; data: Hex }): Hex {
  const executionCalldata = encodePacked(['address', 'uint256', 'bytes'], [call.to, call.value, call.data]);
  return encodeFunctionData({ abi: nexusExecuteAbi, functionName: 'execute', args: [zeroHash, executionCalldata] });
}

/** The payment op's callData: the tank transfers `amount` of `token` to the node. */
export function encodePaymentCallData(args: { token: Address; node: Address; amount: bigint }): Hex {
  const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [args.node, args.amount] });
  return encodeNexusExecuteSingle({ to: args.token, value: 0n, data });
}

/** EntryPoint v0.7 paymasterAndData: paymaster ‖ uint128 verificationGasLimit ‖ uint128 postOpGasLimit ‖ data. */
export function packPaymasterAndData(args: {
  paymaster: Address;
  verificationGasLimit: bigint;
  postOpGasLimit: bigint;
  data: Hex;
}): Hex {
  return encodePacked(
    ['address', 'uint128', 'uint128', 'bytes'],
    [args.paymaster, args.verificationGasLimit, args.postOpGasLimit, args.data],
  );
}

/** The quote's packed-style op (initCode, paymasterAndData) as viem's unpacked v0.7 UserOperation. */
export function toViemUserOperation(op: MeeFilledUserOp): UserOperation<'0.7'> {
  const initCode = op.initCode === undefined || op.initCode === '0x' ? undefined : op.initCode;
  const pmd = op.paymasterAndData === '0x' ? undefined : op.paymasterAndData;
  return {
    sender: op.sender,
    nonce: BigInt(op.nonce),
    callData: op.callData,
    callGasLimit: BigInt(op.callGasLimit),
    verificationGasLimit: BigInt(op.verificationGasLimit),
    preVerificationGas: BigInt(op.preVerificationGas),
    maxFeePerGas: BigInt(op.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(op.maxPriorityFeePerGas),
    signature: op.signature ?? '0x',
    ...(initCode === undefined ? {} : { factory: slice(initCode, 0, 20), factoryData: slice(initCode, 20) }),
    ...(pmd === undefined
      ? {}
      : {
          paymaster: slice(pmd, 0, 20),
          paymasterVerificationGasLimit: BigInt(slice(pmd, 20, 36)),
          paymasterPostOpGasLimit: BigInt(slice(pmd, 36, 52)),
          paymasterData: size(pmd) > 52 ? slice(pmd, 52) : '0x',
        }),
  };
}

/** The EntryPoint v0.7 hash of a quote op on its chain (the signature field is not part of it). */
export function meeOpUserOpHash(args: { op: MeeFilledUserOp; chainId: number }): Hex {
  return getUserOperationHash({
    chainId: args.chainId,
    entryPointAddress: entryPoint07Address,
    entryPointVersion: '0.7',
    userOperation: toViemUserOperation(args.op),
  });
}

/**
 * keccak256(bytes.concat(keccak256(abi.encode(bytes32 userOpHash, uint256 lowerBound, uint256 upperBound)))):
 * bcnmy/mee-contracts contracts/lib/util/MEEUserOpHashLib.sol `getMEEUserOpHash` (the bounds are uint256 there,
 * though the signature carries them as uint48), which the K1 MEE validator recomputes and proves against the root.
 * abstractjs 1.2.3 never computes it (it takes the node's `meeUserOpHash`); its EIP-712 `MeeUserOp` type in
 * signQuote.js uses the same (bytes32, uint256, uint256).
 */
export function meeUserOpHashOf(args: { userOpHash: Hex; lowerBound: bigint; upperBound: bigint }): Hex {
  const inner = keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'uint256' }, { type: 'uint256' }],
      [args.userOpHash, args.lowerBound, args.upperBound],
    ),
  );
  return keccak256(concat([inner]));
}

/** The leaves as abstractjs sponsorSupertransaction picks them: userOpHash when shortEncoding, else meeUserOpHash. */
export function quoteLeaves(quote: Pick<MeeQuote, 'userOps'>): Hex[] {
  return quote.userOps.map((op) => (op.shortEncoding ? op.userOpHash : op.meeUserOpHash));
}

/** The root abstractjs (modules/utils/merkle-tree.js) rebuilds: OpenZeppelin SimpleMerkleTree, sorted leaves. */
export function quoteRoot(quote: Pick<MeeQuote, 'userOps'>): Hex {
  return SimpleMerkleTree.of(quoteLeaves(quote), { sortLeaves: true }).root as Hex;
}

function filledOp(args: {
  input: { sender: Address; nonce: bigint; callData: Hex; initCode?: Hex };
  gas: Required<MeeOpGas>;
  nodePaymaster: Address;
}): MeeFilledUserOp {
  const { input, gas } = args;
  return {
    sender: input.sender,
    nonce: input.nonce.toString(),
    initCode: input.initCode ?? '0x',
    callData: input.callData,
    callGasLimit: gas.callGasLimit.toString(),
    verificationGasLimit: gas.verificationGasLimit.toString(),
    maxFeePerGas: gas.maxFeePerGas.toString(),
    maxPriorityFeePerGas: gas.maxPriorityFeePerGas.toString(),
    paymasterAndData: packPaymasterAndData({
      paymaster: args.nodePaymaster,
      verificationGasLimit: gas.paymasterVerificationGasLimit,
      postOpGasLimit: gas.paymasterPostOpGasLimit,
      data: NODE_PAYMASTER_DATA,
    }),
    preVerificationGas: gas.preVerificationGas.toString(),
    signature: '0x',
  };
}

function opDetails(args: {
  userOp: MeeFilledUserOp;
  gas: Required<MeeOpGas>;
  chainId: number;
  lowerBound: number;
  upperBound: number;
  shortEncoding: boolean;
  isCleanUpUserOp?: boolean;
}): MeeFilledUserOpDetails {
  const { gas } = args;
  const maxGasLimit =
    gas.callGasLimit +
    gas.verificationGasLimit +
    gas.preVerificationGas +
    gas.paymasterVerificationGasLimit +
    gas.paymasterPostOpGasLimit;
  const details: MeeFilledUserOpDetails = {
    userOp: args.userOp,
    userOpHash: zeroHash,
    meeUserOpHash: zeroHash,
    lowerBoundTimestamp: args.lowerBound.toString(),
    upperBoundTimestamp: args.upperBound.toString(),
    maxGasLimit: maxGasLimit.toString(),
    maxFeePerGas: gas.maxFeePerGas.toString(),
    chainId: args.chainId.toString(),
    shortEncoding: args.shortEncoding,
    ...(args.isCleanUpUserOp === undefined ? {} : { isCleanUpUserOp: args.isCleanUpUserOp }),
  };
  return rehashOp(details);
}

function rehashOp(op: MeeFilledUserOpDetails): MeeFilledUserOpDetails {
  const userOpHash = meeOpUserOpHash({ op: op.userOp, chainId: Number(op.chainId) });
  const meeUserOpHash = meeUserOpHashOf({
    userOpHash,
    lowerBound: BigInt(op.lowerBoundTimestamp),
    upperBound: BigInt(op.upperBoundTimestamp),
  });
  return { ...op, userOpHash, meeUserOpHash };
}

/** The quote a node would answer: payment op first (sender = tank), then the user's ops, every hash and the root. */
export function buildMeeQuote(args: BuildMeeQuoteArgs): MeeQuote {
  const { payment } = args;
  const paymentGas: Required<MeeOpGas> = { ...PAYMENT_GAS, ...definedGas(payment) };
  const paymentOp = opDetails({
    userOp: filledOp({
      input: {
        sender: payment.tank,
        nonce: payment.nonce,
        callData: encodePaymentCallData({ token: payment.token, node: args.node, amount: payment.tokenWeiAmount }),
      },
      gas: paymentGas,
      nodePaymaster: args.nodePaymaster,
    }),
    gas: paymentGas,
    chainId: payment.chainId,
    lowerBound: args.lowerBound,
    upperBound: args.upperBound,
    shortEncoding: args.shortEncoding ?? false,
  });
  const userOps = args.userOps.map((input) => {
    const gas: Required<MeeOpGas> = { ...USER_OP_GAS, ...definedGas(input) };
    return opDetails({
      userOp: filledOp({ input, gas, nodePaymaster: args.nodePaymaster }),
      gas,
      chainId: input.chainId,
      lowerBound: input.lowerBound ?? args.lowerBound,
      upperBound: input.upperBound ?? args.upperBound,
      shortEncoding: input.shortEncoding ?? args.shortEncoding ?? false,
      ...(input.isCleanUpUserOp === undefined ? {} : { isCleanUpUserOp: input.isCleanUpUserOp }),
    });
  });
  const tokenAmount = formatUnits(payment.tokenWeiAmount, payment.tokenDecimals ?? 6);
  const quote: MeeQuote = {
    hash: zeroHash,
    node: args.node,
    commitment: zeroHash,
    paymentInfo: {
      sponsored: true,
      sender: payment.tank,
      token: payment.token,
      nonce: payment.nonce.toString(),
      chainId: payment.chainId.toString(),
      callGasLimit: paymentGas.callGasLimit.toString(),
      verificationGasLimit: paymentGas.verificationGasLimit.toString(),
      ...(payment.sponsorshipUrl === undefined ? {} : { sponsorshipUrl: payment.sponsorshipUrl }),
      tokenAmount,
      tokenWeiAmount: payment.tokenWeiAmount.toString(),
      // A stablecoin tank: its USD value is its amount.
      tokenValue: tokenAmount,
    },
    userOps: [paymentOp, ...userOps],
  };
  return withRoot(quote);
}

function definedGas(input: MeeOpGas): MeeOpGas {
  const out: MeeOpGas = {};
  for (const key of Object.keys(PAYMENT_GAS) as (keyof MeeOpGas)[]) {
    const value = input[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function withRoot(quote: MeeQuote): MeeQuote {
  const hash = quoteRoot(quote);
  // The node's commitment to the quote; nothing in the SDK or the sponsor flow reads it.
  const commitment = keccak256(concat([hash, quote.node, toHex(quote.paymentInfo.tokenWeiAmount)]));
  return { ...quote, hash, commitment };
}

/**
 * Recomputes every op's userOpHash and meeUserOpHash from its fields, then the root: what an attacker who changed
 * op fields would send so the quote is self-consistent (a sponsor that only rebuilds the root from the leaves it is
 * handed cannot tell).
 */
export function rehashMeeQuote(quote: MeeQuote): MeeQuote {
  return withRoot({ ...quote, userOps: quote.userOps.map(rehashOp) });
}

/** Deep copy, so a test can mutate a quote without touching the one it came from. */
export function cloneMeeQuote(quote: MeeQuote): MeeQuote {
  return structuredClone(quote);
}

/** abstractjs DEFAULT_PREFIX / mee-contracts SIG_TYPE_SIMPLE: the sponsor's signature of a simple-mode supertransaction. */
export const SIG_TYPE_SIMPLE: Hex = '0x177eee00';

/**
 * userOps[0].userOp.signature as abstractjs sponsorSupertransaction writes it: SIG_TYPE_SIMPLE ‖ abi.encode(bytes32
 * root, uint48 lowerBound, uint48 upperBound, bytes32[] proof of leaf 0, bytes 65-byte EIP-191 signature of the root).
 */
export function decodeSponsorSignature(signature: Hex): {
  root: Hex;
  lowerBound: number;
  upperBound: number;
  proof: Hex[];
  signature: Hex;
} {
  if (size(signature) < 4 || slice(signature, 0, 4) !== SIG_TYPE_SIMPLE) {
    throw new Error(`not a ${SIG_TYPE_SIMPLE} signature: ${signature.slice(0, 10)}`);
  }
  const [root, lowerBound, upperBound, proof, sig] = decodeAbiParameters(
    [{ type: 'bytes32' }, { type: 'uint48' }, { type: 'uint48' }, { type: 'bytes32[]' }, { type: 'bytes' }],
    slice(signature, 4),
  );
  return { root, lowerBound, upperBound, proof: [...proof], signature: sig };
}
