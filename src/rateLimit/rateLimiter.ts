import type pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Budget } from '../config/rateLimitSettings.js';
import { RateLimitedError } from '../errors/PatronError.js';

/**
 * Counts what keys spend against their budgets, through rate-limiter-flexible. Where the counts live:
 * - `memory`: in this process (SQLite, the embedded default, runs one process, so this is exact);
 * - `postgres`: in the `rate_limits` table (migration 0005), so that every process on the database shares
 *   them. A key over its budget is then blocked in this process's memory until its window ends (the library's
 *   in-memory block), so refusing an abusive client costs no query; and if the database cannot be reached,
 *   counting falls back to this process's memory (the library's insurance limiter) rather than failing.
 */
export type RateLimitStore =
  | { readonly kind: 'memory' }
  | { readonly kind: 'postgres'; readonly pool: pg.Pool; readonly tableName?: string };

export interface RateLimiter {
  /**
   * Spends `cost` units of `key` under `budget`; throws RateLimitedError (naming `limit`, "calls.perKey", and
   * `what` was spent) when the window's budget is exceeded. A refused spend is still counted.
   */
  take(args: { limit: string; what: string; key: string; budget: Budget; cost?: number }): Promise<void>;
}

type Limiter = RateLimiterMemory | RateLimiterPostgres;

export function createRateLimiter(store: RateLimitStore): RateLimiter {
  // One limiter per (limit, budget): a dApp's override has its own counters, a change of budget starts afresh.
  const limiters = new Map<string, Limiter>();
  const limiterFor = (limit: string, budget: Budget): Limiter => {
    const name = `${limit}:${budget.points}/${budget.windowSeconds}`;
    let limiter = limiters.get(name);
    if (limiter === undefined) {
      const common = { keyPrefix: name, points: budget.points, duration: budget.windowSeconds };
      limiter =
        store.kind === 'memory'
          ? new RateLimiterMemory(common)
          : new RateLimiterPostgres({
              ...common,
              storeClient: store.pool,
              storeType: 'pool',
              tableName: store.tableName ?? 'rate_limits',
              tableCreated: true,
              inMemoryBlockOnConsumed: budget.points + 1,
              insuranceLimiter: new RateLimiterMemory(common),
            });
      limiters.set(name, limiter);
    }
    return limiter;
  };

  return {
    async take({ limit, what, key, budget, cost = 1 }) {
      try {
        await limiterFor(limit, budget).consume(key, cost);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        throw new RateLimitedError({ limit, what, retryAfterSeconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) });
      }
    },
  };
}
