import { createPublicKey } from 'node:crypto';
import { algorithmOfJwk, type JwtAlgorithm, type PublicJwk } from '../dappSettings/registeredTokenKeys.js';

/** A PEM (SPKI) public key as a JWK of its algorithm, without a kid: a pasted PEM has none, so it matches any. */
export async function pemToJwk(args: { pem: string; alg: JwtAlgorithm }): Promise<PublicJwk> {
  // createPublicKey would derive the public half of a pasted private key: a private key is refused, not used.
  if (!args.pem.trimStart().startsWith('-----BEGIN PUBLIC KEY-----')) throw new Error('not a PEM public key');
  const key = createPublicKey(args.pem);
  const jwk = key.export({ format: 'jwk' });
  const kty = jwk.kty ?? '';
  if (key.type !== 'public' || algorithmOfJwk({ kty, crv: jwk.crv }) !== args.alg) {
    throw new Error(`not a ${args.alg} public key`);
  }
  return { ...jwk, kty, alg: args.alg };
}
