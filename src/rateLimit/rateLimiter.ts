import type pg from 'pg';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Budget } from '../config/rateLimitSettings.js';
import { RateLimitedError } from '../errors/PatronError.js';
import { type CountResult, createPgBatchedCounts } from './pgBatchedCounts.js';

/**
 * Counts what keys spend against their budgets, through rate-limiter-flexible. Where the counts live:
 * - `memory`: in this process (SQLite, the embedded default, runs one process, so this is exact);
 * - `postgres`: in the `rate_limits` table (migration 0005), so that every process on the database shares
 *   them, written in batches (pgBatchedCounts.ts: one upsert for the spends waiting in the process, not one per
 *   spend, exact all the same). A key over its budget is then blocked in this process's memory until its window
 *   ends, so refusing an abusive client costs no query; and if the database cannot be reached, counting falls back
 *   to this process's memory rather than failing.
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
  /** Spends refused since start, per limit ("calls.perKey"): patron_rate_limited_total reads it at scrape time. */
  refusals(): ReadonlyMap<string, number>;
}

export function createRateLimiter(store: RateLimitStore): RateLimiter {
  // One limiter per (limit, budget): a dApp's override has its own counters, a change of budget starts afresh.
  const limiters = new Map<string, RateLimiterMemory>();
  const nameOf = (limit: string, budget: Budget) => `${limit}:${budget.points}/${budget.windowSeconds}`;
  const memoryFor = (name: string, budget: Budget): RateLimiterMemory => {
    let limiter = limiters.get(name);
    if (limiter === undefined) {
      limiter = new RateLimiterMemory({ keyPrefix: name, points: budget.points, duration: budget.windowSeconds });
      limiters.set(name, limiter);
    }
    return limiter;
  };
  const inMemory = async (name: string, budget: Budget, key: string, cost: number): Promise<CountResult> => {
    try {
      await memoryFor(name, budget).consume(key, cost);
      return { ok: true };
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      return { ok: false, msBeforeNext: err.msBeforeNext };
    }
  };
  // PostgreSQL: rows `name:key` as rate-limiter-flexible's store wrote them; this process's memory when it fails.
  const shared =
    store.kind === 'postgres'
      ? createPgBatchedCounts({
          pool: store.pool,
          ...(store.tableName === undefined ? {} : { tableName: store.tableName }),
        })
      : undefined;

  // Per limit name: a handful of fixed names (requestLimits.ts), so the map and the metric's labels stay small.
  const refused = new Map<string, number>();
  return {
    refusals: () => refused,
    async take({ limit, what, key, budget, cost = 1 }) {
      const name = nameOf(limit, budget);
      const result =
        shared === undefined
          ? await inMemory(name, budget, key, cost)
          : await shared({
              key: `${name}:${key}`,
              cost,
              points: budget.points,
              windowMs: budget.windowSeconds * 1000,
              fallback: () => inMemory(name, budget, key, cost),
            });
      if (!result.ok) {
        refused.set(limit, (refused.get(limit) ?? 0) + 1);
        throw new RateLimitedError({
          limit,
          what,
          retryAfterSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
        });
      }
    },
  };
}
