import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exportJWK, exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { dappTokenSettingsSchema } from '../dappSettings/sponsorshipTokenSettings.js';
import { pemProblems } from './dappTokenSettings.js';

describe("a dApp's sponsorship-token settings", () => {
  test('defaults: not required, no keys; required needs a key; ids are unique', () => {
    assert.deepEqual(dappTokenSettingsSchema.parse({}), { required: false, keys: [] });
    assert.equal(dappTokenSettingsSchema.safeParse({ required: true }).success, false);
    const address = { kind: 'address', id: 'a', address: '0x00000000000000000000000000000000000000aa' };
    assert.equal(dappTokenSettingsSchema.safeParse({ required: true, keys: [address] }).success, true);
    assert.equal(dappTokenSettingsSchema.safeParse({ keys: [address, address] }).success, false);
  });

  test('a private JWK, a symmetric one, an unsupported curve or a mismatched alg is refused at registration', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = (j: object) => dappTokenSettingsSchema.safeParse({ keys: [{ kind: 'jwk', id: 'k', jwk: j }] }).success;
    assert.equal(jwk(await exportJWK(publicKey)), true);
    assert.equal(jwk(await exportJWK(privateKey)), false);
    assert.equal(jwk({ kty: 'oct', k: 'c2VjcmV0' }), false);
    assert.equal(jwk({ ...(await exportJWK(publicKey)), crv: 'P-384' }), false);
    assert.equal(jwk({ ...(await exportJWK(publicKey)), alg: 'RS256' }), false);
    const url = (u: string) =>
      dappTokenSettingsSchema.safeParse({ keys: [{ kind: 'jwksUrl', id: 'u', url: u }] }).success;
    assert.equal(url('https://dapp.example/.well-known/jwks.json'), true);
    assert.equal(url('file:///etc/passwd'), false);
  });

  test('a PEM that is not its algorithm public key is named', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const settings = dappTokenSettingsSchema.parse({
      keys: [
        { kind: 'pem', id: 'good', alg: 'ES256', pem: await exportSPKI(publicKey) },
        { kind: 'pem', id: 'private', alg: 'ES256', pem: await exportPKCS8(privateKey) },
        { kind: 'pem', id: 'wrong-alg', alg: 'RS256', pem: await exportSPKI(publicKey) },
      ],
    });
    const problems = await pemProblems(settings);
    assert.equal(problems.length, 2);
    assert.match(problems.join('\n'), /private is not/);
    assert.match(problems.join('\n'), /wrong-alg is not/);
  });
});
