import { decimalToFixed } from './decimal.js';

/** The paymaster contract stores exchange rates as uint128. */
export const MAX_UINT128 = (1n << 128n) - 1n;
const E18 = 10n ** 18n;

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/**
 * Token base units per 1 native coin (1e18 wei): nativeUsd * 10^decimals / tokenUsd, rounded up so a rounding
 * error costs the user at most one base unit per native coin and never costs the paymaster.
 * Both prices are positive 18-decimal USD amounts.
 */
export function exchangeRate(args: { nativeUsdE18: bigint; tokenUsdE18: bigint; decimals: number }): bigint {
  if (args.nativeUsdE18 <= 0n || args.tokenUsdE18 <= 0n) throw new RangeError('prices must be positive');
  return ceilDiv(args.nativeUsdE18 * 10n ** BigInt(args.decimals), args.tokenUsdE18);
}

/**
 * The price multiplier in parts per million for a premium percentage ("10" -> 1_100_000): 1 % is 10_000 ppm,
 * and a premium finer than 1 ppm ("0.00001") rounds up, in the paymaster's favour.
 */
export function priceMarkupFromPremium(premiumPercentage: string): number {
  const premiumE18 = decimalToFixed(premiumPercentage, 18);
  if (premiumE18 === undefined || premiumE18 > 100n * E18) {
    throw new RangeError(`premiumPercentage must be a decimal from 0 to 100, got "${premiumPercentage}"`);
  }
  // premium% * 10_000 ppm/% = premiumE18 * 10_000 / 1e18 = premiumE18 / 1e14.
  return 1_000_000 + Number(ceilDiv(premiumE18, 10n ** 14n));
}
