import type { EntryPointVersion } from '../../../chain/chainRegistry.js';

/** v0.7 and later (patronPaymasterV07.ts EntryPointVersionV07, named here without importing the codec). */
type EntryPointVersionV07 = Exclude<EntryPointVersion, '0.6'>;

/**
 * The unused-gas penalty of EntryPoint v0.7+ (ERC-4337), the most of it an op can pay: gas charged to the paymaster
 * and paid to the bundler although nobody burnt it. An account can use all its gas in Patron's simulation and none
 * at inclusion, so the bound is taken at the op's limits (or the caps it is signed with), whatever it was simulated
 * to use. v0.6 has no penalty.
 * - v0.7: 10 % of the unused callGasLimit + paymasterPostOpGasLimit, together (EntryPoint._postExecution).
 * - v0.8, v0.9: 10 % of the unused callGasLimit, and apart 10 % of the unused paymasterPostOpGasLimit, each only
 *   when more than 40,000 of it is unused (EntryPoint._getUnusedGasPenalty); a reverted postOp pays its maximum.
 */
const PENALTY_THRESHOLD = 40_000n;

export interface PenaltyGas {
  readonly callGasLimit: bigint;
  readonly paymasterPostOpGasLimit: bigint;
}

/** The penalty of one part when none of its limit is used (the most it can be), v0.8+. */
const partV08 = (limit: bigint) => (limit > PENALTY_THRESHOLD ? limit / 10n : 0n);

/** The most unused-gas penalty an op with these limits can pay, in gas. */
export function maxUnusedGasPenalty(version: EntryPointVersionV07, gas: PenaltyGas): bigint {
  if (version === '0.7') return (gas.callGasLimit + gas.paymasterPostOpGasLimit) / 10n;
  return partV08(gas.callGasLimit) + partV08(gas.paymasterPostOpGasLimit);
}

/**
 * The largest callGasLimit whose most penalty (with this postOp limit) stays within `penalty`, or -1 when even a
 * callGasLimit of 0 does not (the postOp limit alone pays more).
 */
export function maxCallGasLimitForPenalty(
  version: EntryPointVersionV07,
  args: { readonly penalty: bigint; readonly paymasterPostOpGasLimit: bigint },
): bigint {
  if (version === '0.7') {
    // floor((call + postOp) / 10) ≤ penalty  ⇔  call + postOp ≤ 10 × penalty + 9
    const call = 10n * args.penalty + 9n - args.paymasterPostOpGasLimit;
    return call < 0n ? -1n : call;
  }
  const left = args.penalty - partV08(args.paymasterPostOpGasLimit);
  if (left < 0n) return -1n;
  // Up to the threshold a callGasLimit pays no penalty at all.
  const call = 10n * left + 9n;
  return call > PENALTY_THRESHOLD ? call : PENALTY_THRESHOLD;
}
