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

export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue === undefined ? 'is malformed' : `${issue.path.join('.') || 'token'} ${issue.message}`;
}
