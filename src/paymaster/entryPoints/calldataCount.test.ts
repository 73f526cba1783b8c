import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { bytesToHex, encodeAbiParameters, type Hex, hexToBytes, maxUint128, maxUint256, size } from 'viem';
import { altoPreVerificationGasV06, calldataGasV06, preVerificationGasV06 } from './v06/gasEstimatorV06.js';
import type { UserOperationV06 } from './v06/patronPaymasterV06.js';
import { altoPreVerificationGas, calldataGasV07, preVerificationGasV07 } from './v07/preVerificationGasV07.js';
import { packUserOperationV07, type UnpackedUserOperationV07 } from './v07/userOperationV07.js';

/**
 * The counted calldata formulas (calldataCount.ts) against the encodings themselves: viem's encoder and a loop over
 * every byte, as the formulas were first written, on ops of every shape (empty and odd-sized fields, zero-heavy and
 * zero-free data, small and 256-bit numbers, mixed-case hex). Any difference is a wrong preVerificationGas.
 */
const v06Tuple = [
  {
    type: 'tuple',
    components: [
      { name: 'sender', type: 'address' },
      { name: 'nonce', type: 'uint256' },
      { name: 'initCode', type: 'bytes' },
      { name: 'callData', type: 'bytes' },
      { name: 'callGasLimit', type: 'uint256' },
      { name: 'verificationGasLimit', type: 'uint256' },
      { name: 'preVerificationGas', type: 'uint256' },
      { name: 'maxFeePerGas', type: 'uint256' },
      { name: 'maxPriorityFeePerGas', type: 'uint256' },
      { name: 'paymasterAndData', type: 'bytes' },
      { name: 'signature', type: 'bytes' },
    ],
  },
] as const;
const v07Tuple = [
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

const maxBig = (a: bigint, b: bigint) => (a > b ? a : b);
const byteCost = (bytes: Uint8Array) => bytes.reduce((sum, b) => sum + (b === 0 ? 4n : 16n), 0n);
const words = (bytes: Uint8Array) => BigInt(Math.ceil(bytes.length / 32));

function referenceV06(op: UserOperationV06): bigint {
  const filled = { ...op, callGasLimit: 0xffffffn, verificationGasLimit: 0xffffffn, preVerificationGas: 0xffffffn };
  const packed = hexToBytes(encodeAbiParameters(v06Tuple, [filled])).subarray(32);
  return byteCost(packed) + 21_000n + 18_300n + 4n * words(packed);
}

/**
 * alto's rule on v0.6's tuple: the op encoded with its offset word, gas at its largest, unknown data as 0xff (as
 * many bytes as the hex string has characters: alto's fillUserOpWithDummyData on v0.6).
 */
function referenceAltoV06(op: UserOperationV06): bigint {
  const ff = (h: Hex): Hex => `0x${'ff'.repeat(h.length)}`;
  const filled = {
    ...op,
    callGasLimit: maxUint128,
    verificationGasLimit: maxUint128,
    preVerificationGas: maxUint256,
    maxFeePerGas: maxUint128,
    maxPriorityFeePerGas: maxUint128,
    paymasterAndData: ff(op.paymasterAndData),
    signature: ff(op.signature),
  };
  const packed = hexToBytes(encodeAbiParameters(v06Tuple, [filled]));
  const tokens = packed.reduce((sum, b) => sum + (b === 0 ? 1n : 4n), 0n);
  const perOp = op.callData.toLowerCase().startsWith('0x8dd7712f')
    ? 7_260n + 1_610n + (8_200n * words(packed)) / 1000n
    : 7_260n + (BigInt(Math.ceil(size(op.callData) / 32)) * 9_200n) / 1000n;
  return 4n * tokens + 21_000n + 9_830n + perOp;
}

function encodedV07(op: UnpackedUserOperationV07, ones: boolean): Uint8Array {
  const ff = (h: Hex): Hex => `0x${'ff'.repeat(size(h))}`;
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
          ...(ones ? { paymasterData: ff(op.paymasterData ?? '0x') } : {}),
        }),
    ...(ones ? { signature: ff(op.signature) } : {}),
  };
  return hexToBytes(
    encodeAbiParameters(v07Tuple, [{ ...packUserOperationV07(filled), preVerificationGas: maxUint256 }]),
  );
}

function referenceV07(op: UnpackedUserOperationV07): bigint {
  const packed = encodedV07(op, false).subarray(32);
  return byteCost(packed) + 21_000n + 18_300n + 4n * words(packed);
}

