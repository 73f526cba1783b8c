import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { QuotedToken, TokenQuotes } from '../../paymaster/token/quotedTokens.js';
import type { QuotableToken } from '../../tokens/tokenCatalog.js';
import { biconomyQuotesResult, tokenUnitsToNumberUp } from './biconomyQuotes.js';

const usdc: QuotableToken = {
  address: '0x1111111111111111111111111111111111111111',
  symbol: 'USDC',
  decimals: 6,
  logoUrl: 'https://example.test/usdc.png',
  premiumPercentage: '10',
  priceMarkup: 1_100_000,
  exchangeRate: 3_000_000_000n,
  tokenUsdE18: 10n ** 18n,
};
/** A rate beyond 2^53 is not exact in a double: the wire carries it as a decimal string. */
const big: QuotableToken = {
  ...usdc,
  address: '0x2222222222222222222222222222222222222222',
  symbol: 'BIG',
  decimals: 18,
  logoUrl: '',
  premiumPercentage: '0.5',
  priceMarkup: 1_005_000,
  exchangeRate: 3_000n * 10n ** 18n,
  tokenUsdE18: 10n ** 15n,
};
const quoted = (token: QuotableToken): QuotedToken => ({
  token,
  rateTimesMarkup: token.exchangeRate * BigInt(token.priceMarkup),
  unitScale: 10n ** BigInt(token.decimals),
});

test('the Biconomy fee quotes: maxGasFee and its USD value rounded up, the rate a number while exact', () => {
  const q: TokenQuotes = {
    paymasterAddress: '0x3333333333333333333333333333333333333333',
    // 0.001 ETH: 3 USDC at 3000 USDC/ETH, 3.3 with the 10 % markup.
    maxChargeWei: 10n ** 15n,
    validUntil: 1_700_000_000,
    tokens: [quoted(usdc), quoted(big)],
    unsupportedTokens: ['0xabc'],
  };
  const wire = biconomyQuotesResult(q);
  assert.deepStrictEqual(wire, {
    mode: 'ERC20',
    MODE: 'ERC20',
    paymasterAddress: q.paymasterAddress,
    feeQuotes: [
      {
        symbol: 'USDC',
        decimal: 6,
        tokenAddress: usdc.address,
        maxGasFee: 3.3,
        maxGasFeeUSD: 3.3,
        exchangeRate: 3_000_000_000,
        premiumPercentage: 10,
        validUntil: 1_700_000_000,
        logoUrl: usdc.logoUrl,
      },
      {
        symbol: 'BIG',
        decimal: 18,
        tokenAddress: big.address,
        maxGasFee: 3.015,
        maxGasFeeUSD: 0.003015,
        exchangeRate: '3000000000000000000000',
        premiumPercentage: 0.5,
        validUntil: 1_700_000_000,
        logoUrl: '',
      },
    ],
    unsupportedTokens: ['0xabc'],
  });
  // The per-token wire fields are made once per catalog token: the same answer again.
  assert.deepStrictEqual(biconomyQuotesResult(q), wire);
});

test('maxGasFee survives the client’s ceil(maxGasFee × 10^decimal) for any amount and decimals', () => {
  let seed = 12345n;
  const next = () => {
    seed = (seed * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
    return seed;
  };
  for (let i = 0; i < 5000; i++) {
    const decimals = [0, 6, 8, 18, 24][i % 5] ?? 18;
    const units = ((next() * next()) % 10n ** BigInt(8 + (i % 22))) + 1n;
    const n = tokenUnitsToNumberUp(units, decimals);
    const approved = BigInt(Math.ceil(n * 10 ** decimals));
    assert.ok(approved >= units, `${units} @${decimals}: ${n} approves ${approved}`);
    // At most one base unit or 1e-13 of the amount more than needed (the double's own rounding).
    const over = approved - units;
    assert.ok(over <= 1n || Number(over) / Number(units) < 1e-13, `${units} @${decimals}: over by ${over}`);
  }
});
