import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fixedPriceSource } from './fixedPriceSource.js';

describe('fixedPriceSource', () => {
  test('reads the configured price exactly, fresh as of now, and never goes stale', async () => {
    const source = fixedPriceSource({ usd: '3000.25', now: () => 42_000 });
    assert.deepEqual(await source.read(), { usdE18: 3_000_250_000_000_000_000_000n, updatedAtMs: 42_000 });
    assert.equal(source.maxAgeMs, Number.POSITIVE_INFINITY);
    assert.equal(source.key, fixedPriceSource({ usd: '3000.250', now: () => 0 }).key);
    assert.notEqual(source.key, fixedPriceSource({ usd: '1', now: () => 0 }).key);
  });

  test('refuses a value it cannot represent exactly or that is not positive', () => {
    for (const usd of ['0', '-1', 'abc', '0.0000000000000000001']) {
      assert.throws(() => fixedPriceSource({ usd, now: Date.now }), /positive decimal/, usd);
    }
  });
});
