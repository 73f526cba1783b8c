import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { bytesToHex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { jsCryptoBackend } from '../../crypto/cryptoBackend.js';
import { decryptKeystore, encryptKeystore, KeystoreError } from './keystore.js';
import { createPaymasterSigner, loadSignerKey } from './paymasterSigner.js';

const crypto = jsCryptoBackend;

test('decrypts the Web3 Secret Storage v3 test vector (PBKDF2)', () => {
  const json = {
    version: 3,
    crypto: {
      cipher: 'aes-128-ctr',
      cipherparams: { iv: '6087dab2f9fdbbfaddc31a909735c1e6' },
      ciphertext: '5318b4d5bcd28de64ee5559e671353e16f075ecae9f99c7a79a38af5f869aa46',
      kdf: 'pbkdf2',
      kdfparams: {
        c: 262144,
        dklen: 32,
        prf: 'hmac-sha256',
        salt: 'ae3cd4e7013836a3df6bd7241b12db061dbe2c6785853cce422d148a624ce0bd',
      },
      mac: '517ead924a9d0dc3124507e3393d175ce3ff7c1e96529c6c555ce9e51205e9b2',
    },
  };
  const key = decryptKeystore({ json, password: 'testpassword', crypto });
  assert.equal(bytesToHex(key), '0x7a28b5ba57c53603b0b07b56bba752f7784bf506fa95edc395f5cf6c7514fe9d');
  assert.throws(() => decryptKeystore({ json, password: 'wrong', crypto }), KeystoreError);
});

test('scrypt round trip; wrong password and tampered ciphertext are refused', () => {
  const privateKey = globalThis.crypto.getRandomValues(new Uint8Array(32));
  const address = privateKeyToAddress(bytesToHex(privateKey));
  const ks = encryptKeystore({ privateKey, password: 'correct horse', address, crypto, scryptN: 2 ** 10 });
  assert.equal(ks.address, address.slice(2).toLowerCase());
  assert.deepEqual(decryptKeystore({ json: ks, password: 'correct horse', crypto }), privateKey);
  assert.throws(() => decryptKeystore({ json: ks, password: 'battery staple', crypto }), /wrong keystore password/);
  const tampered = { ...ks, crypto: { ...ks.crypto, ciphertext: `00${ks.crypto.ciphertext.slice(2)}` } };
  assert.throws(() => decryptKeystore({ json: tampered, password: 'correct horse', crypto }), /MAC mismatch/);
  assert.throws(() => decryptKeystore({ json: { version: 1 }, password: 'x', crypto }), /not a version 3 keystore/);
});

test('signer keys: from hex, from a keystore file, generated once into the data directory (0600)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-signer-'));
  try {
    const hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
    assert.equal(bytesToHex(loadSignerKey({ kind: 'privateKey', privateKeyHex: hex }, crypto)), hex);
    assert.throws(() => loadSignerKey({ kind: 'privateKey', privateKeyHex: '0x1234' }, crypto), /32 bytes/);

    const file = path.join(dir, 'ks.json');
    const privateKey = globalThis.crypto.getRandomValues(new Uint8Array(32));
    fs.writeFileSync(
      file,
      JSON.stringify(encryptKeystore({ privateKey, password: 'pw', address: '0x00', crypto, scryptN: 2 ** 10 })),
    );
    assert.deepEqual(loadSignerKey({ kind: 'keystore', file, password: 'pw' }, crypto), privateKey);

    const first = loadSignerKey({ kind: 'dataDir', dataDir: path.join(dir, 'data') }, crypto);
    const second = loadSignerKey({ kind: 'dataDir', dataDir: path.join(dir, 'data') }, crypto);
    assert.deepEqual(first, second);
    assert.equal(fs.statSync(path.join(dir, 'data', 'signer.key')).mode & 0o777, 0o600);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a signer never reveals its key when logged or serialised', async () => {
  const hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
  const signer = createPaymasterSigner({ privateKey: Buffer.from(hex.slice(2), 'hex'), crypto });
  const { inspect } = await import('node:util');
  for (const text of [
    JSON.stringify(signer),
    inspect(signer, { depth: 10, showHidden: true }),
    String(Object.values(signer)),
  ]) {
    assert.ok(!text.includes(hex.slice(2)), text);
    assert.ok(!text.includes('89dc9e86'), text);
  }
  assert.equal(signer.address, privateKeyToAddress(hex));
});
