import { getAddress, isAddress } from 'viem';
import { z } from 'zod';

/** The only JWT algorithms accepted: asymmetric, so a key registered with Patron can verify but never issue. */
export const JWT_ALGORITHMS = ['ES256', 'EdDSA', 'RS256'] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** kty (and crv) each algorithm needs: a key of another type is never tried (key confusion). */
const KEY_TYPES: Readonly<Record<JwtAlgorithm, { kty: string; crv?: string }>> = {
  ES256: { kty: 'EC', crv: 'P-256' },
  EdDSA: { kty: 'OKP', crv: 'Ed25519' },
  RS256: { kty: 'RSA' },
};

/** The algorithm a public JWK is for, from its kty/crv, or undefined when none of ours. */
export function algorithmOfJwk(jwk: { kty?: unknown; crv?: unknown }): JwtAlgorithm | undefined {
  return JWT_ALGORITHMS.find((alg) => {
    const t = KEY_TYPES[alg];
    return t.kty === jwk.kty && (t.crv === undefined || t.crv === jwk.crv);
  });
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** A public JWK of one of our algorithms; a private key or a symmetric one is refused at registration. */
export const publicJwkSchema = z
  .looseObject({
    kty: z.string({ error: 'must be a string' }),
    crv: z.string().optional(),
    alg: z.string().optional(),
    kid: z.string().max(200).optional(),
    use: z.string().optional(),
  })
  .superRefine((jwk, ctx) => {
    const members = jwk as Record<string, unknown>;
    if (PRIVATE_MEMBERS.some((m) => members[m] !== undefined)) {
      ctx.addIssue({ code: 'custom', message: 'is a private or symmetric key: register the public key only' });
      return;
    }
    const alg = algorithmOfJwk(jwk);
    if (alg === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must be an EC P-256, Ed25519 (OKP) or RSA public key' });
    } else if (jwk.alg !== undefined && jwk.alg !== alg) {
      ctx.addIssue({ code: 'custom', message: `says alg ${jwk.alg}, but a ${jwk.kty} key verifies ${alg} only` });
    }
  });
export type PublicJwk = z.infer<typeof publicJwkSchema>;

const addressSchema = z
  .string()
  .refine((v) => isAddress(v, { strict: false }), { error: 'must be a 0x-prefixed 20-byte address' })
  .transform((v) => getAddress(v));

/** A key a dApp registers for its sponsorship tokens (the admin API's body, when wired). `id` is Patron's. */
export const registeredTokenKeySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('jwk'), id: z.string(), jwk: publicJwkSchema }),
  z.object({ kind: z.literal('pem'), id: z.string(), pem: z.string().max(10_000), alg: z.enum(JWT_ALGORITHMS) }),
  z.object({
    kind: z.literal('jwksUrl'),
    id: z.string(),
    url: z.url({
      protocol: /^https?$/,
      error: 'url must be an http(s) URL (https in production): the JWKS of your backend',
    }),
  }),
  z.object({ kind: z.literal('address'), id: z.string(), address: addressSchema }),
]);
export type RegisteredTokenKey = z.infer<typeof registeredTokenKeySchema>;
