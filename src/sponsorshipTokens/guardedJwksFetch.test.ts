import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createGuardedJwksFetch, MAX_JWKS_BYTES } from './guardedJwksFetch.js';

let server: Server;
let base: string;
const bodies: Record<string, { status: number; body: string }> = {
  '/jwks': { status: 200, body: JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'abc' }] }) },
  '/redirect': { status: 302, body: '' },
  '/huge': { status: 200, body: JSON.stringify({ keys: ['x'.repeat(MAX_JWKS_BYTES)] }) },
};

before(async () => {
  server = createServer((req, res) => {
    const answer = bodies[req.url ?? ''] ?? { status: 404, body: '' };
    res.writeHead(
      answer.status,
      answer.status === 302 ? { location: '/jwks' } : { 'content-type': 'application/json' },
    );
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the guarded JWKS fetch', () => {
  const local = createGuardedJwksFetch({ resolve: async () => ['127.0.0.1'], allowPrivate: true });

  test('fetches and parses a JWKS (private addresses allowed, as in dev mode)', async () => {
    assert.deepEqual(await local(`${base}/jwks`), { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'abc' }] });
  });

  test('refuses a redirect, an error status and a body above the bound', async () => {
    await assert.rejects(local(`${base}/redirect`), /HTTP 302/);
    await assert.rejects(local(`${base}/missing`), /HTTP 404/);
    await assert.rejects(local(`${base}/huge`), /larger than/);
  });

  test('in production: http, a loopback address, and a name resolving to a private address are refused', async () => {
    const strict = createGuardedJwksFetch({ resolve: async () => ['10.0.0.1'], allowPrivate: false });
    await assert.rejects(strict(`${base}/jwks`), /must be https/);
    await assert.rejects(strict('https://127.0.0.1/jwks'), /loopback, private/);
    await assert.rejects(strict('https://keys.example/jwks'), /loopback, private/);
  });
});
