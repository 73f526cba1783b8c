import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { isPaymasterRpcUrl } from '../src/api/paymasterRpc.js';
import { createTestContext, type TestContext } from './helpers/testContext.js';

/**
 * Everything under the JSON-RPC prefixes (the paymaster's /api/v1/, the dev chain's /chain/) answers in the
 * JSON-RPC envelope, with a fitting status, and never echoes the path: a paymaster path holds an API key.
 */
let ctx: TestContext;
before(async () => {
  ctx = await createTestContext();
});
after(() => ctx.close());

const SECRET = 'pk_live_this-is-the-secret-api-key';

interface Answer {
  status: number;
  allow: unknown;
  body: string;
}

async function inject(method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH', url: string): Promise<Answer> {
  const res = await ctx.app.inject({
    method,
    url,
    headers: { 'content-type': 'application/json' },
    ...(method === 'GET' ? {} : { payload: '{"jsonrpc":"2.0","id":1,"method":"pm_noSuchMethod","params":[]}' }),
  });
  return { status: res.statusCode, allow: res.headers.allow, body: res.body };
}

function assertJsonRpc(a: Answer, status: number, message: RegExp) {
  assert.equal(a.status, status, a.body);
  const body = JSON.parse(a.body) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
  assert.equal(body.jsonrpc, '2.0');
  assert.equal(body.id, null);
  assert.equal(body.error.code, -32600);
  assert.match(body.error.message, message);
  assert.ok(!a.body.includes(SECRET.slice(8)), `the answer echoes the key: ${a.body}`);
}

describe('under /api/v1/', () => {
  test('an API key over 100 characters: 414 in the JSON-RPC envelope', async () => {
    assertJsonRpc(await inject('POST', `/api/v1/31337/${SECRET}${'x'.repeat(100)}`), 414, /path segment is too long/);
  });

  test('bad percent-encoding in the key or the chain id: 400 in the JSON-RPC envelope', async () => {
    assertJsonRpc(await inject('POST', `/api/v1/31337/${SECRET}%E0%A4%A`), 400, /malformed URL/);
    assertJsonRpc(await inject('POST', `/api/v1/%ZZ/${SECRET}`), 400, /malformed URL/);
  });

  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH'] as const) {
    test(`${method} on the endpoint: 405 with Allow: POST`, async () => {
      const a = await inject(method, `/api/v1/31337/${SECRET}`);
      assertJsonRpc(a, 405, new RegExp(`^Invalid request: ${method} is not allowed, use POST$`));
      assert.equal(a.allow, 'POST');
    });
  }

  for (const path of [
    '/api/v1',
    '/api/v1/',
    '/api/v1/31337',
    `/api/v1/31337/${SECRET}/extra`,
    `/api/v1/x/y/${SECRET}`,
  ]) {
    test(`POST ${path.replace(SECRET, 'KEY')}: 404 naming the endpoint's shape, not the path`, async () => {
      assertJsonRpc(
        await inject('POST', path),
        404,
        /^Invalid request: no endpoint here; use POST \/api\/v1\/\{chainId\}\/\{apiKey\}$/,
      );
    });
  }

  test('the endpoint itself is still routed (an unknown method there: -32601)', async () => {
    const a = await inject('POST', `/api/v1/31337/${SECRET}`);
    assert.equal(a.status, 400);
    assert.equal(JSON.parse(a.body).error.code, -32601);
  });

  test('REST routes keep the REST envelope', async () => {
    const a = await inject('GET', '/api/nothing-here');
    assert.equal(a.status, 404);
    assert.deepEqual(JSON.parse(a.body), { statusCode: 404, message: 'Route GET /api/nothing-here not found' });
  });
});

describe('under /api/v2/ (the EntryPoint v0.7 URL @biconomy/abstractjs builds)', () => {
  test('404, 405 and 414 in the JSON-RPC envelope, never echoing the key', async () => {
    assertJsonRpc(
      await inject('POST', `/api/v2/31337/${SECRET}/extra`),
      404,
      /^Invalid request: no endpoint here; use POST \/api\/v2\/\{chainId\}\/\{apiKey\}$/,
    );
    assertJsonRpc(await inject('GET', `/api/v2/31337/${SECRET}`), 405, /use POST/);
    assertJsonRpc(await inject('POST', `/api/v2/31337/${SECRET}${'x'.repeat(100)}`), 414, /too long/);
  });

  test('the endpoint is routed: an unknown method there is -32601', async () => {
    const a = await inject('POST', `/api/v2/31337/${SECRET}`);
    assert.equal(a.status, 400);
    assert.equal(JSON.parse(a.body).error.code, -32601);
  });

  test('the webhook management API under /api/v2/public/ keeps the REST envelope', async () => {
    const a = await inject('GET', '/api/v2/public/sdk/nothing-here');
    assert.equal(a.status, 404);
    assert.deepEqual(JSON.parse(a.body), {
      statusCode: 404,
      message: 'Route GET /api/v2/public/sdk/nothing-here not found',
    });
    const missing = await ctx.app.inject({ method: 'DELETE', url: '/api/v2/public/sdk/webhookParameters' });
    assert.equal(missing.statusCode, 401);
    assert.equal(JSON.parse(missing.body).message, 'Auth token and API key is required in the headers');
    // ...and spends the REST rate limit: only the paymaster endpoints are limited per JSON-RPC call instead.
    assert.equal(isPaymasterRpcUrl('/api/v2/public/sdk/webhookParameters'), false);
    assert.equal(isPaymasterRpcUrl(`/api/v2/31337/${SECRET}`), true);
  });
});

describe('under /chain/', () => {
  test('GET on the endpoint is 405; other paths 404; all JSON-RPC', async () => {
    const a = await inject('GET', '/chain/31337');
    assertJsonRpc(a, 405, /use POST/);
    assert.equal(a.allow, 'POST');
    assertJsonRpc(await inject('POST', '/chain/31337/extra'), 404, /use POST \/chain\/\{chainId\}$/);
    assertJsonRpc(await inject('POST', '/chain/%E0%A4%A'), 400, /malformed URL/);
  });
});

describe('over a real socket (the request line exactly as sent, no client normalising it)', () => {
  let port: number;
  before(async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx.app.server.address() as net.AddressInfo).port;
  });

  async function raw(method: string, path: string): Promise<Answer> {
    const socket = net.connect(port, '127.0.0.1');
    const body = '{}';
    socket.write(
      `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    const chunks: Buffer[] = [];
    for await (const c of socket) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const [head = '', payload = ''] = text.split('\r\n\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
    const allow = /\r\nallow: ([^\r]+)/i.exec(head)?.[1];
    return { status, allow, body: payload };
  }

  test('malformed encoding, a long key, GET and an unknown path', async () => {
    assertJsonRpc(await raw('POST', `/api/v1/31337/${SECRET}%E0%A4%A`), 400, /malformed URL/);
    assertJsonRpc(await raw('POST', `/api/v1/31337/${SECRET}${'k'.repeat(120)}`), 414, /too long/);
    assertJsonRpc(await raw('GET', `/api/v1/31337/${SECRET}`), 405, /use POST/);
    assertJsonRpc(await raw('POST', `/api/v1/31337/${SECRET}/x?y=1`), 404, /no endpoint here/);
  });
});
