import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, test } from 'node:test';
import { exportJWK, exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { type Address, bytesToHex, getAddress, type Hex, hashTypedData, keccak256, toHex, zeroAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { jsCryptoBackend, selectCryptoBackend } from '../crypto/cryptoBackend.js';
import type { RegisteredTokenKey } from '../dappSettings/registeredTokenKeys.js';
import { createJwksCache } from './jwksCache.js';
import { createMemoryJtiReplayStore } from './replayStore.js';
import { checkBoundClaims, type TokenVerdict } from './sponsorshipClaims.js';
import { createSponsorshipTokenVerifier } from './sponsorshipTokenVerifier.js';
import { encodeVoucherToken, voucherDomain, voucherTypes } from './sponsorshipVoucher.js';
import type { SponsorshipVoucher } from './voucherDigest.js';
import { voucherDigest } from './voucherDigest.js';

const DAPP = 'dapp-1';
const CHAIN = 31337;
const NOW = 1_800_000_000;
const MAX_LIFETIME = 600;

async function keyPair(alg: 'ES256' | 'EdDSA' | 'RS256', kid: string) {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid };
  return { publicKey, privateKey, jwk: { ...jwk, kty: jwk.kty ?? '' }, pem: await exportSPKI(publicKey) };
}

type Pair = Awaited<ReturnType<typeof keyPair>>;

/** A signed JWT; a claim given as undefined is left out. */
function jwt(args: { pair: Pair; alg: string; claims?: Record<string, unknown>; header?: Record<string, unknown> }) {
  const all = { sub: 'user-1', aud: DAPP, exp: NOW + 300, jti: 'j-1', ...args.claims };
  const claims: JWTPayload = Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined));
  return new SignJWT(claims)
    .setProtectedHeader({ alg: args.alg, kid: args.pair.jwk.kid, ...args.header })
    .sign(args.pair.privateKey);
}

function setup(opts: { jwksDoc?: () => unknown } = {}) {
  let now = NOW;
  let fetches = 0;
  const jwks = createJwksCache({
    fetchJwks: async () => {
      fetches += 1;
      if (opts.jwksDoc === undefined) throw new Error('no JWKS URL in this test');
      return opts.jwksDoc();
    },
    refetchIntervalMs: 60_000,
    nowMs: () => now * 1000,
  });
  const verifier = createSponsorshipTokenVerifier({
    jwks,
    replay: createMemoryJtiReplayStore(),
    crypto: selectCryptoBackend().backend,
    maxLifetimeSeconds: MAX_LIFETIME,
    clockSkewSeconds: 30,
    nowSeconds: () => now,
  });
  return {
    verifier,
    fetches: () => fetches,
    advance: (s: number) => {
      now += s;
    },
  };
}

const reason = (v: TokenVerdict) => (v.ok ? 'ok' : v.refusal.reason);
const jwkKey = (pair: Pair, id = 'key-1'): RegisteredTokenKey => ({ kind: 'jwk', id, jwk: pair.jwk });

