import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/, spec:
 * https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md).
 * Each call carries `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature`
 * = `v1,` + base64(HMAC-SHA256(secret bytes, `${id}.${timestamp}.${body}`)). Receivers can verify with any
 * Standard Webhooks library, or with `verifyStandardWebhookSignature` below.
 */

const SECRET_PREFIX = 'whsec_';

/** The spec's default tolerance for the timestamp, against replays: five minutes either way. */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

/** A new secret in the spec's format: `whsec_` + base64 of 32 random bytes (the spec asks for 24 to 64). */
export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The HMAC key: the base64-decoded part after `whsec_` (the prefix is optional, as in the reference libraries). */
function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** A unique message id per call; receivers may use it to drop replays. */
export function newMessageId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/** The `webhook-signature` header value (one `v1` signature) for the given id, timestamp and body. */
export function signStandardWebhook(args: { secret: string; id: string; timestamp: number; body: string }): string {
  const mac = createHmac('sha256', secretBytes(args.secret))
    .update(`${args.id}.${args.timestamp}.${args.body}`)
    .digest('base64');
  return `v1,${mac}`;
}

/**
 * Verifies a received call. `signature` is the `webhook-signature` header: a space-separated list of
 * `version,signature` pairs (several during a secret rotation); one valid `v1` entry is enough. The timestamp
 * must be within `toleranceSeconds` of `now()` (milliseconds), in the past or the future. For a GET webhook
 * Patron signs the empty string as the body (its data travels in the query string, see webhookCaller.ts).
 */
export function verifyStandardWebhookSignature(args: {
  secret: string;
  id: string;
  timestamp: string | number;
  body: string;
  signature: string;
  toleranceSeconds?: number;
  now?: () => number;
}): boolean {
  const timestamp = typeof args.timestamp === 'number' ? args.timestamp : Number(args.timestamp);
  if (!Number.isSafeInteger(timestamp) || (typeof args.timestamp === 'string' && !/^\d+$/.test(args.timestamp))) {
    return false;
  }
  const nowSeconds = Math.floor((args.now ?? Date.now)() / 1000);
  if (Math.abs(nowSeconds - timestamp) > (args.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(signStandardWebhook({ ...args, timestamp }).slice('v1,'.length), 'base64');
  return args.signature.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    // Constant-time comparison, so the check does not reveal how much of a forged signature was right.
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
