import type { GasLimits } from '../entryPointModule.js';

/** EntryPoint v0.6: requiredPrefund counts verificationGasLimit three times when the op has a paymaster. */
export const VERIFICATION_GAS_MULTIPLIER_V06 = 3n;

/**
 * EntryPoint v0.6's prefund for an op with a paymaster: (callGasLimit + 3 × verificationGasLimit +
 * preVerificationGas) × maxFeePerGas. The EntryPoint never charges the paymaster more (AA51 otherwise).
 */
export function worstCaseCostV06(limits: GasLimits, maxFeePerGas: bigint): bigint {
  return (
    (limits.callGasLimit + VERIFICATION_GAS_MULTIPLIER_V06 * limits.verificationGasLimit + limits.preVerificationGas) *
    maxFeePerGas
  );
}
