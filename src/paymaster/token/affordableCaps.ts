import type { GasLimits } from '../entryPoints/entryPointModule.js';

/**
 * The token mode with gas caps (gasBounds.ts gasCapsFor: the client's bundler sets the gas after Patron signed): the largest caps
 * between the limits Patron computed and the caps it would give that keep the op's maximum charge within what the
 * user approved. Signing wider caps with the approval as the maximum would let whoever submits the op use gas the
 * charge can no longer cover: the paymaster would pay for it out of its deposit. Returns undefined when even the
 * computed limits cost more than the approval (the caller then applies the expected-cost rule at those limits).
 *
 * The caps grow together, by 1/1024 steps of their headroom; the charge grows with every cap, so the largest
 * affordable step is found by bisection (11 evaluations of bigint arithmetic).
 */
export function affordableCaps(args: {
  readonly limits: GasLimits;
  readonly caps: GasLimits;
  /** The maximum charge (token base units) an op with these caps is signed for. */
  readonly charge: (caps: GasLimits) => bigint;
  /** What the user approved. */
  readonly budget: bigint;
}): GasLimits | undefined {
  const { limits, caps } = args;
  const STEPS = 1024n;
  const at = (step: bigint): GasLimits => {
    const between = (low: bigint, high: bigint) => (high > low ? low + ((high - low) * step) / STEPS : low);
    return {
      callGasLimit: between(limits.callGasLimit, caps.callGasLimit),
      verificationGasLimit: between(limits.verificationGasLimit, caps.verificationGasLimit),
      preVerificationGas: between(limits.preVerificationGas, caps.preVerificationGas),
    };
  };
  if (args.charge(at(0n)) > args.budget) return undefined;
  let low = 0n;
  let high = STEPS;
  if (args.charge(at(high)) <= args.budget) return at(high);
  // Invariant: at(low) is affordable, at(high) is not.
  while (high - low > 1n) {
    const mid = (low + high) / 2n;
    if (args.charge(at(mid)) <= args.budget) low = mid;
    else high = mid;
  }
  return at(low);
}