function referenceAlto(op: UnpackedUserOperationV07): bigint {
  const packed = encodedV07(op, true);
  const tokens = packed.reduce((sum, b) => sum + (b === 0 ? 1n : 4n), 0n);
  let perOp = 7_260n + (op.eip7702Auth === undefined ? 0n : 25_000n);
  if (op.callData.toLowerCase().startsWith('0x8dd7712f')) perOp += 1_610n + (8_200n * words(packed)) / 1000n;
  else perOp += (BigInt(Math.ceil(size(op.callData) / 32)) * 9_200n) / 1000n;
  return 4n * tokens + 21_000n + 9_830n + perOp;
}

/** An address (lower case: viem checks the checksum of mixed case). */
const address = (): Hex => data(20, pick(shares), false);

/** Random bytes of `n`, with about `zeroShare` of them zero, in random letter case. */
function data(n: number, zeroShare: number, mixedCase = true): Hex {
  const bytes = randomBytes(n);
  for (let i = 0; i < n; i++) if (Math.random() < zeroShare) bytes[i] = 0;
  const hex = bytesToHex(bytes);
  return (mixedCase && Math.random() < 0.3 ? `0x${hex.slice(2).toUpperCase()}` : hex) as Hex;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;
const sizes = [0, 1, 4, 20, 31, 32, 33, 65, 98, 154, 192, 300, 1025];
const shares = [0, 0.1, 0.5, 0.9, 1];
const numbers = [0n, 1n, 255n, 256n, 0x10000n, 2n ** 64n + 1n, (2n ** 192n - 1n) << 64n, 2n ** 256n - 1n];

describe('the counted calldata formulas equal the encoded ones', () => {
  it('v0.6: calldataGasV06, altoPreVerificationGasV06 and the larger (+ 5 %) of the two', () => {
    for (let i = 0; i < 400; i++) {
      const op: UserOperationV06 = {
        sender: address(),
        nonce: pick(numbers),
        initCode: data(pick(sizes), pick(shares)),
        callData:
          Math.random() < 0.2 ? `0x8dd7712f${data(pick(sizes), 0.5).slice(2)}` : data(pick(sizes), pick(shares)),
        callGasLimit: pick(numbers),
        verificationGasLimit: pick(numbers),
        preVerificationGas: pick(numbers),
        maxFeePerGas: pick(numbers),
        maxPriorityFeePerGas: pick(numbers),
        paymasterAndData: data(pick(sizes), pick(shares)),
        signature: data(pick(sizes), pick(shares)),
      };
      const what = JSON.stringify(op, (_, v) => String(v));
      assert.equal(calldataGasV06(op), referenceV06(op), what);
      assert.equal(altoPreVerificationGasV06(op), referenceAltoV06(op), what);
      assert.equal(
        preVerificationGasV06(op),
        maxBig((referenceV06(op) * 105n + 99n) / 100n, referenceAltoV06(op)),
        what,
      );
    }
  });

  it('v0.7+: calldataGasV07 and altoPreVerificationGas, with and without a paymaster, factory or 7702 marker', () => {
    for (let i = 0; i < 400; i++) {
      const factory = pick([undefined, address(), '0x7702' as Hex]);
      const paymaster = Math.random() < 0.7 ? address() : undefined;
      const op: UnpackedUserOperationV07 = {
        sender: address(),
        nonce: pick(numbers),
        ...(factory === undefined ? {} : { factory, factoryData: data(pick(sizes), pick(shares)) }),
        callData:
          Math.random() < 0.2 ? `0x8dd7712f${data(pick(sizes), 0.5).slice(2)}` : data(pick(sizes), pick(shares)),
        callGasLimit: pick(numbers) % 2n ** 128n,
        verificationGasLimit: pick(numbers) % 2n ** 128n,
        preVerificationGas: pick(numbers),
        maxFeePerGas: pick(numbers) % 2n ** 128n,
        maxPriorityFeePerGas: pick(numbers) % 2n ** 128n,
        ...(paymaster === undefined
          ? {}
          : {
              paymaster,
              paymasterVerificationGasLimit: pick(numbers) % 2n ** 128n,
              paymasterPostOpGasLimit: pick(numbers) % 2n ** 128n,
              paymasterData: data(pick(sizes), pick(shares)),
            }),
        signature: data(pick(sizes), pick(shares)),
        ...(Math.random() < 0.2 ? { eip7702Auth: { address: address() } } : {}),
      };
      const what = JSON.stringify(op, (_, v) => String(v));
      assert.equal(calldataGasV07(op), referenceV07(op), what);
      assert.equal(altoPreVerificationGas(op), referenceAlto(op), what);
      const auth = op.eip7702Auth === undefined ? 0n : 25_000n;
      assert.equal(
        preVerificationGasV07(op),
        maxBig((referenceV07(op) * 105n + 99n) / 100n + auth, referenceAlto(op)),
        what,
      );
    }
  });
});
