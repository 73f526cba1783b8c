import { createTtlCache } from '../cache/ttlCache.js';
import type { HostResolver } from './webhookUrlPolicy.js';

/**
 * A host resolver that remembers answers for `ttlMs`, for the webhook call path.
 *
 * Why: every sponsorship with a webhook resolves the webhook's host (the SSRF guard's rebinding check). Through
 * the system resolver that is a getaddrinfo on libuv's small thread pool (4 threads by default): ~17 µs of CPU
 * for a name in /etc/hosts, and a round trip to the DNS server for a real one, so under load lookups queue
 * behind each other and behind file-system work, and that wait lands in every sponsorship's latency.
 *
 * Why it is safe: the cache only changes *when* a name is looked up again, never what is done with the answer.
 * The caller still checks every cached address (production refuses non-public ones) and connects only to the
 * addresses it checked (its connection lookup is pinned to them), so a name that is rebound to an internal
 * address is refused as soon as the rebound answer is fetched, and never reached before. What the cache
 * delays is picking up a legitimate change of address, by at most `ttlMs`: as any DNS cache does.
 *
 * Concurrent misses for one name share one lookup. Failures and empty answers are not remembered. Names are
 * case-insensitive (RFC 4343), so the key is lower-cased. `ttlMs` 0 returns `resolve` itself.
 */
export function cachingResolver(
  resolve: HostResolver,
  args: { ttlMs: number; maxEntries?: number; now?: () => number },
): HostResolver {
  if (args.ttlMs <= 0) return resolve;
  const cache = createTtlCache<readonly string[]>({
    ttlMs: args.ttlMs,
    maxEntries: args.maxEntries ?? 10_000,
    ...(args.now === undefined ? {} : { now: args.now }),
  });
  return async (host) => {
    const key = host.toLowerCase();
    const addresses = await cache.get(key, () => resolve(host));
    if (addresses.length === 0) cache.delete(key);
    // A copy: the cached answer serves every caller within the window, none may change it for the others.
    return [...addresses];
  };
}
