/**
 * The benchmarks' rate limits: budgets a load generator on 127.0.0.1 (thousands of calls a second from one IP
 * and one API key) never meets, so that the limiter runs and counts on every request, as in production, and
 * its cost is in the numbers, but no request is refused. A run can still set PATRON_RATE_LIMITS itself.
 */
const UNMET = { points: 100_000_000, windowSeconds: 60 };
export const BENCH_RATE_LIMITS =
  process.env.PATRON_RATE_LIMITS ??
  JSON.stringify({
    calls: { perKey: UNMET, perIp: UNMET },
    simulations: { perKey: UNMET, perIp: UNMET },
    webhookCalls: { perKey: UNMET, perIp: UNMET },
    http: { perIp: UNMET },
    admin: { perAccount: UNMET },
    devChain: { perIp: UNMET },
  });
