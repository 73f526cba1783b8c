import { z } from 'zod';

/**
 * The wire format of a webhook call (spec §6) that the spec leaves open or that clients rely on: how a GET
 * webhook receives `webhookData`, and how an answer is read. Pure functions, used by webhookCaller.ts.
 */

/** The query parameter that carries `webhookData` of a GET webhook. */
export const GET_DATA_PARAMETER = 'data';

/**
 * GET encoding, decided because the spec leaves it open (spec §6, notes "Webhooks written for Biconomy"): one
 * parameter `data` holding `JSON.stringify(webhookData)`, percent-encoded with encodeURIComponent. A receiver
 * decodes it with `JSON.parse(new URL(req.url, base).searchParams.get('data'))` and gets exactly the object a
 * POST webhook finds in `body.data`. Chosen over one parameter per key because that cannot round-trip types
 * (the string "1" and the number 1 would look alike) and its keys could collide with the URL's own parameters.
 * The registered URL's query string is kept byte for byte, except any `data` parameter of its own, which is
 * dropped: `data` is reserved, so `searchParams.get('data')` can only return Patron's. The fragment is dropped.
 */
export function withGetData(rawUrl: string, webhookData: Record<string, unknown>): string {
  const url = new URL(rawUrl);
  const kept = url.search
    .slice(1)
    .split('&')
    .filter((pair) => pair !== '' && [...new URLSearchParams(pair).keys()][0] !== GET_DATA_PARAMETER);
  kept.push(`${GET_DATA_PARAMETER}=${encodeURIComponent(JSON.stringify(webhookData))}`);
  url.search = `?${kept.join('&')}`;
  url.hash = '';
  return url.toString();
}

/**
 * The answer: a JSON object whose `arePoliciesVerified` is the boolean true. Biconomy's sample receiver spells
 * it `arePoliciesVerifed`, and their backend accepts that, so we do too; if both are present they must agree.
 */
const verdictBody = z
  .object({ arePoliciesVerified: z.boolean().optional(), arePoliciesVerifed: z.boolean().optional() })
  .transform((v) => v.arePoliciesVerified ?? v.arePoliciesVerifed)
  .pipe(z.boolean());
const hasConflictingSpellings = (v: unknown): boolean =>
  typeof v === 'object' &&
  v !== null &&
  'arePoliciesVerified' in v &&
  'arePoliciesVerifed' in v &&
  v.arePoliciesVerified !== v.arePoliciesVerifed;

export function parseVerdictBody(bytes: Uint8Array): 'verified' | 'denied' | 'invalid' {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return 'invalid';
  }
  const parsed = verdictBody.safeParse(json);
  if (!parsed.success || hasConflictingSpellings(json)) return 'invalid';
  return parsed.data ? 'verified' : 'denied';
}
