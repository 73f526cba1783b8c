import autocannon from 'autocannon';

/**
 * Closed-loop load (autocannon, keep-alive connections sending back to back, as closedLoad.ts) for a fixed number
 * of requests, where every answer's body is read and sorted: signed (HTTP 200 with `paymasterAndData`), a cap's
 * denial (JSON-RPC -32012 with `data.rule` 'cap'), or anything else. closedLoad.ts counts non-2xx answers only;
 * a cap benchmark must tell a denial from a failure, so this reads the bodies (autocannon's `onResponse`).
 *
 * Pairing a body with its latency: autocannon's client calls the request's `onResponse` and then, synchronously,
 * emits `response` with the response time (lib/httpClient.js, kOnMessageComplete), so the kind set by the first
 * is the kind of the latency the second reports.
 */
export type AnswerKind = 'signed' | 'capDenied' | 'other';

export interface ClassifiedLoadResult {
  readonly signed: number;
  readonly capDenied: number;
  readonly other: number;
  /** Transport errors and timeouts (no answer at all). */
  readonly errors: number;
  /** Up to five of the `other` answers, as received. */
  readonly otherSamples: readonly string[];
  /** Latencies in ms, sorted. */
  readonly signedMs: readonly number[];
  readonly deniedMs: readonly number[];
  /** ms from the start to the `stopAt`-th signature (undefined if fewer were signed). */
  readonly msToSigned: number | undefined;
  readonly seconds: number;
}

interface RpcAnswer {
  readonly result?: { readonly paymasterAndData?: unknown };
  readonly error?: { readonly code?: unknown; readonly data?: { readonly rule?: unknown } };
}

export function classify(status: number, body: string): AnswerKind {
  let json: RpcAnswer;
  try {
    json = JSON.parse(body) as RpcAnswer;
  } catch {
    return 'other';
  }
  const pad = json.result?.paymasterAndData;
  if (status === 200 && typeof pad === 'string' && pad.length > 2 && json.error === undefined) return 'signed';
  if (json.error?.code === -32012 && json.error.data?.rule === 'cap' && json.result === undefined) return 'capDenied';
  return 'other';
}

export async function classifiedLoad(args: {
  /** One URL, or one per instance: the connections and requests are split evenly between them. */
  url: string | readonly string[];
  connections: number;
  /** Requests to send in all. */
  amount: number;
  body: () => string;
  /** The signature count whose arrival time is reported (the cap). */
  markSigned: number;
}): Promise<ClassifiedLoadResult> {
  const signedMs: number[] = [];
  const deniedMs: number[] = [];
  const otherSamples: string[] = [];
  let other = 0;
  let msToSigned: number | undefined;
  const started = performance.now();
  const urls = typeof args.url === 'string' ? [args.url] : args.url;
  const share = (total: number, i: number) => Math.floor(total / urls.length) + (i < total % urls.length ? 1 : 0);
  const load = (url: string, i: number) =>
    new Promise<autocannon.Result>((resolve, reject) => {
      let last: AnswerKind = 'other';
      const instance = autocannon(
        {
          url,
          connections: share(args.connections, i),
          amount: share(args.amount, i),
          timeout: 30,
          requests: [
            {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              setupRequest: (req) => {
                req.body = args.body();
                return req;
              },
              onResponse: (status, body) => {
                last = classify(status, body);
                if (last === 'other') {
                  other++;
                  if (otherSamples.length < 5) otherSamples.push(`${status} ${body.slice(0, 400)}`);
                }
              },
            },
          ],
        },
        (err: unknown, r) => (err ? reject(err) : resolve(r)),
      );
      instance.on('response', (_client, _status, _bytes, ms) => {
        if (last === 'signed') {
          signedMs.push(ms);
          if (signedMs.length === args.markSigned) msToSigned = performance.now() - started;
        } else if (last === 'capDenied') deniedMs.push(ms);
        last = 'other';
      });
    });
  const results = await Promise.all(urls.map(load));
  const seconds = (performance.now() - started) / 1000;
  signedMs.sort((x, y) => x - y);
  deniedMs.sort((x, y) => x - y);
  return {
    signed: signedMs.length,
    capDenied: deniedMs.length,
    other,
    errors: results.reduce((n, r) => n + r.errors + r.timeouts, 0),
    otherSamples,
    signedMs,
    deniedMs,
    msToSigned,
    seconds,
  };
}

/** The q-quantile of sorted values (nearest rank), 0 when empty. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}
