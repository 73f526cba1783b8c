import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';

/**
 * A dApp backend's sponsorship-token issuer for tests (docs/guides/sponsorship-tokens.md): an ES256 key pair made
 * with jose, the public key as the `keys` entry the dApp registers, and `mint(claims)` for a JWT with sensible
 * defaults (a fresh jti, 5 minutes of life). A claim given as undefined is left out.
 */
export interface TokenIssuer {
  readonly kid: string;
  /** The dApp's settings registering this issuer's key: `{ required, keys: [{ kind: 'jwk', … }] }`. */
  settings(required?: boolean): {
    required: boolean;
    keys: { kind: 'jwk'; id: string; jwk: Record<string, unknown> }[];
  };
  mint(args: { aud: string; claims?: Record<string, unknown>; header?: Record<string, unknown> }): Promise<string>;
}

export async function createTokenIssuer(kid = `k-${randomUUID().slice(0, 8)}`): Promise<TokenIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256' };
  return {
    kid,
    settings: (required = true) => ({ required, keys: [{ kind: 'jwk', id: kid, jwk }] }),
    mint({ aud, claims, header }) {
      const now = Math.floor(Date.now() / 1000);
      const all = { sub: 'user-1', aud, exp: now + 300, iat: now, jti: randomUUID(), ...claims };
      const payload: JWTPayload = Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined));
      return new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid, ...header }).sign(privateKey);
    },
  };
}
