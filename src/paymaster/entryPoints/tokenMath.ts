import { ValidationError } from '../../errors/PatronError.js';
import type { GasLimits } from './entryPointModule.js';
import { VERIFICATION_GAS_MULTIPLIER_V06 } from './v06/prefundV06.js';

/**
 * The token mode's arithmetic, in bigint, shared by quotes and signing; it mirrors contracts/PatronPaymaster.sol
 * (the contract tests check every value against what the chain charged). docs/guides/token-mode.md, "The arithmetic".
 *
 *   maxGas       = callGasLimit + 3 × verificationGasLimit + preVerificationGas + POST_OP_OVERHEAD
 *                  (EntryPoint v0.6 prefunds verificationGasLimit three times when a paymaster is used: the
 *                  account's and the paymaster's validation, and postOp)
 *   maxTokenCost = ceil(maxGas × maxFeePerGas × exchangeRate × priceMarkup / (1e18 × 1e6))
 *   charge       = min(maxTokenCost, ceil((actualGasCost + POST_OP_OVERHEAD × gasPrice) × exchangeRate × priceMarkup / 1e24))
 *
 * exchangeRate: token base units per 1 native coin (1e18 wei); priceMarkup: parts per million (1e6 = no premium).
 * Every division rounds up: the paymaster is never short by a rounding.
 */

/** Gas the token mode's postOp (and the EntryPoint after it) uses beyond actualGasCost; the contract's constant. */
export const POST_OP_OVERHEAD = 50_000n;
export const MIN_PRICE_MARKUP = 1_000_000;
export const MAX_PRICE_MARKUP = 2_000_000;
const SCALE = 10n ** 24n; // 1e18 (wei per native coin) × 1e6 (markup scale)
const MAX_UINT128 = (1n << 128n) - 1n;

export interface TokenPrice {
  readonly exchangeRate: bigint;
  readonly priceMarkup: number;
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

/** The most gas the EntryPoint can charge the paymaster for an op with these limits, plus the postOp overhead. */
export function maxGasV06(limits: GasLimits): bigint {
  return (
    limits.callGasLimit +
    VERIFICATION_GAS_MULTIPLIER_V06 * limits.verificationGasLimit +
    limits.preVerificationGas +
    POST_OP_OVERHEAD
  );
}

/** Native wei → token base units at the price, marked up, rounded up. */
export function weiToTokenUnits(wei: bigint, price: TokenPrice): bigint {
  if (price.priceMarkup < MIN_PRICE_MARKUP || price.priceMarkup > MAX_PRICE_MARKUP) {
    throw new ValidationError(`priceMarkup must be within ${MIN_PRICE_MARKUP}..${MAX_PRICE_MARKUP}`);
  }
  return weiToTokenUnitsAt(wei, price.exchangeRate * BigInt(price.priceMarkup));
}

/**
 * The same conversion with `exchangeRate × priceMarkup` already multiplied and its markup already checked:
 * quotes compute the product once per price snapshot and convert one wei amount for every token.
 */
export function weiToTokenUnitsAt(wei: bigint, rateTimesMarkup: bigint): bigint {
  return ceilDiv(wei * rateTimesMarkup, SCALE);
}

/**
 * `exchangeRate × priceMarkup` in the exchange rate's own unit (token base units per 1e18 wei), rounded up: for
 * clients that convert wei themselves (pimlico_getTokenQuotes), so that their conversion includes the markup.
 */
export function markedUpExchangeRate(price: TokenPrice): bigint {
  return ceilDiv(price.exchangeRate * BigInt(price.priceMarkup), BigInt(MIN_PRICE_MARKUP));
}

/** The signed cap of an op: what it costs in the token when every gas limit is used at maxFeePerGas. */
export function maxTokenCostV06(limits: GasLimits, maxFeePerGas: bigint, price: TokenPrice): bigint {
  return maxTokenCostOf(maxGasV06(limits) * maxFeePerGas, price);
}

/** The signed cap for a maximum charge in wei (the EntryPoint module's maxChargeWei): converted, rounded up. */
export function maxTokenCostOf(maxChargeWei: bigint, price: TokenPrice): bigint {
  const cost = weiToTokenUnits(maxChargeWei, price);
  if (cost > MAX_UINT128) throw new ValidationError('the maximum token cost does not fit uint128');
  return cost;
}

/** What the contract's postOp charges (for tests and estimates): actual cost + overhead, capped. */
export function tokenCharge(args: {
  actualGasCost: bigint;
  gasPrice: bigint;
  price: TokenPrice;
  maxTokenCost: bigint;
}): bigint {
  const charge = weiToTokenUnits(args.actualGasCost + POST_OP_OVERHEAD * args.gasPrice, args.price);
  // biome-ignore lint/complexity/useMathMinMax: bigint, which Math.min does not take
  return charge > args.maxTokenCost ? args.maxTokenCost : charge;
}

/** The gas price the EntryPoint v0.6 uses for an op: min(maxFeePerGas, maxPriorityFeePerGas + basefee). */
export function userOpGasPrice(maxFeePerGas: bigint, maxPriorityFeePerGas: bigint, baseFee: bigint): bigint {
  if (maxFeePerGas === maxPriorityFeePerGas) return maxFeePerGas;
  const withBase = maxPriorityFeePerGas + baseFee;
  return withBase < maxFeePerGas ? withBase : maxFeePerGas;
}
