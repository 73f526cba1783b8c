/**
 * The scope part of a `user` cap's ledger key (policyRules.ts capLedgerKey): the end user's id, the verified
 * sponsorship token's `sub`, written so that no two ids share a key and no id can forge another key's parts.
 * The key's parts are joined with `|`; an id could hold `|` (a `sub` is any string), so every character outside a
 * small readable set, `~` included, is written `~` and its UTF-16 code unit in 4 hex digits. That is injective
 * (a lone surrogate, which a JSON string may hold, keeps its own code unit) and keeps the usual ids (UUIDs,
 * `user_123`, `did:privy:…`, e-mail addresses) readable in the ledger and the request log.
 */

/** The longest user id: the verifiers' bound on a token's `sub` (JWT and voucher, src/sponsorshipTokens/). */
export const MAX_USER_ID_LENGTH = 256;

const KEPT = /^[A-Za-z0-9._:@+-]$/;

/** Whether the request carries a user id at all (an empty string is none). */
export function hasUser(user: string | undefined): user is string {
  return user !== undefined && user !== '';
}

/** The escaped id; throws on an empty id or one longer than MAX_USER_ID_LENGTH (no verified token gives one). */
export function userScopeKey(user: string): string {
  if (user.length === 0 || user.length > MAX_USER_ID_LENGTH) {
    throw new Error(`a user id must be 1 to ${MAX_USER_ID_LENGTH} characters, got ${user.length}`);
  }
  let out = '';
  for (let i = 0; i < user.length; i++) {
    const ch = user.charAt(i);
    out += KEPT.test(ch) ? ch : `~${user.charCodeAt(i).toString(16).padStart(4, '0')}`;
  }
  return out;
}
