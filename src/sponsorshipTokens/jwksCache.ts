import { z } from 'zod';
import { type PublicJwk, publicJwkSchema } from '../dappSettings/registeredTokenKeys.js';

/**
 * Fetches a dApp's JWKS URL and returns its parsed JSON. In production the SSRF-checked fetch for tenant URLs
 * (the webhook URL policy, re-checked at call time with the connection pinned to the checked addresses, a timeout
 * and a body bound); injected so this module needs neither HTTP nor DNS.
 */
export type JwksFetcher = (url: string) => Promise<unknown>;

export interface JwksCache {
  /** The URL's usable keys: from the cache while fresh, else fetched. Throws when never fetched and unreachable. */
  keys(url: string): Promise<readonly PublicJwk[]>;
  /** Fetches the URL again unless it was fetched within the refetch interval; says whether it did. */
  refresh(url: string): Promise<boolean>;
}

/** The most keys read from one JWKS: a rotation needs two or three. */
export const MAX_JWKS_KEYS = 20;

const jwksSchema = z.object({ keys: z.array(z.unknown()) });

interface Entry {
  keys: readonly PublicJwk[];
  fetchedAtMs: number;
}

/**
 * A bounded cache of JWKS documents. A key the dApp rotated in is found by `refresh` on an unknown `kid`, at most
 * once per `refetchIntervalMs` per URL, so tokens with made-up kids cannot make Patron hammer the dApp's server.
 * A document that cannot be fetched again keeps serving the keys it had (the dApp's server having a bad minute
 * does not stop sponsorship); a failed fetch is not tried again within the refetch interval either.
 */
export function createJwksCache(args: {
  fetchJwks: JwksFetcher;
  ttlMs?: number;
  refetchIntervalMs?: number;
  maxEntries?: number;
  nowMs?: () => number;
}): JwksCache {
  const ttlMs = args.ttlMs ?? 10 * 60_000;
  const refetchIntervalMs = args.refetchIntervalMs ?? 60_000;
  const maxEntries = args.maxEntries ?? 1000;
  const now = args.nowMs ?? Date.now;
  const entries = new Map<string, Entry>();
  const pending = new Map<string, Promise<Entry>>();
  /** When each URL was last fetched or tried: the refetch throttle, failures included. */
  const attempts = new Map<string, number>();
  const recentlyTried = (url: string): boolean => {
    const at = attempts.get(url);
    return at !== undefined && now() - at < refetchIntervalMs;
  };

  const fetchEntry = (url: string): Promise<Entry> => {
    const inFlight = pending.get(url);
    if (inFlight !== undefined) return inFlight;
    attempts.delete(url);
    if (attempts.size >= maxEntries) attempts.clear(); // a bound, not a policy: clearing only allows one more try
    attempts.set(url, now());
    const p = (async () => {
      const doc = jwksSchema.parse(await args.fetchJwks(url));
      // Keys that are not public keys of our algorithms are skipped, not fatal: a JWKS may hold other uses' keys.
      const keys = doc.keys.flatMap((k) => {
        const r = publicJwkSchema.safeParse(k);
        return r.success ? [r.data] : [];
      });
      const entry = { keys: keys.slice(0, MAX_JWKS_KEYS), fetchedAtMs: now() };
      entries.delete(url);
      if (entries.size >= maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done !== true) entries.delete(oldest.value);
      }
      entries.set(url, entry);
      return entry;
    })().finally(() => pending.delete(url));
    pending.set(url, p);
    return p;
  };

  return {
    async keys(url) {
      const entry = entries.get(url);
      if (entry !== undefined && now() - entry.fetchedAtMs < ttlMs) return entry.keys;
      if (entry !== undefined && recentlyTried(url)) return entry.keys;
      try {
        return (await fetchEntry(url)).keys;
      } catch (err) {
        if (entry !== undefined) return entry.keys;
        throw err;
      }
    },
    async refresh(url) {
      if (recentlyTried(url)) return false;
      try {
        await fetchEntry(url);
        return true;
      } catch {
        return false;
      }
    },
  };
}
