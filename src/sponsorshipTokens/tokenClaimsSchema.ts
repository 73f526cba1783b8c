import { getAddress, isAddress } from 'viem';
import { z } from 'zod';

const address = z
  .string({ error: 'must be an address' })
  .refine((v) => isAddress(v, { strict: false }), { error: 'must be a 0x-prefixed 20-byte address' })
  .transform((v) => getAddress(v));

/** The most contracts one token may list: a bound on work per request, far above any real op's calls. */
export const MAX_TOKEN_CONTRACTS = 50;

/**
 * The claims Patron reads from a JWT payload, beyond what jose checks (signature, `aud`, `exp`, `nbf`, `iat`).
 * Bounded so a token cannot make Patron store or compare unbounded strings.
 */
export const jwtClaimsSchema = z.object({
  sub: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(256),
  jti: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(256),
  exp: z.number({ error: 'must be a number' }).int({ error: 'must be whole seconds' }),
  nbf: z.number().int().optional(),
  iat: z.number().int().optional(),
  sender: address.optional(),
  /** The end user's own address (their wallet or EOA): what a gating rule with `subject: 'user'` reads. */
  addr: address.optional(),
  maxCostWei: z
    .string({ error: 'must be a decimal string of wei' })
    .regex(/^\d{1,78}$/, { error: 'must be a decimal string of wei' })
    .transform((v) => BigInt(v))
    .optional(),
  // Empty would read as "no contract at all" or as "any": refused, leave it out for any.
  contracts: z
    .array(address)
    .min(1, { error: 'must list at least one contract (leave it out to allow any)' })
    .max(MAX_TOKEN_CONTRACTS)
    .optional(),
});

export type JwtClaims = z.infer<typeof jwtClaimsSchema>;

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const isClaimString = (v: unknown): v is string => typeof v === 'string' && v.length >= 1 && v.length <= 256;
const isOptionalInt = (v: unknown) => v === undefined || Number.isSafeInteger(v);

/**
 * The claims of the common token (sub, jti, exp, optional nbf/iat/sender/addr) read without zod, as jwtClaimsSchema
 * reads them: every token pays this on the signing path (~3 µs through the schema). undefined when the payload has
 * anything else (maxCostWei, contracts) or anything wrong: then the schema reads it, and names the problem.
 */
export function readCommonJwtClaims(payload: Readonly<Record<string, unknown>>): JwtClaims | undefined {
  const { sub, jti, exp, nbf, iat, sender, addr } = payload;
  if (payload.maxCostWei !== undefined || payload.contracts !== undefined) return undefined;
  if (!isClaimString(sub) || !isClaimString(jti) || !Number.isSafeInteger(exp)) return undefined;
  if (!isOptionalInt(nbf) || !isOptionalInt(iat)) return undefined;
  if (sender !== undefined && !(typeof sender === 'string' && HEX_ADDRESS.test(sender))) return undefined;
  if (addr !== undefined && !(typeof addr === 'string' && HEX_ADDRESS.test(addr))) return undefined;
  return {
    sub,
    jti,
    exp: exp as number,
    nbf: nbf as number | undefined,
    iat: iat as number | undefined,
    sender: sender === undefined ? undefined : getAddress(sender as string),
    addr: addr === undefined ? undefined : getAddress(addr as string),
    maxCostWei: undefined,
    contracts: undefined,
  };
}

export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue === undefined ? 'is malformed' : `${issue.path.join('.') || 'token'} ${issue.message}`;
}
