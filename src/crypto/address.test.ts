import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { getAddress } from 'viem';
import { ADDRESS_CHECKSUM_KECCAK, toAddress } from './address.js';

test('addresses are checksummed exactly as viem does, with the native keccak on this machine', () => {
  assert.equal(ADDRESS_CHECKSUM_KECCAK, 'native');
  for (let i = 0; i < 2000; i++) {
    const lower = `0x${randomBytes(20).toString('hex')}`;
    const expected = getAddress(lower);
    assert.equal(toAddress(lower), expected);
    assert.equal(toAddress(lower.toUpperCase().replace('0X', '0x')), expected);
    assert.equal(toAddress(expected), expected, 'memoised');
  }
  for (const edge of [`0x${'0'.repeat(40)}`, `0x${'f'.repeat(40)}`, `0x${'a'.repeat(40)}`]) {
    assert.equal(toAddress(edge), getAddress(edge));
  }
});
