import { z } from 'zod';
import { registeredTokenKeySchema } from './registeredTokenKeys.js';

/**
 * A dApp's sponsorship-token settings (docs/guides/sponsorship-tokens.md): the owner's document, stored as JSON in
 * `dapps.sponsorship_tokens` (migration 0017) and kept parsed in the cached dApp record, so a call of a dApp with
 * none costs one property check. In config/ beside callerRestrictions.ts: the store parses the column, and the
 * verifier (sponsorshipTokens/) reads it.
 */

/** Enough for a rotation of each kind with room to spare; each key is tried on every token that could match it. */
export const MAX_REGISTERED_TOKEN_KEYS = 10;

/**
 * `required`: every sponsorship must carry a valid token; false (the default) checks a token when one comes, so a
 * dApp can roll tokens out before requiring them.
 */
export const dappTokenSettingsSchema = z
  .object(
    {
      required: z.boolean({ error: 'required must be true or false' }).default(false),
      keys: z
        .array(registeredTokenKeySchema, { error: 'keys must be an array of keys' })
        .max(MAX_REGISTERED_TOKEN_KEYS, { error: `keys may hold at most ${MAX_REGISTERED_TOKEN_KEYS} keys` })
        .default([]),
    },
    { error: 'sponsorship-token settings must be an object such as {"required":true,"keys":[…]}' },
  )
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

/**
 * The stored column as the cached record holds it: undefined when the dApp uses no tokens (no key registered: '{}',
 * the default), so the hot path's whole cost for such a dApp is `dapp.sponsorshipTokens === undefined`.
 */
export function sponsorshipTokensColumn(text: string): DappTokenSettings | undefined {
  if (text === '{}') return undefined;
  const settings = dappTokenSettingsSchema.parse(JSON.parse(text));
  return settings.keys.length === 0 ? undefined : Object.freeze(settings);
}
