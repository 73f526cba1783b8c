import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exchangeRate, MAX_UINT128, priceMarkupFromPremium } from './exchangeRate.js';

const E18 = 10n ** 18n;

describe('exchangeRate', () => {
  test('token base units per native coin: 3000 USD ETH, 1 USD 6-decimal USDC -> 3000e6', () => {
    assert.equal(exchangeRate({ nativeUsdE18: 3000n * E18, tokenUsdE18: E18, decimals: 6 }), 3_000_000_000n);
    assert.equal(exchangeRate({ nativeUsdE18: 3000n * E18, tokenUsdE18: 2n * E18, decimals: 18 }), 1500n * E18);
  });

  test('rounds up, in the paymaster favour', () => {
    // 1 / 3 * 1e6 = 333333.33… -> 333334
    assert.equal(exchangeRate({ nativeUsdE18: E18, tokenUsdE18: 3n * E18, decimals: 6 }), 333_334n);
    // Exact quotients are not bumped.
    assert.equal(exchangeRate({ nativeUsdE18: 3n * E18, tokenUsdE18: 3n * E18, decimals: 6 }), 1_000_000n);
  });

  test('can exceed uint128, which the catalog then refuses', () => {
    const rate = exchangeRate({ nativeUsdE18: 3000n * E18, tokenUsdE18: 1n, decimals: 36 });
    assert.ok(rate > MAX_UINT128);
    assert.equal(MAX_UINT128, 2n ** 128n - 1n);
  });

  test('non-positive prices throw', () => {
    assert.throws(() => exchangeRate({ nativeUsdE18: 0n, tokenUsdE18: E18, decimals: 6 }), RangeError);
    assert.throws(() => exchangeRate({ nativeUsdE18: E18, tokenUsdE18: 0n, decimals: 6 }), RangeError);
  });
});

describe('priceMarkupFromPremium', () => {
  test('1 % is 10_000 ppm on top of 1_000_000', () => {
    assert.equal(priceMarkupFromPremium('0'), 1_000_000);
    assert.equal(priceMarkupFromPremium('10'), 1_100_000);
    assert.equal(priceMarkupFromPremium('0.5'), 1_005_000);
    assert.equal(priceMarkupFromPremium('100'), 2_000_000);
  });

  test('a premium finer than 1 ppm rounds up', () => {
    assert.equal(priceMarkupFromPremium('0.00001'), 1_000_001);
    assert.equal(priceMarkupFromPremium('0.0001'), 1_000_001);
    assert.equal(priceMarkupFromPremium('0.00011'), 1_000_002);
  });

  test('out of range or malformed premiums throw', () => {
    assert.throws(() => priceMarkupFromPremium('100.01'), RangeError);
    assert.throws(() => priceMarkupFromPremium('-1'), RangeError);
    assert.throws(() => priceMarkupFromPremium('ten'), RangeError);
  });
});
