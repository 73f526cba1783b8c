import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OperationFieldError } from '../errors/PatronError.js';
import type { PartialUserOperation } from './partialUserOperation.js';
import { callerLimits } from './signingPipeline.js';

const op = (limits: Partial<Record<'callGasLimit' | 'verificationGasLimit' | 'preVerificationGas', bigint>>) => {
  const userOp: PartialUserOperation = {
    sender: '0x0000000000000000000000000000000000000001',
    nonce: 0n,
    initCode: '0x',
    callData: '0x',
    callGasLimit: limits.callGasLimit,
    verificationGasLimit: limits.verificationGasLimit,
    preVerificationGas: limits.preVerificationGas,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
    signature: '0x',
    eip7702Auth: undefined,
  };
  return userOp;
};

const all = { callGasLimit: 1n, verificationGasLimit: 2n, preVerificationGas: 3n };

describe('callerLimits: the one rule for "the caller’s limits, or Patron’s estimate"', () => {
  test('all three given and calculateGasLimits not true: the caller’s, as given', () => {
    assert.deepEqual(callerLimits(op(all), undefined), all);
    assert.deepEqual(callerLimits(op(all), false), all);
  });

  test('calculateGasLimits true: Patron estimates even when all are given', () => {
    assert.equal(callerLimits(op(all), true), undefined);
  });

  test('a limit left out: Patron estimates, unless calculateGasLimits is false', () => {
    assert.equal(callerLimits(op({ callGasLimit: 1n }), undefined), undefined);
    assert.equal(callerLimits(op({}), true), undefined);
  });

  test('calculateGasLimits false with a limit left out: refused, naming the first one missing', () => {
    for (const [given, missing] of [
      [{}, 'callGasLimit'],
      [{ callGasLimit: 1n }, 'verificationGasLimit'],
      [{ callGasLimit: 1n, verificationGasLimit: 2n }, 'preVerificationGas'],
    ] as const) {
      assert.throws(
        () => callerLimits(op(given), false),
        (err: unknown) =>
          err instanceof OperationFieldError &&
          err.field === missing &&
          /required when calculateGasLimits is false/.test(err.message),
      );
    }
  });
});
