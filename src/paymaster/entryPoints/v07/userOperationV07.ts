import { type Address, concat, type Hex, numberToHex, pad } from 'viem';
import type { PackedUserOperation } from 'viem/account-abstraction';

/**
 * A v0.7+ user operation in its RPC (unpacked) form, numbers as bigints: the shape viem's UserOperation<'0.7'>
 * and ERC-7677 use, plus `eip7702Auth` for an EIP-7702 sender (v0.8+).
 */
export interface UnpackedUserOperationV07 {
  readonly sender: Address;
  readonly nonce: bigint;
  /** `0x7702` (or padded to 20 bytes) for an EIP-7702 sender; its factoryData then initialises the account. */
  readonly factory?: Address | Hex | undefined;
  readonly factoryData?: Hex | undefined;
  readonly callData: Hex;
  readonly callGasLimit: bigint;
  readonly verificationGasLimit: bigint;
  readonly preVerificationGas: bigint;
  readonly maxFeePerGas: bigint;
  readonly maxPriorityFeePerGas: bigint;
  readonly paymaster?: Address | undefined;
  readonly paymasterVerificationGasLimit?: bigint | undefined;
  readonly paymasterPostOpGasLimit?: bigint | undefined;
  /** Everything after the two paymaster gas limits, including a v0.9 `paymasterSignature` suffix if any. */
  readonly paymasterData?: Hex | undefined;
  readonly signature: Hex;
  /** The authorization the bundler puts in its type-4 transaction; only `address` (the delegate) matters here. */
  readonly eip7702Auth?: { readonly address: Address } | undefined;
}

const uint128 = (value: bigint | undefined): Hex => pad(numberToHex(value ?? 0n), { size: 16 });

/** `paymaster ‖ paymasterVerificationGasLimit(16) ‖ paymasterPostOpGasLimit(16) ‖ paymasterData`, or `0x`. */
export function paymasterAndDataV07(op: UnpackedUserOperationV07): Hex {
  if (op.paymaster === undefined) return '0x';
  return concat([
    op.paymaster,
    uint128(op.paymasterVerificationGasLimit),
    uint128(op.paymasterPostOpGasLimit),
    op.paymasterData ?? '0x',
  ]);
}

/** The on-chain (packed) form, as handleOps and simulateHandleOp take it. */
export function packUserOperationV07(op: UnpackedUserOperationV07): PackedUserOperation {
  return {
    sender: op.sender,
    nonce: op.nonce,
    initCode: op.factory === undefined ? '0x' : concat([op.factory, op.factoryData ?? '0x']),
    callData: op.callData,
    accountGasLimits: concat([uint128(op.verificationGasLimit), uint128(op.callGasLimit)]),
    preVerificationGas: op.preVerificationGas,
    gasFees: concat([uint128(op.maxPriorityFeePerGas), uint128(op.maxFeePerGas)]),
    paymasterAndData: paymasterAndDataV07(op),
    signature: op.signature,
  };
}
