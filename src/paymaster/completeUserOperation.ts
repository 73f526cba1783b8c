import type { Hex } from 'viem';
import type { GasLimitsV06 } from './gasEstimatorV06.js';
import type { UserOperationV06 } from './patronPaymasterV06.js';
import type { PartialUserOperation } from './userOperationInput.js';

/**
 * The op as it is hashed or simulated: the caller's fields, the given gas limits (a missing one as 0), and a
 * paymasterAndData. Spelled out rather than spread: one object shape on every request (a spread of an op with
 * optional fields re-derived hidden classes per call).
 */
export function completeUserOperation(
  op: PartialUserOperation,
  limits: { readonly [K in keyof GasLimitsV06]?: bigint | undefined },
  paymasterAndData: Hex,
): UserOperationV06 {
  return {
    sender: op.sender,
    nonce: op.nonce,
    initCode: op.initCode,
    callData: op.callData,
    callGasLimit: limits.callGasLimit ?? 0n,
    verificationGasLimit: limits.verificationGasLimit ?? 0n,
    preVerificationGas: limits.preVerificationGas ?? 0n,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    paymasterAndData,
    signature: op.signature,
  };
}

/** `validUntil`/`validAfter` (unix seconds) for a request: its expiryDuration (or the default), capped. */
export function validityWindow(
  policy: { defaultExpirySeconds: number; maxExpirySeconds: number; validAfterSkewSeconds: number },
  nowMs: number,
  expiryDuration: number | undefined,
): { validUntil: number; validAfter: number } {
  const now = Math.floor(nowMs / 1000);
  const expiry = Math.min(expiryDuration ?? policy.defaultExpirySeconds, policy.maxExpirySeconds);
  return { validUntil: now + expiry, validAfter: Math.max(0, now - policy.validAfterSkewSeconds) };
}
