/**
 * A small in-process cache with a time-to-live, for hot-path lookups (credential → account/dApp, dApp →
 * webhooks). Writes made by this process delete the affected entries at once; writes made by another process
 * (the CLI, another service instance) are seen once the entry expires, so `ttlMs` is the documented bound on
 * cross-process staleness. Concurrent misses for one key share one load.
 */
export interface TtlCache<V> {
  get(key: string, load: () => Promise<V>): Promise<V>;
  delete(key: string): void;
  clear(): void;
}

export function createTtlCache<V>(args: { ttlMs: number; maxEntries: number; now?: () => number }): TtlCache<V> {
  const now = args.now ?? Date.now;
  const entries = new Map<string, { value: V; expiresAt: number }>();
  const inflight = new Map<string, Promise<V>>();
  return {
    async get(key, load) {
      const hit = entries.get(key);
      if (hit !== undefined && hit.expiresAt > now()) return hit.value;
      const pending = inflight.get(key);
      if (pending !== undefined) return pending;
      const p = load().then(
        (value) => {
          // A delete() during the load removed the inflight entry: do not cache what may be stale.
          if (inflight.get(key) === p && args.ttlMs > 0) {
            if (entries.size >= args.maxEntries) entries.delete(entries.keys().next().value as string);
            entries.delete(key);
            entries.set(key, { value, expiresAt: now() + args.ttlMs });
          }
          if (inflight.get(key) === p) inflight.delete(key);
          return value;
        },
        (err: unknown) => {
          if (inflight.get(key) === p) inflight.delete(key);
          throw err;
        },
      );
      inflight.set(key, p);
      return p;
    },
    delete(key) {
      entries.delete(key);
      inflight.delete(key);
    },
    clear() {
      entries.clear();
      inflight.clear();
    },
  };
}
