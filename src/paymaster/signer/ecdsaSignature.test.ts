import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, recoverAddress } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { jsCryptoBackend, loadNativeCryptoBackend } from '../../crypto/cryptoBackend.js';
import {
  addressOfPublicKey,
  ethereumSignature,
  publicKeyFromEcPoint,
  publicKeyFromSpki,
  rsFromDer,
  rsFromRaw,
} from './ecdsaSignature.js';

const HALF_N = secp256k1.Point.CURVE().n >> 1n;
const backends = [jsCryptoBackend, loadNativeCryptoBackend()].filter((b) => b !== undefined);

for (const crypto of backends) {
  test(`${crypto.name}: a device's (r, s), high or low, becomes r ‖ s ‖ v with low s recovering to the key`, async () => {
    const key = secp256k1.utils.randomSecretKey();
    const publicKey = secp256k1.getPublicKey(key, false);
    const address = privateKeyToAddress(bytesToHex(key));
    let high = 0;
    for (let i = 0; i < 32; i++) {
      const digest = randomBytes(32);
      const der = secp256k1.sign(digest, key, { prehash: false, lowS: false, format: 'der' });
      const { r, s } = rsFromDer(der);
      if (s > HALF_N) high++;
      const sig = ethereumSignature({ digest, r, s, publicKey, crypto });
      assert.ok(BigInt(bytesToHex(sig.subarray(32, 64))) <= HALF_N);
      assert.equal(await recoverAddress({ hash: bytesToHex(digest), signature: bytesToHex(sig) }), address);
      // The same from the raw r ‖ s form (PKCS#11's CKM_ECDSA).
      const raw = secp256k1.Signature.fromBytes(der, 'der').toBytes('compact');
      assert.deepEqual(ethereumSignature({ digest, ...rsFromRaw(raw), publicKey, crypto }), sig);
    }
    assert.ok(high > 0, 'high s was exercised');
  });
}

test('a signature by another key is refused, not given a wrong v', () => {
  const digest = randomBytes(32);
  const der = secp256k1.sign(digest, secp256k1.utils.randomSecretKey(), { prehash: false, format: 'der' });
  const publicKey = secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), false);
  assert.throws(
    () => ethereumSignature({ digest, ...rsFromDer(der), publicKey, crypto: jsCryptoBackend }),
    /does not recover to the signer key/,
  );
});

test('public keys: a secp256k1 SPKI (as OpenSSL and KMS write it) and CKA_EC_POINT; another curve is refused', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const point = publicKeyFromSpki(spki);
  const d = privateKey.export({ format: 'jwk' }).d ?? '';
  const expected = privateKeyToAddress(bytesToHex(Buffer.from(d, 'base64url')));
  assert.equal(addressOfPublicKey(point, jsCryptoBackend), expected);
  // CKA_EC_POINT: a DER OCTET STRING around the point, or the bare point.
  assert.deepEqual(publicKeyFromEcPoint(Buffer.concat([Buffer.from([0x04, 0x41]), point])), point);
  assert.deepEqual(publicKeyFromEcPoint(point), point);
  const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({
    type: 'spki',
    format: 'der',
  });
  assert.throws(() => publicKeyFromSpki(p256), /not on secp256k1.*ECC_SECG_P256K1/);
  assert.throws(() => rsFromDer(Buffer.from('3006020101', 'hex')), /truncated DER/);
  assert.throws(() => rsFromRaw(new Uint8Array(63)), /64-byte/);
});
