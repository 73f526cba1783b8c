import type { SigningBounds } from '../config/boundsSettings.js';
import type { GasLimits } from './entryPoints/entryPointModule.js';

/**
 * The bounds a signature binds when the bundler will estimate the op's gas after it (v0.7+): twice Patron's own
 * estimate plus 50,000 gas for validation and execution, and twice its preVerificationGas (bundlers differ in
 * their calldata formulas and margins; alto's estimate of a plain SimpleAccount op stays well within these), each
 * no higher than the signing bounds allow. The paymaster's worst case, reserved by the caps and the solvency
 * guard, is computed at these bounds; what it is charged is what the op uses.
 */
export function gasCapsFor(limits: GasLimits, bounds: SigningBounds): GasLimits {
  const min = (a: bigint, b: bigint) => (a < b ? a : b);
  return {
    verificationGasLimit: min(limits.verificationGasLimit * 2n + 50_000n, bounds.maxVerificationGasLimit),
    callGasLimit: min(limits.callGasLimit * 2n + 50_000n, bounds.maxCallGasLimit),
    preVerificationGas: min(limits.preVerificationGas * 2n, bounds.maxPreVerificationGas),
  };
}
