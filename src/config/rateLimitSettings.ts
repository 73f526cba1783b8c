import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { closedObject, issueText } from './closedObject.js';

/**
 * Rate limits (docs/guides/rate-limits.md, "Rate limits"): how many units each key may spend per window. A unit is a JSON-RPC
 * call (every call of a batch counts), a simulation, a webhook call, a sign-in attempt, or an HTTP request.
 * Fixed windows (the library's model): a key may spend `points` per `windowSeconds`, counted from its first
 * use in the window.
 */
export interface Budget {
  readonly points: number;
  readonly windowSeconds: number;
}

/** What a dApp's traffic spends, per API key and per client IP: settable per deployment and per dApp. */
export interface DappRateLimits {
  /** Every paymaster JSON-RPC call. */
  readonly calls: { readonly perKey: Budget; readonly perIp: Budget };
  /** Every simulation on chain (calculateGasLimits, missing limits, the token mode's final data). */
  readonly simulations: { readonly perKey: Budget; readonly perIp: Budget };
  /** Every call to one of the dApp's webhooks (a request to a dApp with 3 active webhooks spends 3). */
  readonly webhookCalls: { readonly perKey: Budget; readonly perIp: Budget };
}

export interface RateLimitSettings extends DappRateLimits {
  /** Dashboard sign-in attempts, counted before the password is checked. */
  readonly signIn: { readonly perIp: Budget; readonly perEmail: Budget };
  /** Every request to a REST route, the dashboard, health and OpenAPI, authenticated or not. */
  readonly http: { readonly perIp: Budget };
  /** Every authenticated admin API request (auth token or dashboard session, and the spec's webhook API). */
  readonly admin: { readonly perAccount: Budget };
  /** The embedded dev chain's JSON-RPC (`/chain/…`), which SDKs and bundlers call heavily in development. */
  readonly devChain: { readonly perIp: Budget };
}

const perMinute = (points: number): Budget => ({ points, windowSeconds: 60 });

/**
 * Defaults that a normal dApp never meets. A sponsored call costs ~0.3 ms of CPU, a simulation several ms, a
 * sign-in ~90 ms of scrypt; one client IP may be a carrier-grade NAT with many users behind it.
 */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = Object.freeze({
  calls: { perKey: perMinute(12_000), perIp: perMinute(1_200) }, // 200/s per dApp, 20/s per IP
  simulations: { perKey: perMinute(3_000), perIp: perMinute(300) }, // 50/s per dApp, 5/s per IP
  webhookCalls: { perKey: perMinute(6_000), perIp: perMinute(600) },
  signIn: { perIp: perMinute(20), perEmail: perMinute(10) },
  http: { perIp: perMinute(1_200) },
  admin: { perAccount: perMinute(1_200) },
  devChain: { perIp: perMinute(60_000) },
});

const budgetSchema = closedObject(
  {
    points: z
      .number({ error: 'points must be a whole number from 1 to 100000000' })
      .int({ error: 'points must be a whole number from 1 to 100000000' })
      .min(1, { error: 'points must be a whole number from 1 to 100000000' })
      .max(100_000_000, { error: 'points must be a whole number from 1 to 100000000' }),
    windowSeconds: z
      .number({ error: 'windowSeconds must be a whole number from 1 to 86400' })
      .int({ error: 'windowSeconds must be a whole number from 1 to 86400' })
      .min(1, { error: 'windowSeconds must be a whole number from 1 to 86400' })
      .max(86_400, { error: 'windowSeconds must be a whole number from 1 to 86400' }),
  },
  { notObject: 'a budget is {"points": n, "windowSeconds": s}' },
);

const pair = <K extends string>(keys: readonly K[]) =>
  closedObject(
    Object.fromEntries(keys.map((k) => [k, budgetSchema.optional()])) as Record<K, z.ZodOptional<typeof budgetSchema>>,
    { notObject: `must be an object of budgets: ${keys.join(', ')}` },
  ).optional();

// A dApp's calls are counted per IP before its API key is resolved, so calls.perIp is the deployment's alone.
const dappShape = {
  calls: pair(['perKey']),
  simulations: pair(['perKey', 'perIp']),
  webhookCalls: pair(['perKey', 'perIp']),
};

