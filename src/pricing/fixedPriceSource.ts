import { decimalToFixed } from './decimal.js';
import type { PriceSource } from './priceSource.js';

/**
 * A constant price, for the dev chain and for tests: it is always fresh, as of the moment it is read.
 * `usd` is a decimal string ("1.00", "3000"); config validation guarantees it is positive with at most 18
 * fractional digits, and this throws rather than price anything with a value it cannot represent exactly.
 */
export function fixedPriceSource(args: { usd: string; now: () => number }): PriceSource {
  const usdE18 = decimalToFixed(args.usd, 18);
  if (usdE18 === undefined || usdE18 <= 0n || decimalToFixed(args.usd, 19) !== usdE18 * 10n) {
    throw new Error(`a fixed price must be a positive decimal with at most 18 fractional digits, got "${args.usd}"`);
  }
  return {
    key: `fixed:${usdE18}`,
    label: `fixed ${args.usd} USD`,
    maxAgeMs: Number.POSITIVE_INFINITY,
    read: async () => ({ usdE18, updatedAtMs: args.now() }),
  };
}