describe('JWT sponsorship tokens', async () => {
  const es = await keyPair('ES256', 'es-1');
  const ed = await keyPair('EdDSA', 'ed-1');
  const rs = await keyPair('RS256', 'rs-1');
  const other = await keyPair('ES256', 'es-1'); // same kid, another key
  const args = (token: string, keys: RegisteredTokenKey[]) => ({ token, dappId: DAPP, chainId: CHAIN, keys });

  test('ES256, EdDSA and RS256 verify, pasted as JWK or PEM, into the claims', async () => {
    const { verifier } = setup();
    const claims = {
      sender: '0x00000000000000000000000000000000000000aa',
      addr: '0x00000000000000000000000000000000000000cc',
      maxCostWei: '1000',
    };
    const v = await verifier.verify(args(await jwt({ pair: es, alg: 'ES256', claims }), [jwkKey(es)]));
    assert.ok(v.ok, reason(v));
    assert.equal(v.claims.sub, 'user-1');
    assert.equal(v.claims.sender, getAddress('0x00000000000000000000000000000000000000aa'));
    assert.equal(v.claims.addr, getAddress('0x00000000000000000000000000000000000000cc'));
    assert.equal(v.claims.maxCostWei, 1000n);
    assert.equal(reason(await verifier.verify(args(await jwt({ pair: ed, alg: 'EdDSA' }), [jwkKey(ed)]))), 'ok');
    const pem: RegisteredTokenKey = { kind: 'pem', id: 'p', pem: rs.pem, alg: 'RS256' };
    assert.equal(reason(await verifier.verify(args(await jwt({ pair: rs, alg: 'RS256' }), [pem]))), 'ok');
  });

  test('expired, not yet valid, a lifetime above the maximum, the wrong audience, a missing jti', async () => {
    const { verifier } = setup();
    const keys = [jwkKey(es)];
    const check = async (claims: Record<string, unknown>) =>
      reason(await verifier.verify(args(await jwt({ pair: es, alg: 'ES256', claims }), keys)));
    assert.equal(await check({ exp: NOW - 31 }), 'expired');
    assert.equal(await check({ exp: NOW - 10 }), 'ok', 'within the clock skew');
    assert.equal(await check({ nbf: NOW + 120 }), 'not_yet_valid');
    assert.equal(await check({ iat: NOW + 120 }), 'not_yet_valid');
    assert.equal(await check({ exp: NOW + MAX_LIFETIME + 60 }), 'lifetime_too_long');
    assert.equal(await check({ aud: 'dapp-2' }), 'wrong_audience');
    assert.equal(await check({ jti: undefined }), 'missing_claim');
    assert.equal(await check({ sub: undefined }), 'missing_claim');
    assert.equal(await check({ sender: 'not an address' }), 'missing_claim');
  });

  test('a replayed jti is refused until it expires; checking without spending does not spend it', async () => {
    const { verifier, advance } = setup();
    const token = args(await jwt({ pair: es, alg: 'ES256' }), [jwkKey(es)]);
    assert.equal(reason(await verifier.verify(token)), 'ok');
    assert.equal(reason(await verifier.verifyAndSpend(token)), 'ok');
    assert.equal(reason(await verifier.verifyAndSpend(token)), 'replayed');
    const twice = await Promise.all(
      [1, 2].map(async (n) =>
        reason(
          await verifier.verifyAndSpend(
            args(await jwt({ pair: es, alg: 'ES256', claims: { jti: 'c-x', n } }), [jwkKey(es)]),
          ),
        ),
      ),
    );
    assert.deepEqual(twice.sort(), ['ok', 'replayed'], 'two concurrent spends: exactly one wins');
    advance(400);
    assert.equal(reason(await verifier.verifyAndSpend(token)), 'expired');
  });

  test('the wrong key, an unknown kid', async () => {
    const { verifier } = setup();
    assert.equal(
      reason(await verifier.verify(args(await jwt({ pair: other, alg: 'ES256' }), [jwkKey(es)]))),
      'bad_signature',
    );
    const unknownKid = await jwt({ pair: es, alg: 'ES256', header: { kid: 'nope' } });
    assert.equal(reason(await verifier.verify(args(unknownKid, [jwkKey(es)]))), 'unknown_key');
    assert.equal(reason(await verifier.verify(args(await jwt({ pair: es, alg: 'ES256' }), []))), 'unknown_key');
  });

  test('alg none and HS256 with the public key as the secret are refused', async () => {
    const { verifier } = setup();
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const payload = { sub: 'user-1', aud: DAPP, exp: NOW + 300, jti: 'n-1' };
    const none = `${b64({ alg: 'none' })}.${b64(payload)}.`;
    assert.equal(reason(await verifier.verify(args(none, [jwkKey(es)]))), 'algorithm_not_allowed');
    // The classic confusion: the verifier's public key, which anyone has, used as an HMAC secret.
    for (const secretText of [rs.pem, JSON.stringify(rs.jwk)]) {
      const hs = await new SignJWT(payload)
        .setProtectedHeader({ alg: 'HS256' })
        .sign(new TextEncoder().encode(secretText));
      const pem: RegisteredTokenKey = { kind: 'pem', id: 'p', pem: rs.pem, alg: 'RS256' };
      assert.equal(reason(await verifier.verify(args(hs, [pem, jwkKey(rs)]))), 'algorithm_not_allowed');
    }
  });

  test('a crit header, a truncated signature, a 1024-bit RSA key: refused', async () => {
    const { verifier } = setup();
    const good = await jwt({ pair: es, alg: 'ES256' });
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', crit: ['x'], x: 1 })).toString('base64url');
    const crit = `${header}.${good.split('.').slice(1).join('.')}`; // refused before its signature is looked at
    assert.equal(reason(await verifier.verify(args(crit, [jwkKey(es)]))), 'malformed');
    assert.equal(reason(await verifier.verify(args(good.slice(0, -4), [jwkKey(es)]))), 'bad_signature');
    // jose will not make a key this weak: node:crypto makes it and signs the token.
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const weakJwk = { ...weak.publicKey.export({ format: 'jwk' }), kty: 'RSA' };
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const input = `${b64({ alg: 'RS256' })}.${b64({ sub: 'u', aud: DAPP, exp: NOW + 60, jti: 'w' })}`;
    const token = `${input}.${sign('sha256', Buffer.from(input), weak.privateKey).toString('base64url')}`;
    assert.equal(reason(await verifier.verify(args(token, [{ kind: 'jwk', id: 'w', jwk: weakJwk }]))), 'bad_signature');
  });

  test('key confusion: an RSA key is never tried for ES256, nor a JWK whose alg differs from the header', async () => {
    const { verifier } = setup();
    const esToken = await jwt({ pair: es, alg: 'ES256', header: { kid: undefined } });
    assert.equal(reason(await verifier.verify(args(esToken, [jwkKey(rs)]))), 'unknown_key');
    const mislabelled: RegisteredTokenKey = { kind: 'jwk', id: 'k', jwk: { ...es.jwk, alg: 'RS256' } };
    assert.equal(reason(await verifier.verify(args(esToken, [mislabelled]))), 'unknown_key');
  });

  test('jwk, jku and x5u header parameters are ignored and never fetched', async () => {
    const { verifier, fetches } = setup();
    const attacker = await keyPair('ES256', 'es-1');
    const token = await jwt({
      pair: attacker,
      alg: 'ES256',
      header: { jwk: attacker.jwk, jku: 'http://127.0.0.1:1/jwks', x5u: 'http://127.0.0.1:1/x5u' },
    });
    assert.equal(reason(await verifier.verify(args(token, [jwkKey(es)]))), 'bad_signature');
    assert.equal(fetches(), 0);
  });

  test('a JWKS URL: cached, fetched again for an unknown kid at most once an interval', async () => {
    const fresh = await keyPair('ES256', 'es-2');
    let doc: { keys: unknown[] } = { keys: [es.jwk] };
    const { verifier, fetches, advance } = setup({ jwksDoc: () => doc });
    const keys: RegisteredTokenKey[] = [{ kind: 'jwksUrl', id: 'u', url: 'https://dapp.example/jwks.json' }];
    assert.equal(reason(await verifier.verify(args(await jwt({ pair: es, alg: 'ES256' }), keys))), 'ok');
    assert.equal(
      reason(await verifier.verify(args(await jwt({ pair: es, alg: 'ES256', claims: { jti: 'j-2' } }), keys))),
      'ok',
    );
    assert.equal(fetches(), 1, 'cached');
    doc = { keys: [es.jwk, fresh.jwk, { kty: 'oct', k: 'c2VjcmV0' }] }; // the dApp rotates; a symmetric key is skipped
    advance(61);
    assert.equal(reason(await verifier.verify(args(await jwt({ pair: fresh, alg: 'ES256' }), keys))), 'ok');
    assert.equal(fetches(), 2, 'the unknown kid fetched the JWKS again');
    const madeUp = await jwt({ pair: fresh, alg: 'ES256', header: { kid: 'made-up' } });
    assert.equal(reason(await verifier.verify(args(madeUp, keys))), 'unknown_key');
    assert.equal(reason(await verifier.verify(args(madeUp, keys))), 'unknown_key');
    assert.equal(fetches(), 2, 'no refetch within the interval');
    advance(61);
    assert.equal(reason(await verifier.verify(args(madeUp, keys))), 'unknown_key');
    assert.equal(fetches(), 3);
  });

  test('a JWKS URL that cannot be fetched: keys_unavailable', async () => {
    const { verifier } = setup({
      jwksDoc: () => {
        throw new Error('down');
      },
    });
    const keys: RegisteredTokenKey[] = [{ kind: 'jwksUrl', id: 'u', url: 'https://dapp.example/jwks.json' }];
    assert.equal(reason(await verifier.verify(args(await jwt({ pair: es, alg: 'ES256' }), keys))), 'keys_unavailable');
  });
});

