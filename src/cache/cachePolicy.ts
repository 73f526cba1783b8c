import type { TtlCacheOptions } from './ttlCache.js';

/**
 * How the credential, webhook and policy caches (accountService, webhookService, policyService) live, decided once
 * from the configuration and the store:
 * - With a store that can tell when another process wrote, an entry stays until that number moves or
 *   LOCAL_MAX_AGE_MS passes. SQLite: the change counter (migration 0014) that every commit to a cached table moves
 *   (the CLI's, another instance's, this one's), read at most every CHANGE_POLL_MS, so another process's change (a revoked token,
 *   a rotated key) is seen within that, and a lookup costs no query while nothing changed. PostgreSQL: the count of
 *   `patron_changes` notifications (store/db/changeFeed.ts), read on every lookup (it costs nothing), so the change is
 *   seen within a notification's latency. With traffic spread over 100,000 dApps every request was a miss under a
 *   short TTL, since a key came back long after it.
 * - Otherwise (an in-memory database, or a store that cannot tell) entries live `ttlMs` (PATRON_CACHE_TTL_MS).
 * `ttlMs` 0 turns caching off in both cases. This process's own writes clear the affected entries at once.
 */
export const CHANGE_POLL_MS = 100;
export const LOCAL_MAX_AGE_MS = 5 * 60_000;

export type CachePolicy = Pick<TtlCacheOptions, 'ttlMs' | 'maxEntries' | 'generation'>;

export function cachePolicy(args: {
  readonly ttlMs: number;
  readonly maxEntries: number;
  /**
   * A number that moves when another process committed a change, and how often at most to read it; undefined where
   * none exists.
   */
  readonly externalChanges: { readonly generation: () => number; readonly pollMs: number } | undefined;
  readonly now: () => number;
}): CachePolicy {
  const { ttlMs, maxEntries, externalChanges, now } = args;
  if (externalChanges === undefined || ttlMs === 0) return { ttlMs, maxEntries };
  const read = externalChanges.generation;
  if (externalChanges.pollMs <= 0) return { ttlMs: LOCAL_MAX_AGE_MS, maxEntries, generation: read };
  const pollMs = externalChanges.pollMs;
  let value = read();
  let readAt = now();
  const generation = () => {
    const t = now();
    // A clock stepped back (NTP, a resumed VM) must not stop the poll until it catches up again.
    if (t < readAt || t - readAt >= pollMs) {
      value = read();
      readAt = t;
    }
    return value;
  };
  return { ttlMs: LOCAL_MAX_AGE_MS, maxEntries, generation };
}
