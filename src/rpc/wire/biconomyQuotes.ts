import type { Address } from 'viem';
import {
  type QuotedToken,
  quotedTokenCost,
  quotedTokenUsdE18,
  type TokenQuotes,
} from '../../paymaster/token/quotedTokens.js';
import type { QuotableToken } from '../../tokens/tokenCatalog.js';

/**
 * The token mode's fee quotes in the Biconomy dialect (spec §2.7, `pm_getFeeQuoteOrData` with mode ERC20): per
 * token its maximum charge as a decimal number of whole tokens rounded up (`maxGasFee`, which the SDK approves as
 * `ceil(maxGasFee × 10^decimal)`), its USD value rounded up to 6 decimals, the exchange rate and premium as numbers.
 */
export interface FeeQuote {
  readonly symbol: string;
  readonly decimal: number;
  readonly tokenAddress: Address;
  /** Token units (decimal fraction), rounded up so that ceil(maxGasFee × 10^decimal) covers the charge. */
  readonly maxGasFee: number;
  readonly maxGasFeeUSD: number;
  /** Token base units per 1 native coin: a number while exact in a double, else a decimal string. */
  readonly exchangeRate: number | string;
  readonly premiumPercentage: number;
  readonly validUntil: number;
  readonly logoUrl: string;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A token's fields whose wire form is the same in every quote, made once per catalog token (tokens are immutable). */
interface TokenWire {
  readonly exchangeRate: number | string;
  readonly premiumPercentage: number;
}

const tokenWires = new WeakMap<QuotableToken, TokenWire>();

function tokenWire(t: QuotableToken): TokenWire {
  let w = tokenWires.get(t);
  if (w === undefined) {
    w = {
      exchangeRate: t.exchangeRate <= MAX_SAFE ? Number(t.exchangeRate) : t.exchangeRate.toString(10),
      premiumPercentage: Number(t.premiumPercentage),
    };
    tokenWires.set(t, w);
  }
  return w;
}

/** The quotes with `mode` and `MODE` (every Biconomy SDK reads lower-case `mode`, the spec writes `MODE`). */
export function biconomyQuotesResult(q: TokenQuotes) {
  return {
    mode: 'ERC20' as const,
    MODE: 'ERC20' as const,
    paymasterAddress: q.paymasterAddress,
    feeQuotes: q.tokens.map((t) => feeQuote(t, q.maxChargeWei, q.validUntil)),
    unsupportedTokens: q.unsupportedTokens,
  };
}

function feeQuote(p: QuotedToken, maxChargeWei: bigint, validUntil: number): FeeQuote {
  const t = p.token;
  const w = tokenWire(t);
  const maxTokenCost = quotedTokenCost(p, maxChargeWei);
  return {
    symbol: t.symbol,
    decimal: t.decimals,
    tokenAddress: t.address,
    maxGasFee: tokenUnitsToNumberUp(maxTokenCost, t.decimals),
    maxGasFeeUSD: usdNumberUp(quotedTokenUsdE18(p, maxTokenCost)),
    exchangeRate: w.exchangeRate,
    premiumPercentage: w.premiumPercentage,
    validUntil,
    logoUrl: t.logoUrl,
  };
}

/**
 * `units / 10^decimals` as the smallest double d (to 15 significant digits, rounded up) for which a client's
 * `Math.ceil(d * 10 ** decimals)` is at least `units`: Biconomy's SDK approves exactly that, so a value rounded
 * down by the double conversion would approve less than the quote requires.
 */
export function tokenUnitsToNumberUp(units: bigint, decimals: number): number {
  if (units === 0n) return 0;
  if (units <= MAX_SAFE && decimals <= 22) {
    // Both exact in a double: one division, checked the way the client will use it.
    const scale = 10 ** decimals;
    const value = Number(units) / scale;
    if (Math.ceil(value * scale) >= Number(units)) return value;
  }
  const digits = units.toString(10);
  const keep = 15;
  let mantissa = digits.length <= keep ? units : BigInt(digits.slice(0, keep));
  let exponent = digits.length <= keep ? 0 : digits.length - keep;
  if (exponent > 0 && BigInt(digits.slice(keep)) > 0n) mantissa += 1n;
  const scale = 10 ** decimals;
  for (;;) {
    const value = Number(`${mantissa}e${exponent - decimals}`);
    if (BigInt(Math.ceil(value * scale)) >= units) return value;
    mantissa += 1n;
    if (mantissa.toString(10).length > keep) {
      mantissa /= 10n;
      exponent += 1;
      mantissa += 1n;
    }
  }
}

/** A USD amount (18-decimal fixed point) as a number rounded up to 6 decimals. */
function usdNumberUp(usdE18: bigint): number {
  const micro = (usdE18 + 10n ** 12n - 1n) / 10n ** 12n;
  return Number(micro) / 1e6;
}
