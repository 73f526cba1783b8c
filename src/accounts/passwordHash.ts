import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Dashboard passwords, hashed with scrypt (memory-hard, RFC 7914) from node:crypto. The encoded form carries
 * its own salt and cost, `scrypt$N$r$p$salt$hash` (base64url), so the cost can be raised later without
 * invalidating stored hashes. N = 2^15, r = 8: 32 MiB and roughly 50-100 ms per hash on a server core, run on
 * libuv's thread pool (the async `scrypt`), so a sign-in never blocks the event loop.
 */
export interface ScryptCost {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

export const DEFAULT_SCRYPT_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  // maxmem must exceed 128 * N * r bytes (32 MiB at the default cost), node's default limit.
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: 256 * cost.N * cost.r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string, cost: ScryptCost = DEFAULT_SCRYPT_COST): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

const ENCODED = /^scrypt\$(\d{1,10})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{32,})$/;

/** Whether `password` matches `encoded`; false for a malformed encoding (never throws on stored data). */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const m = ENCODED.exec(encoded);
  if (m === null) return false;
  const [, n, r, p, salt, hash] = m;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  // Refuse absurd stored costs rather than allocate gigabytes for them.
  if (cost.N > 2 ** 20 || cost.N < 2 || (cost.N & (cost.N - 1)) !== 0 || cost.r > 32 || cost.p > 16) return false;
  const expected = Buffer.from(hash ?? '', 'base64url');
  const key = await derive(password, Buffer.from(salt ?? '', 'base64url'), cost);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash of a random password: verified against when the email is unknown, so timing does not tell. */
export async function decoyPasswordHash(): Promise<string> {
  return hashPassword(randomBytes(24).toString('base64url'));
}

/** A password for the demo account, printed once at first start: 144 random bits, copy-paste friendly. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
