import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { createSecretBox, loadMasterKey } from './secretBox.js';

const KEY = Buffer.alloc(32, 7);
const OTHER_KEY = Buffer.alloc(32, 8);
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-secretbox-'));
  tempDirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('createSecretBox', () => {
  test('open(seal(x)) returns x, for ASCII, unicode and the empty string', () => {
    const box = createSecretBox(KEY);
    for (const plaintext of ['pk.3kQ9xZ2aAbCdEfGhIjKlMnOpQrStUvWxY', 'héllo wörld ✓ 日本語 🔑', '']) {
      const sealed = box.seal(plaintext);
      assert.match(sealed, /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
      assert.ok(!sealed.includes(plaintext) || plaintext === '', 'the plaintext does not appear in clear');
      assert.equal(box.open(sealed), plaintext);
    }
  });

  test('another box with the same key opens it', () => {
    const sealed = createSecretBox(KEY).seal('secret');
    assert.equal(createSecretBox(Buffer.from(KEY)).open(sealed), 'secret');
  });

  test('two seals of the same plaintext differ (random IV) and both open', () => {
    const box = createSecretBox(KEY);
    const a = box.seal('same');
    const b = box.seal('same');
    assert.notEqual(a, b);
    assert.notEqual(a.split('.')[1], b.split('.')[1]);
    assert.equal(box.open(a), 'same');
    assert.equal(box.open(b), 'same');
  });

  test('another key cannot open it', () => {
    const sealed = createSecretBox(KEY).seal('secret');
    assert.throws(() => createSecretBox(OTHER_KEY).open(sealed), {
      message:
        'a stored secret does not open with the master key (PATRON_MASTER_KEY): it was sealed with another key, or altered',
    });
  });

  test('changing any single character of the sealed string makes open throw', () => {
    const box = createSecretBox(KEY);
    // 5 bytes of plaintext + 16 of tag = 21 bytes, a multiple of 3: no base64 padding bits that could change
    // without changing the decoded bytes, so every substitution alters the IV, the ciphertext or the tag.
    const sealed = box.seal('hello');
    let tried = 0;
    for (let i = 0; i < sealed.length; i++) {
      if (sealed[i] === '.') continue;
      const replacements = i < 2 ? ['x', 'V', '2'] : [...BASE64URL];
      for (const c of replacements) {
        if (c === sealed[i]) continue;
        const tampered = sealed.slice(0, i) + c + sealed.slice(i + 1);
        assert.throws(() => box.open(tampered), `tampered at ${i} with ${c}: ${tampered}`);
        tried++;
      }
    }
    assert.ok(tried > 1000);
  });

  test('truncated, extended, swapped or malformed sealed strings make open throw', () => {
    const box = createSecretBox(KEY);
    const sealed = box.seal('hello');
    const [, iv, body] = sealed.split('.');
    const other = box.seal('world').split('.');
    const cases = [
      '',
      'v1',
      'v1..',
      `v2.${iv}.${body}`,
      `${iv}.${body}`,
      `v1.${iv}`,
      `v1.${iv}.`,
      sealed.slice(0, -1),
      sealed.slice(0, -4),
      `${sealed}AAAA`,
      `v1.${other[1]}.${body}`,
      `v1.${iv}.${other[2]}`,
      `v1.${body}.${iv}`,
    ];
    for (const c of cases) assert.throws(() => box.open(c), JSON.stringify(c));
  });

  test('extra segments after the sealed value make open throw', {}, () => {
    const box = createSecretBox(KEY);
    const sealed = box.seal('hello');
    assert.throws(() => box.open(`${sealed}.extra`), /unknown sealed format/);
  });

  test('a key that is not 32 bytes is refused', () => {
    for (const len of [0, 16, 31, 33, 64]) {
      assert.throws(() => createSecretBox(Buffer.alloc(len, 1)), { message: 'master key must be 32 bytes' });
    }
  });
});

describe('loadMasterKey', () => {
  test('returns the configured hex key without touching the data directory', () => {
    const hex = '0123456789abcdef'.repeat(4);
    const dir = path.join(tempDir(), 'unused');
    const key = loadMasterKey({ masterKeyHex: hex, dataDir: dir });
    assert.equal(key.length, 32);
    assert.equal(key.toString('hex'), hex);
    assert.equal(fs.existsSync(dir), false);
  });

  test('without hex, creates <dataDir>/master.key (mode 0600) and returns the same key on the next call', () => {
    const dir = path.join(tempDir(), 'nested', 'data');
    const first = loadMasterKey({ masterKeyHex: undefined, dataDir: dir });
    const file = path.join(dir, 'master.key');
    assert.equal(first.length, 32);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(fs.readFileSync(file, 'utf8'), `${first.toString('hex')}\n`);
    assert.deepEqual(fs.readdirSync(dir), ['master.key'], 'no temporary file is left behind');

    const second = loadMasterKey({ masterKeyHex: undefined, dataDir: dir });
    assert.ok(second.equals(first));

    // The created key works in a secret box.
    assert.equal(createSecretBox(second).open(createSecretBox(first).seal('x')), 'x');
  });

  test('two data directories get different keys', () => {
    const a = loadMasterKey({ masterKeyHex: undefined, dataDir: tempDir() });
    const b = loadMasterKey({ masterKeyHex: undefined, dataDir: tempDir() });
    assert.equal(a.equals(b), false);
  });

  test('an existing key file is used as is, surrounding whitespace ignored', () => {
    const dir = tempDir();
    const hex = 'AB'.repeat(32);
    fs.writeFileSync(path.join(dir, 'master.key'), `  ${hex}\n\n`, { mode: 0o600 });
    assert.equal(loadMasterKey({ masterKeyHex: undefined, dataDir: dir }).toString('hex'), hex.toLowerCase());
  });

  test('a key file holding garbage is rejected and left alone', () => {
    for (const content of ['not a key\n', '', 'ab'.repeat(31), 'zz'.repeat(32), 'ab'.repeat(33)]) {
      const dir = tempDir();
      const file = path.join(dir, 'master.key');
      fs.writeFileSync(file, content);
      assert.throws(() => loadMasterKey({ masterKeyHex: undefined, dataDir: dir }), {
        message: `${file} does not hold a 32-byte hex key`,
      });
      assert.equal(fs.readFileSync(file, 'utf8'), content);
    }
  });
});
