import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bytesToHex, type Hex, recoverMessageAddress } from 'viem';
import { privateKeyToAccount, privateKeyToAddress } from 'viem/accounts';
import { selectCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { createTankSigners, type TankSignerRef, tankSignerRefSchema } from '../src/mee/tankSigner.js';
import { encryptKeystore } from '../src/paymaster/signer/keystore.js';
import { generateKey, openToken } from '../src/paymaster/signer/pkcs11Token.js';
import { type FakeKms, startFakeKms } from './helpers/fakeKms.js';
import { createSoftHsmToken } from './helpers/softHsm.js';

/**
 * A gas tank's owner key in each back end (src/mee/tankSigner.ts): a keystore file, a PKCS#11 token (SoftHSM2) and
 * AWS KMS (the real SDK against test/helpers/fakeKms.ts). Each signs the EIP-191 message over a raw 32-byte root, and
 * the signature recovers to the ref's address with viem; the keystore's equals viem's own local signMessage.
 */
const crypto = selectCryptoBackend().backend;
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
const randomRoot = (): Hex => bytesToHex(randomBytes(32));

let dir: string;
let kms: FakeKms;
let hsm: ReturnType<typeof createSoftHsmToken>;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-tank-signer-'));
  kms = await startFakeKms();
  process.env.AWS_ACCESS_KEY_ID = 'AKIDPATRONTEST';
  process.env.AWS_SECRET_ACCESS_KEY = 'patron-test-secret';
  hsm = createSoftHsmToken('patron-tanks');
});
after(async () => {
  await kms.close();
  hsm.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function keystoreRef(privateKey: Uint8Array, password = 'tank password'): TankSignerRef {
  const address = privateKeyToAddress(bytesToHex(privateKey));
  const file = path.join(dir, `${address}.json`);
  fs.writeFileSync(file, JSON.stringify(encryptKeystore({ privateKey, password, address, crypto, scryptN: 2 ** 10 })));
  const passwordFile = path.join(dir, `${address}.password`);
  fs.writeFileSync(passwordFile, `${password}\n`);
  return { kind: 'keystore', path: file, password: { file: passwordFile } };
}

/** Signs many roots and checks each: 65 bytes, s low, recovering to `address`; both recovery ids seen. */
async function assertSignsRoots(signer: { address: Hex; signRoot(root: Hex): Promise<Hex> }, address: Hex) {
  assert.equal(signer.address, address);
  const ids = new Set<number>();
  for (let i = 0; i < 24; i++) {
    const root = randomRoot();
    const signature = await signer.signRoot(root);
    assert.equal((signature.length - 2) / 2, 65);
    assert.ok(BigInt(`0x${signature.slice(66, 130)}`) <= HALF_N, 'low s (EIP-2)');
    ids.add(Number.parseInt(signature.slice(130), 16));
    assert.equal(await recoverMessageAddress({ message: { raw: root }, signature }), address);
  }
  assert.ok(ids.has(27) && ids.has(28), `both recovery ids occurred: ${[...ids]}`);
}

describe('the ref', () => {
  test('names a back end and the files of its secrets, never a key or a secret value', () => {
    const good: TankSignerRef[] = [
      { kind: 'keystore', path: '/k.json', password: { file: '/p' } },
      { kind: 'pkcs11', module: '/m.so', tokenLabel: 't', keyLabel: 'k', pin: { file: '/pin' }, sessions: 2 },
      { kind: 'kms', keyId: 'alias/tank', region: 'eu-west-1', endpoint: 'http://127.0.0.1:4566' },
    ];
    for (const ref of good) assert.deepEqual(tankSignerRefSchema.parse(JSON.parse(JSON.stringify(ref))), ref);
    const bad: unknown[] = [
      { kind: 'local', privateKey: `0x${'11'.repeat(32)}` },
      { kind: 'keystore', path: '/k.json', password: { file: '/p' }, privateKey: `0x${'11'.repeat(32)}` },
      { kind: 'keystore', path: '/k.json', password: { value: 'hunter2' } },
      { kind: 'keystore', path: '/k.json', password: 'hunter2' },
      { kind: 'pkcs11', module: '/m.so', tokenLabel: 't', keyLabel: 'k', pin: { value: '1234' } },
      { kind: 'keystore', path: 'relative.json', password: { file: '/p' } },
      { kind: 'kms', keyId: '' },
    ];
    for (const ref of bad) assert.equal(tankSignerRefSchema.safeParse(ref).success, false, JSON.stringify(ref));
  });
});

describe('keystore', () => {
  test('signs exactly what viem signMessage({ raw }) gives for the same key', async () => {
    const privateKey = randomBytes(32);
    const ref = keystoreRef(privateKey);
    const signers = createTankSigners({ crypto });
    try {
      const signer = await signers.signerFor(ref);
      const account = privateKeyToAccount(bytesToHex(privateKey));
      await assertSignsRoots(signer, account.address);
      for (let i = 0; i < 8; i++) {
        const root = randomRoot();
        assert.equal(await signer.signRoot(root), await account.signMessage({ message: { raw: root } }));
      }
    } finally {
      await signers.close();
    }
  });

  test('refuses anything but a 32-byte root', async () => {
    const signers = createTankSigners({ crypto });
    try {
      const signer = await signers.signerFor(keystoreRef(randomBytes(32)));
      for (const bad of ['0x1234', `0x${'ab'.repeat(33)}`, `0x${'zz'.repeat(32)}`, 'ab'.repeat(32)] as Hex[]) {
        await assert.rejects(signer.signRoot(bad), /32-byte Merkle root/, bad);
      }
    } finally {
      await signers.close();
    }
  });

  test('opens a ref once (whatever its fields’ order), retries a failed open, and is closed with the app', async () => {
    const privateKey = randomBytes(32);
    const ref = keystoreRef(privateKey);
    if (ref.kind !== 'keystore') throw new Error('unreachable');
    const signers = createTankSigners({ crypto });
    const first = await signers.signerFor(ref);
    // The same ref read back from a JSON column with its keys in another order: no second decryption.
    const reordered = JSON.parse(JSON.stringify({ password: ref.password, path: ref.path, kind: 'keystore' }));
    fs.writeFileSync(ref.path, 'not a keystore any more');
    const second = await signers.signerFor(reordered);
    assert.equal(second.address, first.address);
    // A ref whose file is missing fails, then opens once the file is there.
    const laterKey = randomBytes(32);
    const later = keystoreRef(laterKey);
    if (later.kind !== 'keystore') throw new Error('unreachable');
    const missing = { ...later, path: path.join(dir, 'later.json') };
    await assert.rejects(signers.signerFor(missing), /later\.json: no such file/);
    fs.renameSync(later.path, missing.path);
    assert.equal((await signers.signerFor(missing)).address, privateKeyToAddress(bytesToHex(laterKey)));
    await signers.close();
    await assert.rejects(signers.signerFor(ref), /closed/);
  });

  test('a wrong password is named', async () => {
    const ref = keystoreRef(randomBytes(32));
    if (ref.kind !== 'keystore') throw new Error('unreachable');
    fs.writeFileSync(ref.password.file, 'not the password');
    const signers = createTankSigners({ crypto });
    await assert.rejects(signers.signerFor(ref), /tank keystore .*wrong keystore password/);
    await signers.close();
  });
});

describe('PKCS#11 (SoftHSM2)', () => {
  test('a key generated in the token signs roots that recover to its address', async () => {
    const token = openToken({ ...hsm.setting, keyLabel: 'tank-1' });
    let address: Hex;
    try {
      address = generateKey(token, { keyLabel: 'tank-1', crypto }).address;
    } finally {
      token.close();
    }
    const pinFile = path.join(dir, 'pin');
    fs.writeFileSync(pinFile, 'value' in hsm.setting.pin ? `${hsm.setting.pin.value}\n` : '');
    const ref: TankSignerRef = {
      kind: 'pkcs11',
      module: hsm.setting.module,
      tokenLabel: hsm.setting.tokenLabel,
      keyLabel: 'tank-1',
      pin: { file: pinFile },
    };
    const signers = createTankSigners({ crypto });
    try {
      await assertSignsRoots(await signers.signerFor(ref), address);
      await assert.rejects(signers.signerFor({ ...ref, keyLabel: 'no-such-tank' }), /no key labelled "no-such-tank"/);
    } finally {
      await signers.close();
    }
  });
});

describe('AWS KMS', () => {
  test('a KMS key signs roots that recover to its address, high s made low', async () => {
    const { keyId, privateKey } = kms.createKey();
    const ref: TankSignerRef = { kind: 'kms', keyId, region: 'eu-west-1', endpoint: kms.endpoint };
    const signers = createTankSigners({ crypto });
    try {
      const highS = kms.highS();
      const signer = await signers.signerFor(ref);
      await assertSignsRoots(signer, privateKeyToAddress(bytesToHex(privateKey)));
      assert.ok(kms.highS() > highS, 'KMS answered high s at least once (made low above)');
      // Deterministic (RFC 6979) like the local key: the same root, the same signature as viem's.
      const root = randomRoot();
      const account = privateKeyToAccount(bytesToHex(privateKey));
      assert.equal(await signer.signRoot(root), await account.signMessage({ message: { raw: root } }));
    } finally {
      await signers.close();
    }
  });
});
