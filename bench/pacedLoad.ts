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
  /** Requests measured (after the warm-up). */
  readonly sent: number;
  /** Requests sent during the warm-up, on the same schedule and connections, not measured. */
  readonly warmup: number;
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
  /**
   * Seconds of the same schedule sent first and not measured: they open the pool's connections and warm both
   * sides' JIT. Without it the first second's cold start was the p99 (one run: 81.8 ms cold, then 5.0 ms).
   * Failures during it still count.
   */
  warmupSeconds?: number;
  /** Accepts the answer (status and body text); anything else counts as failed. */
  check?: (status: number, text: string) => boolean;
}): Promise<PacedResult> {
  const url = new URL(args.url);
  const pool = new Pool(url.origin, { connections: args.connections, pipelining: 1 });
  const warmup = Math.round(args.rate * (args.warmupSeconds ?? 0));
  const total = warmup + Math.round(args.rate * args.seconds);
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
        if (i >= warmup) latencies.push(performance.now() - scheduledAt);
        if (args.check === undefined ? res.statusCode === 200 : args.check(res.statusCode, text)) ok += 1;
        else failed += 1;
      })
      .catch(() => {
        if (i >= warmup) latencies.push(performance.now() - scheduledAt);
        failed += 1;
      });
  let next = 0;
  await new Promise<void>((resolve) => {
    // A 1 ms timer that sends every request whose time has come: timers are coarse, the schedule is not.
    const timer = setInterval(() => {
      const now = performance.now();
      while (next < total && started + next * intervalMs <= now) {
        const scheduledAt = started + next * intervalMs;
        if (next >= warmup) sendLags.push(now - scheduledAt);
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
  // The measured part's duration: from the first measured request's scheduled time.
  const seconds = (performance.now() - started - warmup * intervalMs) / 1000;
  await pool.close();
  const sorted = (xs: number[]) => xs.sort((x, y) => x - y);
  const at = (xs: readonly number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? 0;
  sorted(latencies);
  sorted(sendLags);
  return {
    sent: total - warmup,
    warmup,
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
