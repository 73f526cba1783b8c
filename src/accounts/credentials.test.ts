import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  API_KEY_PREFIX,
  AUTH_TOKEN_PREFIX,
  type GeneratedSecret,
  generateApiKey,
  generateAuthToken,
  hashSecret,
  looksLikeApiKey,
  looksLikeAuthToken,
} from './credentials.js';

const API_KEY_SHAPE = /^pk\.[0-9A-Za-z]{33}$/;
const AUTH_TOKEN_SHAPE = /^pat\.[0-9A-Za-z]{43}$/;
/** What `@biconomy/account` accepts for an API key inside a paymaster URL. */
const BICONOMY_SAFE = /^[A-Za-z0-9.-]+$/;

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

function checkGenerated(g: GeneratedSecret) {
  assert.equal(g.hash, sha256(g.secret));
  assert.match(g.hash, /^[0-9a-f]{64}$/);
  assert.notEqual(g.hash, g.secret);
  assert.equal(g.displayPrefix, g.secret.slice(0, 12));
  assert.equal(g.displayPrefix.length, 12);
}

describe('generateApiKey', () => {
  test('has the pk. shape, only Biconomy-safe characters, and a matching hash and prefix', () => {
    const g = generateApiKey();
    assert.equal(API_KEY_PREFIX, 'pk.');
    assert.match(g.secret, API_KEY_SHAPE);
    assert.match(g.secret, BICONOMY_SAFE);
    assert.equal(g.secret.length, 36);
    assert.ok(g.displayPrefix.startsWith('pk.'));
    checkGenerated(g);
  });

  test('1000 keys are unique, well-formed and recognised by looksLikeApiKey only', () => {
    const secrets = new Set<string>();
    const hashes = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const g = generateApiKey();
      assert.match(g.secret, API_KEY_SHAPE);
      assert.match(g.secret, BICONOMY_SAFE);
      assert.equal(looksLikeApiKey(g.secret), true, g.secret);
      assert.equal(looksLikeAuthToken(g.secret), false, g.secret);
      secrets.add(g.secret);
      hashes.add(g.hash);
    }
    assert.equal(secrets.size, 1000);
    assert.equal(hashes.size, 1000);
  });
});

describe('generateAuthToken', () => {
  test('has the pat. shape and a matching hash and prefix', () => {
    const g = generateAuthToken();
    assert.equal(AUTH_TOKEN_PREFIX, 'pat.');
    assert.match(g.secret, AUTH_TOKEN_SHAPE);
    assert.equal(g.secret.length, 47);
    assert.ok(g.displayPrefix.startsWith('pat.'));
    checkGenerated(g);
  });

  test('1000 tokens are unique, well-formed and recognised by looksLikeAuthToken only', () => {
    const secrets = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const g = generateAuthToken();
      assert.match(g.secret, AUTH_TOKEN_SHAPE);
      assert.equal(looksLikeAuthToken(g.secret), true, g.secret);
      assert.equal(looksLikeApiKey(g.secret), false, g.secret);
      secrets.add(g.secret);
    }
    assert.equal(secrets.size, 1000);
  });
});

describe('hashSecret', () => {
  test('is the SHA-256 hex digest of the UTF-8 secret', () => {
    assert.equal(hashSecret(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.equal(hashSecret('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(hashSecret('pk.é'), sha256('pk.é'));
    assert.notEqual(hashSecret('pk.a'), hashSecret('pk.b'));
  });
});

describe('shape checks reject other strings', () => {
  const key = `pk.${'a'.repeat(33)}`;
  const token = `pat.${'Z'.repeat(43)}`;

  test('the reference shapes are accepted', () => {
    assert.equal(looksLikeApiKey(key), true);
    assert.equal(looksLikeAuthToken(token), true);
  });

  const badKeys = [
    '',
    'pk.',
    `pk.${'a'.repeat(32)}`,
    `pk.${'a'.repeat(34)}`,
    `PK.${'a'.repeat(33)}`,
    `pk_${'a'.repeat(33)}`,
    `pk.${'a'.repeat(32)}-`,
    `pk.${'a'.repeat(32)}.`,
    `pk.${'a'.repeat(32)}é`,
    ` pk.${'a'.repeat(33)}`,
    `pk.${'a'.repeat(33)}\n`,
    `pat.${'a'.repeat(33)}`,
  ];
  for (const s of badKeys) {
    test(`looksLikeApiKey(${JSON.stringify(s)}) is false`, () => {
      assert.equal(looksLikeApiKey(s), false);
    });
  }

  const badTokens = [
    '',
    'pat.',
    `pat.${'a'.repeat(42)}`,
    `pat.${'a'.repeat(44)}`,
    `PAT.${'a'.repeat(43)}`,
    `pat.${'a'.repeat(42)}_`,
    `pat.${'a'.repeat(43)}\n`,
    `pk.${'a'.repeat(43)}`,
  ];
  for (const s of badTokens) {
    test(`looksLikeAuthToken(${JSON.stringify(s)}) is false`, () => {
      assert.equal(looksLikeAuthToken(s), false);
    });
  }
});
