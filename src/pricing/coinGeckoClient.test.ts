import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type CoinGeckoClient, createCoinGeckoClient } from './coinGeckoClient.js';
import { coinGeckoPriceSource } from './coinGeckoPriceSource.js';
import { PriceSourceError } from './priceSource.js';

const E18 = 10n ** 18n;
const API_KEY = 'cg-secret-key-123';

/** A CoinGecko stand-in on 127.0.0.1 whose next answer the test sets. */
interface Answer {
  status?: number;
  body?: string;
  delayMs?: number;
}
const requests: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
let answer: Answer = {};
let server: Server;
let baseUrl: string;
const clients: CoinGeckoClient[] = [];

function client(options: { apiKey?: string; timeoutMs?: number; now?: () => number } = {}): CoinGeckoClient {
  const c = createCoinGeckoClient({
    baseUrl,
    apiKey: options.apiKey,
    apiKeyHeader: 'x-cg-demo-api-key',
    // Generous: a loaded CI machine once took over 1 s to answer from 127.0.0.1; the timeout test passes its own.
    timeoutMs: options.timeoutMs ?? 10_000,
    now: options.now ?? (() => 5_000_000),
  });
  clients.push(c);
  return c;
}

/** The error `promise` rejects with. */
async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => assert.fail('expected a failure'),
    (err: unknown) => {
      assert.ok(err instanceof PriceSourceError, String(err));
      return err;
    },
  );
}

before(async () => {
  server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers });
    const { status = 200, body = '{}', delayMs = 0 } = answer;
    setTimeout(() => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v3`;
});

after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  requests.length = 0;
  answer = {};
});

describe('CoinGecko client', () => {
  test('asks simple/price once for every id of a refresh and converts each price exactly', async () => {
    answer = {
      body: JSON.stringify({
        'usd-coin': { usd: 0.9998, last_updated_at: 4_990 },
        ethereum: { usd: 3456.78 },
        'tiny-coin': { usd: 1.5e-8 },
      }),
    };
    const c = client({ apiKey: API_KEY });
    const [usdc, eth, tiny] = await Promise.all([c.price('usd-coin'), c.price('ethereum'), c.price('tiny-coin')]);
    assert.equal(requests.length, 1, 'one request for all ids');
    const url = new URL(requests[0]?.url ?? '', 'http://x');
    assert.equal(url.pathname, '/api/v3/simple/price');
    assert.equal(url.searchParams.get('ids'), 'usd-coin,ethereum,tiny-coin');
    assert.equal(url.searchParams.get('vs_currencies'), 'usd');
    assert.equal(requests[0]?.headers['x-cg-demo-api-key'], API_KEY);
    assert.ok(!requests[0]?.url.includes(API_KEY), 'the key is never in the URL');
    assert.deepEqual(usdc, { usdE18: 999_800_000_000_000_000n, updatedAtMs: 4_990_000 });
    // Without last_updated_at the answer's arrival is the observation time.
    assert.deepEqual(eth, { usdE18: 3_456_780_000_000_000_000_000n, updatedAtMs: 5_000_000 });
    assert.equal(tiny.usdE18, 15n * 10n ** 9n);
  });

  test('the same id asked twice in one turn is fetched once; no key means no key header', async () => {
    answer = { body: JSON.stringify({ ethereum: { usd: 3000 } }) };
    const c = client();
    const [a, b] = await Promise.all([c.price('ethereum'), c.price('ethereum')]);
    assert.equal(a.usdE18, 3000n * E18);
    assert.deepEqual(a, b);
    assert.equal(requests.length, 1);
    assert.equal(requests[0]?.url.match(/ethereum/g)?.length, 1);
    assert.equal(requests[0]?.headers['x-cg-demo-api-key'], undefined);
  });

  test('a timestamp ahead of our clock counts as now', async () => {
    answer = { body: JSON.stringify({ ethereum: { usd: 1, last_updated_at: 9_999_999 } }) };
    assert.equal((await client().price('ethereum')).updatedAtMs, 5_000_000);
  });

  test('per id failures: missing id, missing usd, zero, negative, not a number', async () => {
    answer = {
      body: JSON.stringify({
        ok: { usd: 2 },
        nousd: { eur: 1 },
        zero: { usd: 0 },
        negative: { usd: -1 },
        text: { usd: '1.0' },
        underflow: { usd: 1e-19 },
      }),
    };
    const c = client();
    const [ok, ...bad] = await Promise.allSettled(
      ['ok', 'missing', 'nousd', 'zero', 'negative', 'text', 'underflow'].map((id) => c.price(id)),
    );
    assert.equal(ok?.status === 'fulfilled' && ok.value.usdE18, 2n * E18);
    const reasons = bad.map((r) => (r.status === 'rejected' ? String((r.reason as Error).message) : 'fulfilled'));
    assert.deepEqual(reasons, [
      'CoinGecko returned no USD price for "missing"',
      'CoinGecko returned no USD price for "nousd"',
      'CoinGecko returned 0 for "zero", not a positive price',
      'CoinGecko returned -1 for "negative", not a positive price',
      'CoinGecko returned no USD price for "text"',
      'CoinGecko price 1e-19 for "underflow" is not representable at 18 decimals',
    ]);
  });

  test('a non-2xx answer fails every id of the request', async () => {
    answer = { status: 429, body: '{"status":{"error_code":429}}' };
    const c = client();
    const [a, b] = await Promise.allSettled([c.price('a'), c.price('b')]);
    for (const r of [a, b]) {
      assert.equal(r?.status, 'rejected');
      assert.equal(r?.status === 'rejected' && (r.reason as Error).message, 'CoinGecko answered HTTP 429');
    }
  });

  test('a malformed body fails', async () => {
    answer = { body: '<html>' };
    assert.equal((await failure(client().price('a'))).message, 'CoinGecko answered with a body that is not JSON');
    answer = { body: '[1]' };
    assert.equal((await failure(client().price('a'))).message, 'CoinGecko answered with JSON that is not an object');
  });

  test('a slow answer times out', async () => {
    answer = { delayMs: 500, body: JSON.stringify({ a: { usd: 1 } }) };
    const started = Date.now();
    const err = await failure(client({ timeoutMs: 100 }).price('a'));
    assert.equal(err.message, 'CoinGecko did not answer within 100 ms');
    assert.ok(Date.now() - started < 450);
  });

  test('an unreachable server fails without leaking the key', async () => {
    const c = createCoinGeckoClient({ baseUrl: 'http://127.0.0.1:1', apiKey: API_KEY, now: Date.now });
    clients.push(c);
    const err = await failure(c.price('a'));
    assert.match(err.message, /^CoinGecko request failed/);
    assert.ok(!err.message.includes(API_KEY));
  });

  test('as a price source: key tells clients apart, label names the feed without the key', async () => {
    answer = { body: JSON.stringify({ 'usd-coin': { usd: 1 } }) };
    const source = coinGeckoPriceSource({
      client: client({ apiKey: API_KEY }),
      clientKey: `${baseUrl}#digest`,
      baseUrl,
      id: 'usd-coin',
      maxAgeSeconds: 600,
    });
    assert.equal(source.maxAgeMs, 600_000);
    assert.ok(!source.label.includes(API_KEY) && !source.key.includes(API_KEY));
    assert.equal((await source.read()).usdE18, E18);
  });
});
