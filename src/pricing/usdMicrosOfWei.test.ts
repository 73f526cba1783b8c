import assert from 'node:assert/strict';
import { test } from 'node:test';
import { usdMicrosOfWei } from './usdMicrosOfWei.js';

test('usdMicrosOfWei: wei at a price per whole coin, rounded up to the micro-dollar', () => {
  assert.equal(usdMicrosOfWei(10n ** 18n, 2_500_000_000n), 2_500_000_000n, 'one coin at $2,500');
  assert.equal(usdMicrosOfWei(4n * 10n ** 14n, 2_500_000_000n), 1_000_000n, 'exact: $1');
  assert.equal(usdMicrosOfWei(4n * 10n ** 14n + 1n, 2_500_000_000n), 1_000_001n, 'a wei more rounds up');
  assert.equal(usdMicrosOfWei(1n, 1n), 1n);
  assert.equal(usdMicrosOfWei(0n, 2_500_000_000n), 0n);
  assert.equal(usdMicrosOfWei(10n ** 30n, 10n ** 12n), 10n ** 24n, 'beyond 64 bits');
  assert.throws(() => usdMicrosOfWei(-1n, 1n), RangeError);
});
