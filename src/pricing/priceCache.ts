import { describeReadError, type PriceReading, type PriceSource } from './priceSource.js';

/**
 * The last good reading of every price source, refreshed in the background and read synchronously. A failed
 * refresh keeps the last good reading; a reading older than its source's max age is stale and prices nothing
 * (an unusable token is better than a wrong quote).
 */

export type PriceState =
  | {
      readonly fresh: true;
      readonly usdE18: bigint;
      readonly updatedAtMs: number;
      /** The instant this reading turns stale: a snapshot built from it must be rebuilt from then on. */
      readonly staleAtMs: number;
    }
  | { readonly fresh: false; readonly reason: string };

export interface PriceCacheLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface PriceCache {
  /** Synchronous; staleness is judged against `now()` at the call. */
  get(key: string): PriceState;
  /** Reads every source once, concurrently. Never rejects: a failure is remembered per source. */
  refresh(): Promise<void>;
}

interface Entry {
  readonly source: PriceSource;
  last: PriceReading | undefined;
  /** Why the latest read failed; undefined after a success. */
  failure: string | undefined;
}

export function createPriceCache(args: {
  sources: readonly PriceSource[];
  now: () => number;
  logger: PriceCacheLogger;
}): PriceCache {
  const { now, logger } = args;
  const entries = new Map<string, Entry>();
  for (const source of args.sources) {
    if (!entries.has(source.key)) entries.set(source.key, { source, last: undefined, failure: undefined });
  }

  async function refreshOne(entry: Entry): Promise<void> {
    const { source } = entry;
    try {
      const reading = await source.read();
      if (entry.failure !== undefined) logger.info({ source: source.label }, 'price source recovered');
      entry.last = reading;
      entry.failure = undefined;
    } catch (err) {
      const reason = describeReadError(err);
      // Once per failing streak: a source that fails every 30 s must not flood the log.
      if (entry.failure === undefined) {
        // `err`, not `reason`: the log's serializer adds the cause chain (ECONNREFUSED…), which the reason, shown
        // publicly in /api/chains, leaves out.
        logger.warn(
          { source: source.label, err },
          'price source failing; its last good price is kept until it is stale',
        );
      }
      entry.failure = reason;
    }
  }

  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return { fresh: false, reason: `unknown price source ${key}` };
      const { source, last, failure } = entry;
      const because = failure === undefined ? '' : ` (last error: ${failure})`;
      if (last === undefined) {
        return { fresh: false, reason: `${source.label}: ${failure ?? 'no price read yet'}` };
      }
      const staleAtMs = last.updatedAtMs + source.maxAgeMs;
      if (now() >= staleAtMs) {
        const ageSeconds = Math.floor((now() - last.updatedAtMs) / 1000);
        return {
          fresh: false,
          reason: `${source.label}: price is stale (${ageSeconds} s old, max ${source.maxAgeMs / 1000} s)${because}`,
        };
      }
      return { fresh: true, usdE18: last.usdE18, updatedAtMs: last.updatedAtMs, staleAtMs };
    },
    async refresh() {
      await Promise.all([...entries.values()].map(refreshOne));
    },
  };
}
