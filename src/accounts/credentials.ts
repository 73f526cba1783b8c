import { hash, randomBytes } from 'node:crypto';

/**
 * Generated secrets. Both kinds carry 192+ bits of entropy, so a fast SHA-256 is a safe lookup hash (no
 * dictionary to attack); the database stores only that hash, and for API keys also an encrypted copy.
 * Alphabet [A-Za-z0-9.] because `@biconomy/account` parses API keys out of paymaster URLs and only accepts
 * [A-Za-z0-9.-] there.
 */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  // Fixed width so every key has the same length whatever its leading bytes.
  const width = Math.ceil((bytes.length * 8) / Math.log2(62));
  return out.padStart(width, '0');
}

export const API_KEY_PREFIX = 'pk.';
export const AUTH_TOKEN_PREFIX = 'pat.';
/** Characters of a secret kept in clear for display ("pat.3kQ9xZ2a…"). */
const DISPLAY_PREFIX_LENGTH = 12;

export interface GeneratedSecret {
  readonly secret: string;
  readonly hash: string;
  readonly displayPrefix: string;
}

/** SHA-256 as hex; the one-shot `crypto.hash` costs a third of a Hash object (each credential cache miss runs it). */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

function generate(prefix: string, bytes: number): GeneratedSecret {
  const secret = prefix + base62(randomBytes(bytes));
  return { secret, hash: hashSecret(secret), displayPrefix: secret.slice(0, DISPLAY_PREFIX_LENGTH) };
}

export const generateApiKey = (): GeneratedSecret => generate(API_KEY_PREFIX, 24);
export const generateAuthToken = (): GeneratedSecret => generate(AUTH_TOKEN_PREFIX, 32);

/** Cheap shape check before any lookup, so junk never reaches the database or the cache. */
export const looksLikeApiKey = (s: string): boolean => /^pk\.[0-9A-Za-z]{33}$/.test(s);
export const looksLikeAuthToken = (s: string): boolean => /^pat\.[0-9A-Za-z]{43}$/.test(s);
