import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generatePassword, hashPassword, verifyPassword } from './passwordHash.js';

const CHEAP = { N: 2 ** 10, r: 8, p: 1 };

test('a hash verifies its password and no other', async () => {
  const encoded = await hashPassword('correct horse battery staple', CHEAP);
  assert.match(encoded, /^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
  assert.equal(await verifyPassword('correct horse battery staple', encoded), true);
  assert.equal(await verifyPassword('correct horse battery stapl', encoded), false);
  assert.equal(await verifyPassword('', encoded), false);
});

test('the same password hashes differently each time (per-hash salt)', async () => {
  const a = await hashPassword('same password here', CHEAP);
  const b = await hashPassword('same password here', CHEAP);
  assert.notEqual(a, b);
  assert.equal(await verifyPassword('same password here', b), true);
});

test('the default cost is memory-hard: N = 2^15, r = 8 (32 MiB)', async () => {
  const encoded = await hashPassword('default cost password');
  assert.match(encoded, /^scrypt\$32768\$8\$1\$/);
  assert.equal(await verifyPassword('default cost password', encoded), true);
});

test('malformed or absurd stored hashes never verify and never throw', async () => {
  for (const bad of [
    '',
    'plain',
    'scrypt$1024$8$1$short$short',
    'scrypt$1073741824$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    'scrypt$1000$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  ]) {
    assert.equal(await verifyPassword('x', bad), false, bad);
  }
});

test('NFC normalisation: the composed and decomposed forms of a password are the same password', async () => {
  const encoded = await hashPassword('caf\u00e9-password', CHEAP);
  assert.equal(await verifyPassword('cafe\u0301-password', encoded), true);
});

test('generated passwords are 24 url-safe characters', () => {
  const p = generatePassword();
  assert.match(p, /^[A-Za-z0-9_-]{24}$/);
  assert.notEqual(p, generatePassword());
});
