import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  maxGasV06,
  maxTokenCostV06,
  POST_OP_OVERHEAD,
  tokenCharge,
  userOpGasPrice,
  weiToTokenUnits,
} from './tokenMath.js';

const usdc = { exchangeRate: 3_000_000_000n, priceMarkup: 1_100_000 };

test('the worked example of docs/guides/token-mode.md', () => {
  const quoted = { callGasLimit: 150_000n, verificationGasLimit: 620_000n, preVerificationGas: 66_000n };
  assert.equal(maxGasV06(quoted), 2_126_000n);
  assert.equal(maxTokenCostV06(quoted, 2_000_000_000n, usdc), 14_031_600n);
  const charge = tokenCharge({
    actualGasCost: 400_000n * 1_500_000_000n,
    gasPrice: 1_500_000_000n,
    price: usdc,
    maxTokenCost: 14_031_600n,
  });
  assert.equal(charge, 2_227_500n);
});

test('rounds up: one wei is never free, and the cap bounds the charge', () => {
  assert.equal(weiToTokenUnits(1n, usdc), 1n);
  assert.equal(weiToTokenUnits(0n, usdc), 0n);
  assert.equal(tokenCharge({ actualGasCost: 10n ** 18n, gasPrice: 1n, price: usdc, maxTokenCost: 7n }), 7n);
  assert.equal(POST_OP_OVERHEAD, 50_000n);
});

test('refuses a markup outside 1e6..2e6, as the contract does', () => {
  assert.throws(() => weiToTokenUnits(1n, { exchangeRate: 1n, priceMarkup: 999_999 }), /priceMarkup/);
  assert.throws(() => weiToTokenUnits(1n, { exchangeRate: 1n, priceMarkup: 2_000_001 }), /priceMarkup/);
});

test('the EntryPoint v0.6 gas price: min(maxFee, priority + basefee), or maxFee when both fees are equal', () => {
  assert.equal(userOpGasPrice(10n, 1n, 5n), 6n);
  assert.equal(userOpGasPrice(10n, 8n, 5n), 10n);
  assert.equal(userOpGasPrice(7n, 7n, 100n), 7n);
});
