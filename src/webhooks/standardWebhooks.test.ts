import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  generateSigningSecret,
  newMessageId,
  signStandardWebhook,
  verifyStandardWebhookSignature,
} from './standardWebhooks.js';

// The published Standard Webhooks / Svix test vector (https://www.standardwebhooks.com/): reproducing it says a
// receiver's off-the-shelf library accepts what Patron sends.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const AT_VECTOR_TIME = () => VECTOR.timestamp * 1000;

describe('Standard Webhooks signing', () => {
  test('reproduces the published test vector', () => {
    assert.equal(signStandardWebhook(VECTOR), VECTOR.signature);
  });

  test('a secret is whsec_ + base64 of 32 random bytes, different each time', () => {
    const a = generateSigningSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(a.slice('whsec_'.length), 'base64').length, 32);
    assert.notEqual(a, generateSigningSecret());
  });

  test('message ids are msg_-prefixed and unique', () => {
    const ids = new Set(Array.from({ length: 100 }, newMessageId));
    assert.equal(ids.size, 100);
    for (const id of ids) assert.match(id, /^msg_[A-Za-z0-9_-]{22}$/);
  });
});

describe('verifyStandardWebhookSignature', () => {
  const verify = (overrides: Partial<Parameters<typeof verifyStandardWebhookSignature>[0]> = {}) =>
    verifyStandardWebhookSignature({
      ...VECTOR,
      timestamp: String(VECTOR.timestamp),
      now: AT_VECTOR_TIME,
      ...overrides,
    });

  test('accepts the vector, with the timestamp as header string or number', () => {
    assert.equal(verify(), true);
    assert.equal(verify({ timestamp: VECTOR.timestamp }), true);
  });

  test('accepts a secret given without its whsec_ prefix, like the reference libraries', () => {
    assert.equal(verify({ secret: VECTOR.secret.slice('whsec_'.length) }), true);
  });

  test('one valid v1 entry among several (rotation) is enough', () => {
    assert.equal(verify({ signature: `v1,bm9wZQ== ${VECTOR.signature}` }), true);
  });

  const refusals: [string, Partial<Parameters<typeof verifyStandardWebhookSignature>[0]>][] = [
    ['a tampered body', { body: '{"test": 2432232315}' }],
    ['a tampered id', { id: 'msg_p5jXN8AQM9LWM0D4loKWxJel' }],
    ['another secret', { secret: generateSigningSecret() }],
    ['an expired timestamp (301 s old)', { now: () => (VECTOR.timestamp + 301) * 1000 }],
    ['a timestamp 301 s in the future', { now: () => (VECTOR.timestamp - 301) * 1000 }],
    ['a timestamp that is not an integer', { timestamp: '1614265330.0' }],
    ['an unknown version', { signature: VECTOR.signature.replace('v1,', 'v2,') }],
    ['a truncated signature', { signature: VECTOR.signature.slice(0, -4) }],
    ['an empty header', { signature: '' }],
  ];
  for (const [name, overrides] of refusals) {
    test(`refuses ${name}`, () => {
      assert.equal(verify(overrides), false);
    });
  }

  test('the tolerance is inclusive and configurable', () => {
    assert.equal(verify({ now: () => (VECTOR.timestamp + 300) * 1000 }), true);
    assert.equal(verify({ now: () => (VECTOR.timestamp + 30) * 1000, toleranceSeconds: 10 }), false);
  });
});
