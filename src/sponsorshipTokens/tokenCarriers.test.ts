import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readCarriedToken, withoutCarriedToken } from './tokenCarriers.js';

describe('the token carriers', () => {
  const none = { authorization: undefined, contextToken: undefined, webhookData: {} };

  test('each carrier alone, or several with the same token', () => {
    assert.deepEqual(readCarriedToken(none), { kind: 'none' });
    assert.deepEqual(readCarriedToken({ ...none, authorization: 'Bearer abc.def.ghi' }), {
      kind: 'token',
      token: 'abc.def.ghi',
    });
    assert.deepEqual(readCarriedToken({ ...none, authorization: 'bearer  t ' }), { kind: 'token', token: 't' });
    assert.deepEqual(readCarriedToken({ ...none, contextToken: 't' }), { kind: 'token', token: 't' });
    assert.deepEqual(readCarriedToken({ ...none, webhookData: { sponsorshipToken: 't' } }), {
      kind: 'token',
      token: 't',
    });
    const all = { authorization: 'Bearer t', contextToken: 't', webhookData: { sponsorshipToken: 't' } };
    assert.deepEqual(readCarriedToken(all), { kind: 'token', token: 't' });
  });

  test('two different tokens, a non-string, another Authorization scheme: refused', () => {
    const kind = (a: Parameters<typeof readCarriedToken>[0]) => readCarriedToken(a).kind;
    assert.equal(kind({ ...none, authorization: 'Bearer a', contextToken: 'b' }), 'refused');
    assert.equal(kind({ ...none, contextToken: 'a', webhookData: { sponsorshipToken: 'b' } }), 'refused');
    assert.equal(kind({ ...none, contextToken: 42 }), 'refused');
    assert.equal(kind({ ...none, authorization: 'Basic dTpw' }), 'refused');
  });

  test('the webhook is shown webhookData without the token', () => {
    assert.deepEqual(withoutCarriedToken({ userId: 'u', sponsorshipToken: 't' }), { userId: 'u' });
    assert.deepEqual(withoutCarriedToken({ userId: 'u' }), { userId: 'u' });
  });
});
