/**
 * What the audit log keeps of a document before and after a change: the document with every secret replaced by
 * `[redacted]`, so the log can be read by every member (viewers included) and kept for years without becoming a
 * second copy of the credentials. A secret is recognised twice over: by its field's name (signingSecret, apiKey,
 * authToken, password, a sealed ciphertext, a hash) and by its own shape wherever it sits (an API key `pk.…`, an
 * auth token `pat.…`, a Standard Webhooks secret `whsec_…`), so a secret under a new field name is still caught.
 */
export const REDACTED = '[redacted]';

const SECRET_FIELD = /secret|password|apikey|authtoken|privatekey|ciphertext|hash$/i;
const SECRET_VALUE = /^(pk\.[0-9A-Za-z]{20,}|pat\.[0-9A-Za-z]{20,}|whsec_[A-Za-z0-9+/=]{16,})$/;

/** Fields that name a secret without being one (its display prefix, an id). */
const NOT_SECRET_FIELD = /prefix$|id$/i;

export function redactSecrets(value: unknown): unknown {
  if (typeof value === 'string') return SECRET_VALUE.test(value) ? REDACTED : value;
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        SECRET_FIELD.test(k) && !NOT_SECRET_FIELD.test(k) && v !== null ? REDACTED : redactSecrets(v),
      ]),
    );
  }
  return value;
}

/** The JSON the audit log stores, secrets redacted; null for "nothing" (before a creation, after a deletion). */
export function auditJson(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return JSON.stringify(redactSecrets(value), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}
