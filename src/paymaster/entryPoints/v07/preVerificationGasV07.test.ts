import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeFunctionData, parseAbi } from 'viem';
import {
  altoPreVerificationGas,
  calldataGasV07,
  EIP7702_AUTH_GAS,
  preVerificationGasV07,
} from './preVerificationGasV07.js';
import type { UnpackedUserOperationV07 } from './userOperationV07.js';

const op: UnpackedUserOperationV07 = {
  sender: '0x1111111111111111111111111111111111111111',
  nonce: 0n,
  factory: '0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985',
  factoryData: `0x5fbfb9cf${'00'.repeat(12)}${'22'.repeat(20)}${'00'.repeat(32)}`,
  callData: `0xb61d27f6${'00'.repeat(12)}${'33'.repeat(20)}${'00'.repeat(95)}60${'00'.repeat(32)}`,
  callGasLimit: 0n,
  verificationGasLimit: 0n,
  preVerificationGas: 0n,
  maxFeePerGas: 0n,
  maxPriorityFeePerGas: 0n,
  signature: `0x${'ab'.repeat(65)}`,
};

describe('preVerificationGasV07', () => {
  it('does not depend on the gas values, which are decided after it', () => {
    const a = preVerificationGasV07(op);
    const b = preVerificationGasV07({
      ...op,
      callGasLimit: 1n,
      verificationGasLimit: 300_000n,
      maxFeePerGas: 10n ** 12n,
    });
    assert.equal(a, b);
  });

  it('is the larger of the calldata formula + 5 % and alto’s rule', () => {
    const own = (calldataGasV07(op) * 105n + 99n) / 100n;
    assert.equal(preVerificationGasV07(op), own > altoPreVerificationGas(op) ? own : altoPreVerificationGas(op));
    assert.ok(preVerificationGasV07(op) >= altoPreVerificationGas(op));
  });

  it('grows with the paymaster fields and the bytes of the signature, zero bytes cheaper', () => {
    const withPaymaster = {
      ...op,
      paymaster: '0x4444444444444444444444444444444444444444',
      paymasterVerificationGasLimit: 1n,
      paymasterPostOpGasLimit: 1n,
      paymasterData: `0x${'55'.repeat(78)}`,
    } as const;
    assert.ok(calldataGasV07(withPaymaster) > calldataGasV07(op) + 16n * 52n);
    const zeros = calldataGasV07({ ...op, signature: `0x${'00'.repeat(65)}` });
    assert.ok(zeros < calldataGasV07(op));
    // alto prices an unknown signature's bytes as non-zero: the content does not matter to it, the length does.
    assert.equal(altoPreVerificationGas({ ...op, signature: `0x${'00'.repeat(65)}` }), altoPreVerificationGas(op));
  });

  it('adds 25,000 for an EIP-7702 authorization, which the EntryPoint cannot see', () => {
    const auth = { ...op, factory: '0x7702', factoryData: undefined, eip7702Auth: { address: op.sender } } as const;
    const plain = { ...auth, eip7702Auth: undefined };
    assert.equal(preVerificationGasV07(auth) - preVerificationGasV07(plain), EIP7702_AUTH_GAS);
    assert.equal(altoPreVerificationGas(auth) - altoPreVerificationGas(plain), EIP7702_AUTH_GAS);
  });

  it('follows alto for an executeUserOp call (priced by the words of the whole op)', () => {
    const execute = encodeFunctionData({
      abi: parseAbi(['function executeUserOp(bytes32 a, bytes32 b)']),
      functionName: 'executeUserOp',
      args: [`0x${'00'.repeat(32)}`, `0x${'00'.repeat(32)}`],
    });
    // Not the real signature of executeUserOp, but the selector is what alto keys on.
    const viaSelector = { ...op, callData: `0x8dd7712f${execute.slice(10)}` } as const;
    const plainCall = { ...op, callData: `0x12345678${execute.slice(10)}` } as const;
    assert.notEqual(altoPreVerificationGas(viaSelector), altoPreVerificationGas(plainCall));
  });
});
