import autocannon from 'autocannon';

/**
 * Closed-loop load with autocannon: `connections` keep-alive connections POST JSON back to back (or at
 * `overallRate`), each body from `body()`. Returns autocannon's result and the raw 99th percentile of the
 * measured response times (autocannon's own p99 adds its coordinated-omission correction, see README.md).
 */
export interface ClosedLoadResult {
  readonly result: autocannon.Result;
  readonly rawP99: number;
  readonly failed: number;
}

export async function closedLoad(args: {
  url: string;
  connections: number;
  duration: number;
  /** Stop after this many requests instead (autocannon's `amount`; `duration` is then ignored). */
  amount?: number;
  overallRate?: number;
  body: () => string;
  /** Each request's path (on the url's host), when it changes per request: the spread-keys scenario. */
  path?: () => string;
}): Promise<ClosedLoadResult> {
  const times: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: args.url,
        connections: args.connections,
        duration: args.duration,
        ...(args.amount === undefined ? {} : { amount: args.amount }),
        ...(args.overallRate === undefined ? {} : { overallRate: args.overallRate }),
        requests: [
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            setupRequest: (req) => {
              req.body = args.body();
              if (args.path !== undefined) req.path = args.path();
              return req;
            },
          },
        ],
      },
      (err: unknown, r) => (err ? reject(err) : resolve(r)),
    );
    instance.on('response', (_client, _status, _bytes, ms) => times.push(ms));
  });
  times.sort((x, y) => x - y);
  return {
    result,
    rawP99: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))] ?? 0,
    failed: result.non2xx + result.errors + result.timeouts,
  };
}