/** A dApp's override (its operator limits' `rateLimits`): any of its budgets, the rest from the deployment. */
export const dappRateLimitsOverrideSchema = closedObject(dappShape, { notObject: 'rateLimits must be an object' });
export type DappRateLimitsOverride = z.output<typeof dappRateLimitsOverrideSchema>;

/** The deployment's override (PATRON_RATE_LIMITS, JSON): any budget. */
export const rateLimitsOverrideSchema = closedObject(
  {
    ...dappShape,
    calls: pair(['perKey', 'perIp']),
    signIn: pair(['perIp', 'perEmail']),
    http: pair(['perIp']),
    admin: pair(['perAccount']),
    devChain: pair(['perIp']),
  },
  { notObject: 'PATRON_RATE_LIMITS must be a JSON object' },
);
export type RateLimitsOverride = z.output<typeof rateLimitsOverrideSchema>;

/** Each budget from the override where it sets one. */
export function applyRateLimitsOverride<T extends object>(base: T, override: object | undefined): T {
  if (override === undefined) return base;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [group, budgets] of Object.entries(override)) {
    if (budgets === undefined) continue;
    out[group] = { ...(out[group] as object), ...stripUndefined(budgets as Record<string, unknown>) };
  }
  return out as unknown as T;
}

function stripUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

export interface RateLimitConfig {
  readonly settings: RateLimitSettings;
  /** Where counts live: this process (`memory`) or the database, shared by every process (`database`). */
  readonly store: 'memory' | 'database';
  /**
   * Proxies whose X-Forwarded-For is believed (IPs, CIDRs, or proxy-addr's `loopback`, `linklocal`,
   * `uniquelocal`); empty: the client IP is the socket's peer, whatever a header says.
   */
  readonly trustedProxies: readonly string[];
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** PATRON_RATE_LIMITS (a JSON override), PATRON_RATE_LIMIT_STORE and PATRON_TRUSTED_PROXIES. */
export function rateLimitsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  storage: 'sqlite' | 'postgres',
): { config: RateLimitConfig; problems: string[] } {
  const problems: string[] = [];
  let override: RateLimitsOverride | undefined;
  const raw = env.PATRON_RATE_LIMITS?.trim() ?? '';
  if (raw !== '') {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      problems.push('PATRON_RATE_LIMITS must be JSON, e.g. {"calls":{"perIp":{"points":600,"windowSeconds":60}}}');
    }
    if (json !== undefined) {
      const parsed = rateLimitsOverrideSchema.safeParse(json);
      if (parsed.success) override = parsed.data;
      else {
        for (const issue of parsed.error.issues) problems.push(issueText({ root: 'PATRON_RATE_LIMITS', issue }));
      }
    }
  }
  const storeText = env.PATRON_RATE_LIMIT_STORE?.trim() ?? '';
  if (storeText !== '' && storeText !== 'memory' && storeText !== 'database') {
    problems.push('PATRON_RATE_LIMIT_STORE must be "memory" or "database"');
  }
  if (storeText === 'database' && storage !== 'postgres') {
    problems.push('PATRON_RATE_LIMIT_STORE=database needs DATABASE_URL (PostgreSQL)');
  }
  const store =
    storeText === 'memory' || storeText === 'database' ? storeText : storage === 'postgres' ? 'database' : 'memory';
  const trustedProxies = (env.PATRON_TRUSTED_PROXIES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const p of trustedProxies) {
    if (!PROXY_NAMES.has(p) && !ipaddr.isValid(p) && !isCidr(p)) {
      problems.push(
        `PATRON_TRUSTED_PROXIES: "${p.slice(0, 60)}" is not an IP address, a CIDR or loopback/linklocal/uniquelocal`,
      );
    }
  }
  return {
    config: Object.freeze({
      settings: applyRateLimitsOverride(DEFAULT_RATE_LIMITS, override),
      store: storage === 'postgres' ? store : 'memory',
      trustedProxies: Object.freeze(trustedProxies),
    }),
    problems,
  };
}

function isCidr(s: string): boolean {
  try {
    ipaddr.parseCIDR(s);
    return true;
  } catch {
    return false;
  }
}
