import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Address, keccak256 } from 'viem';
import { opKey, opKeyWith } from './opKey.js';

const viemBytes = (data: Uint8Array) => keccak256(data, 'bytes');

test('opKeyWith hashes the same preimage as the ABI-encoded opKey', () => {
  const cases: { chainId: number; entryPoint: Address; sender: Address; nonce: bigint }[] = [
    {
      chainId: 31337,
      entryPoint: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
      sender: '0x1234567890AbcdEF1234567890aBcdef12345678',
      nonce: 0n,
    },
    {
      chainId: 8453,
      entryPoint: '0x433709009B8330FDa32311DF1C2AFA402eD8D009',
      sender: '0xffffffffffffffffffffffffffffffffffffffff',
      // A 192-bit nonce key and a sequence: every limb of the word is used.
      nonce: (0xdeadbeefn << 64n) | 7n | (1n << 255n),
    },
    {
      chainId: 2 ** 40,
      entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789',
      sender: '0x0000000000000000000000000000000000000001',
      nonce: 2n ** 64n,
    },
  ];
  for (const c of cases) assert.equal(opKeyWith(viemBytes, c), opKey(c).toLowerCase());
});

test('opKeyWith refuses what opKey could not encode', () => {
  const base = { chainId: 1, entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789' as Address, nonce: 0n };
  assert.throws(() => opKeyWith(viemBytes, { ...base, sender: '0x12' }), RangeError);
  assert.throws(
    () => opKeyWith(viemBytes, { ...base, sender: '0x1234567890AbcdEF1234567890aBcdef12345678', nonce: -1n }),
    RangeError,
  );
});
