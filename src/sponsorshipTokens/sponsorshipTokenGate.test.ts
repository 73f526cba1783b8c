import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DappTokenSettings } from '../dappSettings/sponsorshipTokenSettings.js';
import type { SponsorshipClaims } from './sponsorshipClaims.js';
import { createSponsorshipTokenGate } from './sponsorshipTokenGate.js';
import type { SponsorshipTokenVerifier, VerifyArgs } from './sponsorshipTokenVerifier.js';

const NOW = 1_800_000_000;
const settings: DappTokenSettings = {
  required: true,
  keys: [{ kind: 'address', id: 'k', address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }],
};
const carrier = (contextToken: unknown) => ({ contextToken, webhookData: {}, sender: undefined });

/** A verifier that accepts "good-*" tokens for dapp-1 and counts its calls: the gate's cache is what is tested. */
function counting() {
  const calls: VerifyArgs[] = [];
  const claims = (token: string): SponsorshipClaims => ({
    format: 'jwt',
    sub: 'u',
    aud: 'dapp-1',
    exp: NOW + 60,
    jti: token,
    keyId: 'k',
  });
  const verifier: SponsorshipTokenVerifier = {
    async verify(v) {
      calls.push(v);
      if (!v.token.startsWith('good') || v.dappId !== 'dapp-1') {
        return { ok: false, refusal: { reason: 'wrong_audience', message: 'not for this dApp' } };
      }
      return { ok: true, claims: claims(v.token) };
    },
    verifyAndSpend: () => Promise.reject(new Error('the gate spends through the replay store')),
  };
  return { verifier, calls };
}

describe('the sponsorship token gate', () => {
  test('a verified token is cached: a second call checks no signature; another dApp, chain or settings object verifies again; an expired entry too', async () => {
    let now = NOW;
    const { verifier, calls } = counting();
    const gate = createSponsorshipTokenGate({ verifier, nowSeconds: () => now });
    const admit = (over: Partial<{ dappId: string; chainId: number; settings: DappTokenSettings }> = {}) =>
      gate.admit({
        settings,
        dappId: 'dapp-1',
        chainId: 1,
        authorization: undefined,
        carrier: carrier('good-1'),
        ...over,
      });
    await admit();
    await admit();
    assert.equal(calls.length, 1);
    await admit({ chainId: 2 });
    assert.equal(calls.length, 2);
    await admit({ settings: { ...settings } });
    assert.equal(calls.length, 3);
    await assert.rejects(admit({ dappId: 'dapp-2' }), /wrong_audience/);
    await admit();
    await admit();
    const before = calls.length;
    now = NOW + 200;
    await admit();
    assert.equal(calls.length, before + 1, 'an entry past its exp is verified again');
  });

  test('required without a token is token_required; not required, none is fine; use() is the jti until exp + skew, then expired', async () => {
    let now = NOW;
    const { verifier } = counting();
    const gate = createSponsorshipTokenGate({ verifier, clockSkewSeconds: 30, nowSeconds: () => now });
    const base = { dappId: 'dapp-1', chainId: 1, authorization: undefined };
    await assert.rejects(gate.admit({ ...base, settings, carrier: carrier(undefined) }), (err: Error) => {
      assert.match(err.message, /token_required/);
      return true;
    });
    assert.equal(
      await gate.admit({ ...base, settings: { ...settings, required: false }, carrier: carrier(undefined) }),
      undefined,
    );
    const grant = await gate.admit({ ...base, settings, carrier: carrier('good-2') });
    assert.ok(grant);
    // The row the ledger spends: kept until exp + skew, by the clock of the spending instance.
    assert.deepEqual(grant.use(), { jti: 'good-2', expiresAt: NOW + 60 + 30, nowSeconds: NOW });
    // Admitted at the very edge, then held up (a slow webhook): past exp + skew its use is refused as expired, so a
    // spent row that expired meanwhile is never taken over by the same token.
    now = NOW + 60 + 30;
    const late = await gate.admit({ ...base, settings, carrier: carrier('good-2') });
    assert.ok(late);
    assert.equal(late.use().nowSeconds, NOW + 90);
    now += 1;
    assert.throws(
      () => late.use(),
      (err: Error) => /expired/.test(err.message),
    );
  });
});
