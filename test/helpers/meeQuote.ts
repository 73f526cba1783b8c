import {
  type Address,
  concat,
  encodeFunctionData,
  encodePacked,
  erc20Abi,
  formatUnits,
  type Hex,
  keccak256,
  parseAbi,
  toHex,
  zeroHash,
} from 'viem';
import {
  type MeeFilledUserOp,
  type MeeFilledUserOpDetails,
  type MeeQuote,
  meeOpUserOpHash,
  meeUserOpHashOf,
  quoteRoot,
} from './meeQuoteWire.js';

/**
 * Builds the quote an MEE node answers (wire shape and hashes in meeQuoteWire.ts) from parts a test chooses: the
 * payment op first (the tank pays the node), then the user's ops, all through the node's paymaster.
 */
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
