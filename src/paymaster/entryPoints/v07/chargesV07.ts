import { ValidationError } from '../../../errors/PatronError.js';
import { type TokenPrice, weiToTokenUnits } from '../tokenMath.js';
import { type EntryPointVersionV07, type GasCapsV07, MAX_UINT128 } from './patronPaymasterV07.js';

/**
 * What an op on PatronPaymasterV07 can cost: the EntryPoint's prefund at the signed caps, the unused-gas penalty it
 * can add after postOp (v0.7's rule, v0.8+'s threshold), and the token mode's charge and signed maximum, as the
 * contract computes them.
 */

/** The contract's POST_OP_OVERHEAD: gas postOp and the EntryPoint after it use, beyond postOp's actualGasCost. */
export const POST_OP_OVERHEAD_V07 = 50_000n;
const PENALTY_GAS_THRESHOLD = 40_000n;

/**
 * The contract's `maxPenaltyGas`: the most unused-gas penalty the EntryPoint can add after postOp, beyond the
 * actualGasCost postOp was given. v0.7: 10 % of callGasLimit + paymasterPostOpGasLimit (all charged after
 * postOp). v0.8/v0.9: the execution penalty is already in postOp's actualGasCost, and the postOp penalty applies
 * only when more than 40,000 gas of the postOp limit is unused, so 10 % of paymasterPostOpGasLimit above that.
 */
export function maxPenaltyGas(args: {
  readonly callGasLimit: bigint;
  readonly paymasterPostOpGasLimit: bigint;
  readonly version: EntryPointVersionV07;
}): bigint {
  if (args.version === '0.7') return (args.callGasLimit + args.paymasterPostOpGasLimit) / 10n;
  return args.paymasterPostOpGasLimit > PENALTY_GAS_THRESHOLD ? args.paymasterPostOpGasLimit / 10n : 0n;
}

/** What the signature bounds the op's gas by: the three caps and the paymaster's own two limits (signed exactly). */
export interface SignedGasV07 extends GasCapsV07 {
  readonly paymasterVerificationGasLimit: bigint;
  readonly paymasterPostOpGasLimit: bigint;
}

/**
 * The EntryPoint's prefund at the caps, the most an op signed with them can take from the deposit: (caps +
 * paymaster limits) at maxFeePerGas. The op's own limits are at most the caps, its prefund at most this, and the
 * unused-gas penalty is charged within the prefund, never above.
 */
export function worstCaseCostV07(gas: SignedGasV07, maxFeePerGas: bigint): bigint {
  return (
    (gas.maxVerificationGasLimit +
      gas.maxCallGasLimit +
      gas.paymasterVerificationGasLimit +
      gas.paymasterPostOpGasLimit +
      gas.maxPreVerificationGas) *
    maxFeePerGas
  );
}

/**
 * What the contract's postOp charges: actualGasCost (the figure postOp is given) plus POST_OP_OVERHEAD and the
 * penalty bound at the op's fee per gas, converted and marked up, rounded up, capped by the signed maximum.
 */
export function tokenChargeV07(args: {
  readonly actualGasCost: bigint;
  readonly actualUserOpFeePerGas: bigint;
  readonly maxPenaltyGas: bigint;
  readonly price: TokenPrice;
  readonly maxTokenCost: bigint;
}): bigint {
  const wei = args.actualGasCost + (POST_OP_OVERHEAD_V07 + args.maxPenaltyGas) * args.actualUserOpFeePerGas;
  const charge = weiToTokenUnits(wei, args.price);
  // biome-ignore lint/complexity/useMathMinMax: bigint, which Math.min does not take
  return charge > args.maxTokenCost ? args.maxTokenCost : charge;
}

/**
 * A cap no charge of an op within the gas caps can exceed: postOp's actualGasCost is at most the prefund, itself
 * at most worstCaseCostV07, and the penalty bound grows with callGasLimit (v0.7), here at maxCallGasLimit; so the
 * charge formula at worstCaseCostV07 and maxFeePerGas bounds every outcome. The service signs it as maxTokenCost.
 */
export function maxTokenCostV07(
  gas: SignedGasV07,
  maxFeePerGas: bigint,
  price: TokenPrice,
  version: EntryPointVersionV07,
): bigint {
  const penalty = maxPenaltyGas({
    callGasLimit: gas.maxCallGasLimit,
    paymasterPostOpGasLimit: gas.paymasterPostOpGasLimit,
    version,
  });
  const cost = weiToTokenUnits(
    worstCaseCostV07(gas, maxFeePerGas) + (POST_OP_OVERHEAD_V07 + penalty) * maxFeePerGas,
    price,
  );
  if (cost > MAX_UINT128) throw new ValidationError('the maximum token cost does not fit uint128');
  return cost;
}
