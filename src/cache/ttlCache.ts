/**
 * A small in-process cache with a time-to-live, for hot-path lookups (credential → account/dApp, dApp →
 * webhooks). Writes made by this process delete the affected entries at once; writes made by another process
 * (the CLI, another service instance) are seen once the entry expires, so `ttlMs` is the bound on cross-process
 * staleness, or, with a `generation` (a number that moves whenever a cached table was written: SQLite's
 * change counter, see cachePolicy.ts), as soon as it moves. Concurrent misses for one key share one load.
 */
export interface TtlCache<V> {
  get(key: string, load: () => Promise<V>): Promise<V>;
  delete(key: string): void;
  clear(): void;
}

interface Node<V> {
  readonly key: string;
  value: V;
  expiresAt: number;
  /** The generation read before the value was loaded: a later one means it may be stale. */
  readonly generation: number;
  /** Towards the most recently used end. */
  newer: Node<V> | undefined;
  /** Towards the least recently used end. */
  older: Node<V> | undefined;
}

/**
 * Least-recently-used eviction over a Map and a doubly linked list: every operation is O(1). Evicting through
 * the Map's own insertion order (`keys().next()` after deletes) is not: V8 keeps deleted slots until it
 * rehashes and walks them on every such call, which cost ~12 µs per request once 10,000 keys were in play.
 */
export interface TtlCacheOptions<V = unknown> {
  readonly ttlMs: number;
  readonly maxEntries: number;
  /** Moves when the source changed outside this process; an entry loaded under another value is a miss. */
  readonly generation?: () => number;
  readonly now?: () => number;
  /**
   * The life of one loaded value, when it depends on the value (`ttlMs` otherwise); 0 or less: not cached at all.
   * The sender-code cache (chain/senderCode.ts) keeps a contract's code long and an EIP-7702 delegation briefly.
   */
  readonly ttlOf?: (value: V) => number;
}

export function createTtlCache<V>(args: TtlCacheOptions<V>): TtlCache<V> {
  const now = args.now ?? Date.now;
  const generation = args.generation ?? (() => 0);
  const entries = new Map<string, Node<V>>();
  /** Loads under way, with the generation each began under. */
  const inflight = new Map<string, { readonly promise: Promise<V>; readonly loadedAt: number }>();
  let newest: Node<V> | undefined;
  let oldest: Node<V> | undefined;

  const unlink = (n: Node<V>) => {
    if (n.newer === undefined) newest = n.older;
    else n.newer.older = n.older;
    if (n.older === undefined) oldest = n.newer;
    else n.older.newer = n.newer;
    n.newer = undefined;
    n.older = undefined;
  };
  const pushNewest = (n: Node<V>) => {
    n.older = newest;
    n.newer = undefined;
    if (newest === undefined) oldest = n;
    else newest.newer = n;
    newest = n;
  };
  const remove = (key: string) => {
    const n = entries.get(key);
    if (n === undefined) return;
    entries.delete(key);
    unlink(n);
  };
  const store = (key: string, value: V, loadedAt: number) => {
    remove(key);
    const ttlMs = args.ttlOf === undefined ? args.ttlMs : args.ttlOf(value);
    if (ttlMs <= 0) return;
    while (entries.size >= args.maxEntries && oldest !== undefined) remove(oldest.key);
    const n: Node<V> = {
      key,
      value,
      expiresAt: now() + ttlMs,
      generation: loadedAt,
      newer: undefined,
      older: undefined,
    };
    entries.set(key, n);
    pushNewest(n);
  };

  return {
    async get(key, load) {
      const hit = entries.get(key);
      if (hit !== undefined && hit.expiresAt > now() && hit.generation === generation()) {
        if (hit !== newest) {
          unlink(hit);
          pushNewest(hit);
        }
        return hit.value;
      }
      // Read before loading: a change made while the load runs must make this value stale, not current.
      const loadedAt = generation();
      // Join a load under way only if it began under the current generation (it may have read the old row).
      const pending = inflight.get(key);
      if (pending !== undefined && pending.loadedAt === loadedAt) return pending.promise;
      const p = load().then(
        (value) => {
          // A delete() during the load removed the inflight entry: do not cache what may be stale.
          if (inflight.get(key)?.promise === p && (args.ttlMs > 0 || args.ttlOf !== undefined)) {
            store(key, value, loadedAt);
          }
          if (inflight.get(key)?.promise === p) inflight.delete(key);
          return value;
        },
        (err: unknown) => {
          if (inflight.get(key)?.promise === p) inflight.delete(key);
          throw err;
        },
      );
      inflight.set(key, { promise: p, loadedAt });
      return p;
    },
    delete(key) {
      remove(key);
      inflight.delete(key);
    },
    clear() {
      entries.clear();
      inflight.clear();
      newest = undefined;
      oldest = undefined;
    },
  };
}
