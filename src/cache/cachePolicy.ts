import type { TtlCacheOptions } from './ttlCache.js';

/**
 * How the credential and webhook caches (accountService, webhookService) live, decided once from the
 * configuration and the store:
 * - With a store that can tell when another process wrote (SQLite: `PRAGMA data_version`, which moves on every
 *   commit by another connection, the CLI's or another instance's), an entry stays until that number moves or
 *   LOCAL_MAX_AGE_MS passes. The number is read at most every CHANGE_POLL_MS, so another process's change (a
 *   revoked token, a rotated key) is seen within that, and a lookup costs no query while nothing changed: with
 *   traffic spread over 100,000 dApps every request was otherwise a miss, since a key came back long after a
 *   2 s TTL.
 * - Otherwise (PostgreSQL, where many processes write and no such number exists) entries live `ttlMs`
 *   (PATRON_CACHE_TTL_MS), the documented bound on cross-process staleness.
 * `ttlMs` 0 turns caching off in both cases. This process's own writes clear the affected entries at once.
 */
export const CHANGE_POLL_MS = 100;
export const LOCAL_MAX_AGE_MS = 5 * 60_000;

export type CachePolicy = Pick<TtlCacheOptions, 'ttlMs' | 'maxEntries' | 'generation'>;

export function cachePolicy(args: {
  readonly ttlMs: number;
  readonly maxEntries: number;
  /** A number that moves when another process committed a change; undefined where none exists. */
  readonly externalChanges: (() => number) | undefined;
  readonly now: () => number;
}): CachePolicy {
  const { ttlMs, maxEntries, externalChanges, now } = args;
  if (externalChanges === undefined || ttlMs === 0) return { ttlMs, maxEntries };
  let value = externalChanges();
  let readAt = now();
  const generation = () => {
    const t = now();
    // A clock stepped back (NTP, a resumed VM) must not stop the poll until it catches up again.
    if (t < readAt || t - readAt >= CHANGE_POLL_MS) {
      value = externalChanges();
      readAt = t;
    }
    return value;
  };
  return { ttlMs: LOCAL_MAX_AGE_MS, maxEntries, generation };
}
