import { z } from 'zod';
import { registeredTokenKeySchema } from './registeredKeys.js';
import { pemToJwk } from './verifyJwt.js';

/** Enough for a rotation of each kind with room to spare; each key is tried on every token that could match it. */
export const MAX_REGISTERED_TOKEN_KEYS = 10;

/**
 * A dApp's sponsorship-token settings (column dapps.sponsorship_tokens, migration 0017; the admin API's body when
 * wired). `required`: every sponsorship must carry a valid token; false (the default) checks a token when one
 * comes, so a dApp can roll tokens out before requiring them.
 */
export const dappTokenSettingsSchema = z
  .object({
    required: z.boolean().default(false),
    keys: z.array(registeredTokenKeySchema).max(MAX_REGISTERED_TOKEN_KEYS).default([]),
  })
  .superRefine((s, ctx) => {
    if (s.required && s.keys.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['keys'], message: 'must hold a key when tokens are required' });
    }
    const ids = new Set<string>();
    s.keys.forEach((k, i) => {
      if (ids.has(k.id)) ctx.addIssue({ code: 'custom', path: ['keys', i, 'id'], message: `repeats ${k.id}` });
      ids.add(k.id);
    });
  });
export type DappTokenSettings = z.infer<typeof dappTokenSettingsSchema>;

/** A pasted PEM that does not import as its algorithm's public key, named for the admin API's answer. */
export async function pemProblems(settings: DappTokenSettings): Promise<string[]> {
  const problems: string[] = [];
  for (const k of settings.keys) {
    if (k.kind !== 'pem') continue;
    await pemToJwk({ pem: k.pem, alg: k.alg }).catch(() => {
      problems.push(`keys: ${k.id} is not a PEM (SPKI) public key for ${k.alg}`);
    });
  }
  return problems;
}
