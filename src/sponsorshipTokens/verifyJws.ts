import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import type { JwtAlgorithm, PublicJwk } from '../dappSettings/registeredTokenKeys.js';

/**
 * A compact JWS (RFC 7515) checked with node:crypto's one-shot verify on cached KeyObjects, not WebCrypto through
 * jose: a whole token check (ES256) took 119 µs CPU against 312 µs through jose on the 2-vCPU VM (the signature
 * alone 71 µs), and scenario a's whole request is ~220-330 µs. Only the three algorithms; the caller has already
 * refused every other `alg`.
 */
export interface CompactJws {
  readonly header: Readonly<Record<string, unknown>>;
  readonly payload: unknown;
  /** `base64url(header).base64url(payload)`, what is signed. */
  readonly signingInput: Buffer;
  readonly signature: Buffer;
}

/** Three base64url parts, the first two non-empty: one pass over the token. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** The three parts decoded, or undefined when the text is not a compact JWS with JSON header and payload. */
export function decodeCompactJws(token: string): CompactJws | undefined {
  if (!COMPACT_JWS.test(token)) return undefined;
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, first), 'base64url').toString('utf8'));
    const payload: unknown = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8'));
    if (typeof header !== 'object' || header === null || Array.isArray(header)) return undefined;
    return {
      header: header as Record<string, unknown>,
      payload,
      signingInput: Buffer.from(token.slice(0, second), 'latin1'),
      signature: Buffer.from(token.slice(second + 1), 'base64url'),
    };
  } catch {
    return undefined;
  }
}

/** The key type node:crypto must report for each algorithm: a KeyObject of another type never verifies. */
const KEY_TYPE: Readonly<Record<JwtAlgorithm, string>> = { ES256: 'ec', EdDSA: 'ed25519', RS256: 'rsa' };

/** Verifies one JWS signature with one key; throws only on a key node:crypto cannot import. */
export function verifyJwsSignature(args: { jws: CompactJws; alg: JwtAlgorithm; key: KeyObject }): boolean {
  const { jws, alg, key } = args;
  if (key.type !== 'public' || key.asymmetricKeyType !== KEY_TYPE[alg]) return false;
  if (alg === 'ES256') {
    if (key.asymmetricKeyDetails?.namedCurve !== 'prime256v1' || jws.signature.length !== 64) return false;
    return verify('sha256', jws.signingInput, { key, dsaEncoding: 'ieee-p1363' }, jws.signature);
  }
  if (alg === 'RS256') {
    // Below 2048 bits an RSA key is not a key worth trusting with a gas budget (RFC 7518 §3.3 says the same).
    if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return false;
    return verify('sha256', jws.signingInput, key, jws.signature);
  }
  return verify(null, jws.signingInput, key, jws.signature);
}

export type KeyImporter = (jwk: PublicJwk) => KeyObject;

/**
 * KeyObjects by their JWK text, bounded; when full it starts over (an import is cheap to redo). A JWK object seen
 * before (the dApp's settings hold the same objects until the owner changes them) skips even the text: serialising
 * an RSA JWK was ~3 µs of every token check.
 */
export function createKeyImporter(maxKeys = 1000): KeyImporter {
  const imported = new Map<string, KeyObject>();
  const byObject = new WeakMap<PublicJwk, KeyObject>();
  return (jwk) => {
    const seen = byObject.get(jwk);
    if (seen !== undefined) return seen;
    const text = JSON.stringify(jwk);
    let key = imported.get(text);
    if (key === undefined) {
      if (imported.size >= maxKeys) imported.clear();
      key = createPublicKey({ key: JSON.parse(text), format: 'jwk' });
      imported.set(text, key);
    }
    byObject.set(jwk, key);
    return key;
  };
}
