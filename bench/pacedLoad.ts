import { Pool } from 'undici';

/**
 * An open-loop load generator: requests are *scheduled* at a constant rate (one every 1/rate s, as real users
 * arrive) over a keep-alive pool, whatever the answers do, and each latency is measured from the request's
 * scheduled time, so a stalled server is charged for the requests it kept waiting (no coordinated omission).
 * autocannon's `overallRate` instead fires each connection's share of a second at the second's tick: at 50
 * connections and 1,000 req/s, bursts of 50 concurrent requests, whose p99 is the burst's depth, not the
 * service's latency at that rate (bench/README.md).
 */
export interface PacedResult {
  readonly sent: number;
  readonly ok: number;
  readonly failed: number;
  readonly seconds: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /**
   * How late the generator itself sent: the 99th percentile and the maximum of (sent − scheduled), ms. When
   * these are not small against p99, the generator's own pauses (its GC, a busy core) are in the latencies.
   */
  readonly sendLagP99: number;
  readonly sendLagMax: number;
}

export async function pacedLoad(args: {
  url: string;
  body: (i: number) => string;
  rate: number;
  seconds: number;
  connections: number;
  /** Accepts the answer (status and body text); anything else counts as failed. */
  check?: (status: number, text: string) => boolean;
}): Promise<PacedResult> {
  const url = new URL(args.url);
  const pool = new Pool(url.origin, { connections: args.connections, pipelining: 1 });
  const total = Math.round(args.rate * args.seconds);
  const intervalMs = 1000 / args.rate;
  const latencies: number[] = [];
  const sendLags: number[] = [];
  let ok = 0;
  let failed = 0;
  const inflight: Promise<void>[] = [];
  const started = performance.now();
  const send = (i: number, scheduledAt: number) =>
    pool
      .request({
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: args.body(i),
      })
      .then(async (res) => {
        const text = await res.body.text();
        latencies.push(performance.now() - scheduledAt);
        if (args.check === undefined ? res.statusCode === 200 : args.check(res.statusCode, text)) ok += 1;
        else failed += 1;
      })
      .catch(() => {
        latencies.push(performance.now() - scheduledAt);
        failed += 1;
      });
  let next = 0;
  await new Promise<void>((resolve) => {
    // A 1 ms timer that sends every request whose time has come: timers are coarse, the schedule is not.
    const timer = setInterval(() => {
      const now = performance.now();
      while (next < total && started + next * intervalMs <= now) {
        const scheduledAt = started + next * intervalMs;
        sendLags.push(now - scheduledAt);
        inflight.push(send(next, scheduledAt));
        next += 1;
      }
      if (next >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });
  await Promise.all(inflight);
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  const sorted = (xs: number[]) => xs.sort((x, y) => x - y);
  const at = (xs: readonly number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? 0;
  sorted(latencies);
  sorted(sendLags);
  return {
    sent: total,
    ok,
    failed,
    seconds,
    p50: at(latencies, 0.5),
    p99: at(latencies, 0.99),
    max: latencies.at(-1) ?? 0,
    sendLagP99: at(sendLags, 0.99),
    sendLagMax: sendLags.at(-1) ?? 0,
  };
}
