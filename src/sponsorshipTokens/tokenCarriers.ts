import { refuse, type TokenRefusal } from './tokenRefusal.js';

/** The key that carries the token in the ERC-7677 context and in webhookData (docs/guides/sponsorship-tokens.md). */
export const TOKEN_KEY = 'sponsorshipToken';

export type CarriedToken =
  | { readonly kind: 'none' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'refused'; readonly refusal: TokenRefusal };

/**
 * The one token a request carries, from the places the SDKs can put one unmodified: the `Authorization: Bearer`
 * header of the paymaster POST, the context's (or Biconomy mode object's) `sponsorshipToken`, and webhookData's
 * `sponsorshipToken`. Two carriers with different tokens, or a carrier with something other than a string, are
 * refused: which one would be meant is not Patron's guess. The query string is not read (see the guide).
 */
export function readCarriedToken(args: {
  authorization: string | undefined;
  contextToken: unknown;
  webhookData: Readonly<Record<string, unknown>>;
}): CarriedToken {
  const found: string[] = [];
  if (args.authorization !== undefined) {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(args.authorization);
    if (m?.[1] === undefined) {
      return refused('the Authorization header must be "Bearer <sponsorship token>"');
    }
    found.push(m[1]);
  }
  for (const [where, value] of [
    ['the context', args.contextToken],
    ['webhookData', args.webhookData[TOKEN_KEY]],
  ] as const) {
    if (value === undefined) continue;
    if (typeof value !== 'string') return refused(`${where}'s ${TOKEN_KEY} must be a string`);
    found.push(value);
  }
  const [first] = found;
  if (first === undefined) return { kind: 'none' };
  if (found.some((t) => t !== first)) return refused('the request carries two different sponsorship tokens');
  return { kind: 'token', token: first };
}

const refused = (message: string): CarriedToken => ({ kind: 'refused', refusal: refuse('malformed', message) });

/** webhookData as the dApp's webhook is shown it: the token taken out (the webhook gets the verified claims). */
export function withoutCarriedToken(webhookData: Readonly<Record<string, unknown>>): Record<string, unknown> {
  if (!Object.hasOwn(webhookData, TOKEN_KEY)) return { ...webhookData };
  const { [TOKEN_KEY]: _token, ...rest } = webhookData;
  return rest;
}
