import type { Config } from '../config/config.js';
import type { Store } from '../store/store.js';
import { createRateLimiter, type RateLimiter } from './rateLimiter.js';
import { createRequestLimits, type RequestLimits } from './requestLimits.js';

/**
 * The rate limits as deps.ts builds them (docs/guides/rate-limits.md): counted across instances in PostgreSQL when
 * the configured limit store is `database` (PATRON_RATE_LIMIT_STORE; the default there), else in this process.
 */
export function buildRequestLimits(args: {
  readonly config: Pick<Config, 'rateLimits'>;
  readonly store: Pick<Store, 'pgPool'>;
  /** A limiter instead of the configured one: the benchmark's guard-less reference (bench/sponsorServer.ts). */
  readonly rateLimiter?: RateLimiter | undefined;
}): { readonly limits: RequestLimits; readonly rateLimiter: RateLimiter } {
  const { config, store } = args;
  const rateLimiter =
    args.rateLimiter ??
    createRateLimiter(
      config.rateLimits.store === 'database' && store.pgPool !== undefined
        ? { kind: 'postgres', pool: store.pgPool }
        : { kind: 'memory' },
    );
  return { rateLimiter, limits: createRequestLimits({ limiter: rateLimiter, settings: config.rateLimits.settings }) };
}
