import { Pool } from 'undici';
import { z } from 'zod';
import { numberToE18 } from './decimal.js';
import { type PriceReading, PriceSourceError } from './priceSource.js';

/**
 * A client of a CoinGecko-compatible `GET /simple/price` endpoint
 * (https://docs.coingecko.com/reference/simple-price). Every `price(id)` asked within one turn of the event
 * loop goes out as one request (`ids=a,b,c`), so a refresh of all tokens costs one call per (baseUrl, API key)
 * rather than one per token, which matters under the free plans' rate limits.
 *
 * The API key travels only in its header: it is never part of a URL, an error or a log line.
 */

export const DEFAULT_COINGECKO_BASE_URL = 'https://api.coingecko.com/api/v3';
export const DEFAULT_COINGECKO_API_KEY_HEADER = 'x-cg-demo-api-key';
export const DEFAULT_PRICE_HTTP_TIMEOUT_MS = 3000;
/** Ids per request: keeps the query string far below common URL limits. */
const MAX_IDS_PER_REQUEST = 100;
/** A price answer for 100 ids is a few kB; anything far larger is not one. */
const MAX_RESPONSE_BYTES = 256 * 1024;

export interface CoinGeckoClientOptions {
  readonly baseUrl: string;
  readonly apiKey?: string | undefined;
  readonly apiKeyHeader?: string | undefined;
  /** Whole-request budget: connect, headers and body. */
  readonly timeoutMs?: number | undefined;
  readonly now: () => number;
}

export interface CoinGeckoClient {
  /** The USD price of one CoinGecko id; rejects with the reason when this id got no valid price. */
  price(id: string): Promise<PriceReading>;
  close(): Promise<void>;
}

// `last_updated_at` is requested with include_last_updated_at=true; a compatible server may omit it.
const priceEntrySchema = z.object({ usd: z.number(), last_updated_at: z.number().int().nonnegative().optional() });

type Outcome = PriceReading | PriceSourceError;

/** One id's outcome out of a parsed `simple/price` body. */
function outcomeFor(body: Record<string, unknown>, id: string, receivedAtMs: number): Outcome {
  const entry = priceEntrySchema.safeParse(Object.hasOwn(body, id) ? body[id] : undefined);
  if (!entry.success) return new PriceSourceError(`CoinGecko returned no USD price for "${id}"`);
  const { usd, last_updated_at: updatedAt } = entry.data;
  if (!(usd > 0)) return new PriceSourceError(`CoinGecko returned ${usd} for "${id}", not a positive price`);
  const usdE18 = numberToE18(usd);
  if (usdE18 === undefined || usdE18 <= 0n) {
    return new PriceSourceError(`CoinGecko price ${usd} for "${id}" is not representable at 18 decimals`);
  }
  // A server clock ahead of ours counts as "now", never as fresher than now.
  const updatedAtMs = updatedAt === undefined ? receivedAtMs : Math.min(updatedAt * 1000, receivedAtMs);
  return { usdE18, updatedAtMs };
}

async function readLimited(body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      body.destroy();
      throw new PriceSourceError(`CoinGecko answer is larger than ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function createCoinGeckoClient(options: CoinGeckoClientOptions): CoinGeckoClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PRICE_HTTP_TIMEOUT_MS;
  const url = new URL(options.baseUrl);
  const basePath = url.pathname.replace(/\/+$/, '');
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'Patron' };
  if (options.apiKey !== undefined && options.apiKey !== '') {
    headers[(options.apiKeyHeader ?? DEFAULT_COINGECKO_API_KEY_HEADER).toLowerCase()] = options.apiKey;
  }
  // Keep-alive connections: a refresh every 30 s reuses one socket instead of a TLS handshake each time.
  const pool = new Pool(url.origin, {
    connections: 2,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: { timeout: timeoutMs },
  });
  const pending = new Map<string, Array<{ resolve: (r: PriceReading) => void; reject: (e: Error) => void }>>();
  let scheduled = false;
  let closed = false;
  let closing: Promise<void> = Promise.resolve();

  /** One request for up to MAX_IDS_PER_REQUEST ids: every id's outcome, or one error for all of them. */
  async function fetchPrices(ids: readonly string[]): Promise<Map<string, Outcome>> {
    const query = `ids=${ids.map(encodeURIComponent).join(',')}&vs_currencies=usd&include_last_updated_at=true`;
    let text: string;
    try {
      const res = await pool.request({
        method: 'GET',
        path: `${basePath}/simple/price?${query}`,
        headers,
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (res.statusCode < 200 || res.statusCode > 299) {
        await res.body.dump();
        throw new PriceSourceError(`CoinGecko answered HTTP ${res.statusCode}`);
      }
      text = await readLimited(res.body);
    } catch (err) {
      if (err instanceof PriceSourceError) throw err;
      const name = typeof err === 'object' && err !== null ? (err as { name?: unknown }).name : undefined;
      if (name === 'TimeoutError' || name === 'AbortError') {
        throw new PriceSourceError(`CoinGecko did not answer within ${timeoutMs} ms`);
      }
      const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
      throw new PriceSourceError(`CoinGecko request failed (${typeof code === 'string' ? code : 'network error'})`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new PriceSourceError('CoinGecko answered with a body that is not JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new PriceSourceError('CoinGecko answered with JSON that is not an object');
    }
    const receivedAtMs = options.now();
    const record = body as Record<string, unknown>;
    return new Map(ids.map((id) => [id, outcomeFor(record, id, receivedAtMs)]));
  }

  async function flush(): Promise<void> {
    scheduled = false;
    const batch = new Map(pending);
    pending.clear();
    const ids = [...batch.keys()];
    const chunks: string[][] = [];
    for (let i = 0; i < ids.length; i += MAX_IDS_PER_REQUEST) chunks.push(ids.slice(i, i + MAX_IDS_PER_REQUEST));
    await Promise.all(
      chunks.map(async (chunk) => {
        const outcomes = await fetchPrices(chunk).catch((err: unknown) =>
          err instanceof Error ? err : new PriceSourceError(String(err)),
        );
        for (const id of chunk) {
          const outcome = outcomes instanceof Error ? outcomes : outcomes.get(id);
          for (const waiter of batch.get(id) ?? []) {
            if (outcome === undefined || outcome instanceof Error) waiter.reject(outcome ?? new PriceSourceError(id));
            else waiter.resolve(outcome);
          }
        }
      }),
    );
  }

  return {
    price(id) {
      if (closed) return Promise.reject(new PriceSourceError('the CoinGecko client is closed'));
      return new Promise<PriceReading>((resolve, reject) => {
        const waiters = pending.get(id);
        if (waiters === undefined) pending.set(id, [{ resolve, reject }]);
        else waiters.push({ resolve, reject });
        if (!scheduled) {
          scheduled = true;
          // setImmediate, not a microtask: the reads of one refresh may be started across several microtasks.
          setImmediate(() => void flush());
        }
      });
    },
    close() {
      // Idempotent: undici refuses a second close of the same pool.
      if (!closed) {
        closed = true;
        closing = pool.close();
      }
      return closing;
    },
  };
}
