import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytesToHex, hexToBytes, keccak256, recoverAddress } from 'viem';
import { privateKeyToAccount, privateKeyToAddress, sign } from 'viem/accounts';
import { jsCryptoBackend, loadNativeCryptoBackend, selectCryptoBackend } from './cryptoBackend.js';

const KEY = '0xac0974bec39a17e36ba4a91b4d41c1b46c26c35b6f1b1b9e6a8b1f1f8d4e2f11' as const;

const backends = [jsCryptoBackend, loadNativeCryptoBackend()].filter((b) => b !== undefined);

test('the native backend loads on this machine (the production target)', () => {
  const { backend, reason } = selectCryptoBackend();
  assert.equal(backend.name, 'native', reason);
});

for (const backend of backends) {
  test(`${backend.name}: keccak256 and signatures equal viem's, and recover to the key's address`, async () => {
    for (let i = 0; i < 20; i++) {
      const data = crypto.getRandomValues(new Uint8Array(i * 7));
      assert.equal(bytesToHex(backend.keccak256(data)), keccak256(data));
      const digest = hexToBytes(keccak256(data));
      const sig = backend.signDigest(digest, hexToBytes(KEY));
      assert.equal(sig.length, 65);
      assert.equal(bytesToHex(sig), await sign({ hash: bytesToHex(digest), privateKey: KEY, to: 'hex' }));
      assert.equal(
        await recoverAddress({ hash: bytesToHex(digest), signature: bytesToHex(sig) }),
        privateKeyToAddress(KEY),
      );
      const publicKey = backend.recoverPublicKey({ digest, rs: sig.subarray(0, 64), recovery: (sig[64] ?? 0) - 27 });
      assert.equal(bytesToHex(publicKey ?? new Uint8Array()), privateKeyToAccount(KEY).publicKey);
    }
  });
}