describe('EIP-712 voucher sponsorship tokens', () => {
  const backend = privateKeyToAccount(generatePrivateKey());
  const keys: RegisteredTokenKey[] = [{ kind: 'address', id: 'signer-1', address: backend.address }];
  const voucher = (over: Partial<SponsorshipVoucher> = {}): SponsorshipVoucher => ({
    dapp: DAPP,
    sub: 'user-1',
    nbf: 0n,
    exp: BigInt(NOW + 300),
    jti: keccak256(toHex('v-1')),
    sender: zeroAddress,
    addr: zeroAddress,
    maxCostWei: 0n,
    contracts: [],
    ...over,
  });
  const sign = async (v: SponsorshipVoucher, chainId = CHAIN, signer = backend) =>
    encodeVoucherToken({
      voucher: v,
      signature: await signer.signTypedData({
        domain: voucherDomain(chainId),
        types: voucherTypes,
        primaryType: 'SponsorshipVoucher',
        message: v,
      }),
    });
  const args = (token: string, chainId = CHAIN) => ({ token, dappId: DAPP, chainId, keys });

  test('a voucher signed by the registered address verifies into the claims; replay refused', async () => {
    const { verifier } = setup();
    const sender: Address = '0x00000000000000000000000000000000000000Bb';
    const token = await sign(voucher({ sender: getAddress(sender), maxCostWei: 5n }));
    const v = await verifier.verifyAndSpend(args(token));
    assert.ok(v.ok, reason(v));
    assert.equal(v.claims.keyId, 'signer-1');
    assert.equal(v.claims.maxCostWei, 5n);
    assert.equal(v.claims.addr, undefined, 'the zero address: no addr');
    assert.equal(reason(await verifier.verifyAndSpend(args(token))), 'replayed');
  });

  test("a voucher's addr is the person's address for gating rules on the user, checksummed; it is signed", async () => {
    const { verifier } = setup();
    const person = '0x00000000000000000000000000000000000000ee';
    const token = await sign(voucher({ jti: keccak256(toHex('v-addr')), addr: person }));
    const v = await verifier.verify(args(token));
    assert.ok(v.ok, reason(v));
    assert.equal(v.claims.addr, getAddress(person));
    const signed = JSON.parse(Buffer.from(token.slice(7), 'base64url').toString());
    signed.voucher.addr = '0x00000000000000000000000000000000000000ef';
    const swapped = `eip712.${Buffer.from(JSON.stringify(signed)).toString('base64url')}`;
    assert.equal(reason(await verifier.verify(args(swapped))), 'unknown_key');
  });

  test("the digest is viem's hashTypedData, with either crypto back end", async () => {
    const v = voucher({
      sender: getAddress('0x00000000000000000000000000000000000000bb'),
      addr: getAddress('0x00000000000000000000000000000000000000ee'),
      maxCostWei: 7n,
      contracts: [getAddress('0x00000000000000000000000000000000000000cc'), zeroAddress],
    });
    const expected = hashTypedData({
      domain: voucherDomain(CHAIN),
      types: voucherTypes,
      primaryType: 'SponsorshipVoucher',
      message: v,
    });
    for (const crypto of [jsCryptoBackend, selectCryptoBackend().backend]) {
      assert.equal(bytesToHex(voucherDigest({ voucher: v, chainId: CHAIN, crypto })), expected);
    }
  });

  test('for another dApp, for another chain, by another signer, tampered: refused', async () => {
    const { verifier } = setup();
    assert.equal(reason(await verifier.verify(args(await sign(voucher({ dapp: 'dapp-2' }))))), 'wrong_audience');
    assert.equal(reason(await verifier.verify(args(await sign(voucher()), 1))), 'unknown_key');
    const stranger = privateKeyToAccount(generatePrivateKey());
    assert.equal(reason(await verifier.verify(args(await sign(voucher(), CHAIN, stranger)))), 'unknown_key');
    const signed = JSON.parse(Buffer.from((await sign(voucher())).slice(7), 'base64url').toString());
    signed.voucher.sub = 'someone-else';
    const tampered = `eip712.${Buffer.from(JSON.stringify(signed)).toString('base64url')}`;
    assert.equal(reason(await verifier.verify(args(tampered))), 'unknown_key');
    assert.equal(reason(await verifier.verify(args('eip712.bm90IGpzb24'))), 'malformed');
  });

  test('expired, not yet valid, a lifetime above the maximum', async () => {
    const { verifier } = setup();
    assert.equal(reason(await verifier.verify(args(await sign(voucher({ exp: BigInt(NOW - 60) }))))), 'expired');
    assert.equal(reason(await verifier.verify(args(await sign(voucher({ nbf: BigInt(NOW + 60) }))))), 'not_yet_valid');
    assert.equal(
      reason(await verifier.verify(args(await sign(voucher({ exp: BigInt(NOW + 3600) }))))),
      'lifetime_too_long',
    );
  });

  test('bound claims: a different sender, a cost above the bound, a contract outside the list', async () => {
    const { verifier } = setup();
    const bound: Address = getAddress('0x00000000000000000000000000000000000000bb');
    const allowed: Address = getAddress('0x00000000000000000000000000000000000000cc');
    const v = await verifier.verify(
      args(await sign(voucher({ sender: bound, maxCostWei: 100n, contracts: [allowed] }))),
    );
    assert.ok(v.ok);
    const base = { claims: v.claims, sender: bound, worstCaseWei: 100n, calledContracts: [allowed] };
    assert.equal(checkBoundClaims(base), undefined);
    const elsewhere: Hex = '0x00000000000000000000000000000000000000dd';
    assert.equal(checkBoundClaims({ ...base, sender: elsewhere })?.reason, 'sender_mismatch');
    assert.equal(checkBoundClaims({ ...base, worstCaseWei: 101n })?.reason, 'cost_above_bound');
    assert.equal(checkBoundClaims({ ...base, calledContracts: [allowed, elsewhere] })?.reason, 'contract_not_allowed');
  });
});
