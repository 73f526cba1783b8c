import { encodeAbiParameters, type Hex, hexToBytes, maxUint128, maxUint256, size, slice } from 'viem';
import { packUserOperationV07, type UnpackedUserOperationV07 } from './userOperationV07.js';

/**
 * preVerificationGas for a v0.7-v0.9 op as it will be sent (signature and paymasterData at their final
 * lengths): the larger of
 * - the calldata formula (calldataGasV07) + 5 %, Patron's own margin as on v0.6;
 * - what alto (`@pimlico/alto` 0.0.20, the bundler the tests run) demands of the same op on an L1 without
 *   EIP-7623 pricing, since a bundler refuses an op below its own figure;
 * plus, for the first, 25,000 when the op carries an EIP-7702 authorization: the bundler pays
 * PER_EMPTY_ACCOUNT_COST for it in the type-4 transaction, and the EntryPoint cannot see it (alto counts it).
 */
export function preVerificationGasV07(op: UnpackedUserOperationV07): bigint {
  const own = ceilDiv(calldataGasV07(op) * 105n, 100n) + (op.eip7702Auth === undefined ? 0n : EIP7702_AUTH_GAS);
  const alto = altoPreVerificationGas(op);
  return own > alto ? own : alto;
}

/** EIP-7702's PER_EMPTY_ACCOUNT_COST, what an authorization costs the bundle transaction. */
export const EIP7702_AUTH_GAS = 25_000n;

const packedTuple = [
  {
    type: 'tuple',
    components: [
      { name: 'sender', type: 'address' },
      { name: 'nonce', type: 'uint256' },
      { name: 'initCode', type: 'bytes' },
      { name: 'callData', type: 'bytes' },
      { name: 'accountGasLimits', type: 'bytes32' },
      { name: 'preVerificationGas', type: 'uint256' },
      { name: 'gasFees', type: 'bytes32' },
      { name: 'paymasterAndData', type: 'bytes' },
      { name: 'signature', type: 'bytes' },
    ],
  },
] as const;

/**
 * The op's ABI encoding as it appears in handleOps, with every gas field and the paymaster's gas limits at
 * their largest (all non-zero bytes), so the count never depends on the values estimated later.
 * `withOffset` keeps the tuple's leading offset word (alto counts it).
 */
function encodedForCost(op: UnpackedUserOperationV07, fill: 'max' | 'ones', withOffset: boolean): Uint8Array {
  const filled: UnpackedUserOperationV07 = {
    ...op,
    callGasLimit: maxUint128,
    verificationGasLimit: maxUint128,
    maxFeePerGas: maxUint128,
    maxPriorityFeePerGas: maxUint128,
    ...(op.paymaster === undefined
      ? {}
      : {
          paymasterVerificationGasLimit: maxUint128,
          paymasterPostOpGasLimit: maxUint128,
          ...(fill === 'ones' ? { paymasterData: ones(op.paymasterData ?? '0x') } : {}),
        }),
    ...(fill === 'ones' ? { signature: ones(op.signature) } : {}),
  };
  const packed = { ...packUserOperationV07(filled), preVerificationGas: maxUint256 };
  const bytes = hexToBytes(encodeAbiParameters(packedTuple, [packed]));
  return withOffset ? bytes : bytes.subarray(32);
}

/** The same number of bytes, all 0xff: how alto prices a signature or paymasterData it cannot know yet. */
function ones(data: Hex): Hex {
  return `0x${'ff'.repeat(size(data))}`;
}

/**
 * The reference formula as on v0.6 (eth-infinitism's bundler): 21,000 per bundle of one, 18,300 per op, 4 per
 * 32-byte word of the packed op, and its bytes at 4 (zero) / 16 (non-zero).
 */
export function calldataGasV07(op: UnpackedUserOperationV07): bigint {
  const packed = encodedForCost(op, 'max', false);
  let cost = 0n;
  for (const b of packed) cost += b === 0 ? 4n : 16n;
  return cost + 21_000n + 18_300n + 4n * BigInt(Math.ceil(packed.length / 32));
}

/**
 * alto 0.0.20's required preVerificationGas for a v0.7+ op on a chain without EIP-7623 pricing or an L2 fee
 * (its calcExecutionPvgComponent, restated from reading it): 4 gas per calldata token (a zero byte is one
 * token, a non-zero byte four) of the op's encoding with signature and paymasterData as 0xff, plus 21,000
 * (transaction stipend) + 9,830 (bundle overhead) + 7,260 per op (+25,000 with an EIP-7702 authorization),
 * plus either 9.2 gas per 32-byte word of callData, or for an `executeUserOp` call 1,610 + 8.2 per word of
 * the encoded op.
 */
export function altoPreVerificationGas(op: UnpackedUserOperationV07): bigint {
  const packed = encodedForCost(op, 'ones', true);
  let tokens = 0n;
  for (const b of packed) tokens += b === 0 ? 1n : 4n;
  const opWords = BigInt(Math.ceil(packed.length / 32));
  let perOp = 7_260n + (op.eip7702Auth === undefined ? 0n : EIP7702_AUTH_GAS);
  if (size(op.callData) >= 4 && slice(op.callData, 0, 4) === '0x8dd7712f') {
    perOp += 1_610n + (8_200n * opWords) / 1000n;
  } else {
    perOp += (BigInt(Math.ceil(size(op.callData) / 32)) * 9_200n) / 1000n;
  }
  return 4n * tokens + 21_000n + 9_830n + perOp;
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
