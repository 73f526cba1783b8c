import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import tls from 'node:tls';
import { type Receiver, startReceiver } from '../../test/helpers/webhookReceiver.js';
import { createSecretBox } from '../crypto/secretBox.js';
import { createWebhookCaller, generateSigningSecret, type SignableWebhook } from './webhookCaller.js';
import type { HostResolver } from './webhookUrlPolicy.js';

// How the caller connects: the SSRF guard at call time, connecting to the address it checked, TLS SNI, keep-alive.

const secretBox = createSecretBox(Buffer.alloc(32, 3));
const logger = { warn: () => {}, debug: () => {} };
const hook = (url: string): SignableWebhook => ({
  id: randomUUID(),
  url,
  requestType: 'POST',
  signingSecretCiphertext: secretBox.seal(generateSigningSecret()),
});

/** A resolver with a fixed table that records every question. */
function tableResolver(table: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve: HostResolver = async (host) => {
    asked.push(host);
    const found = table[host];
    if (found === undefined) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  return { asked, resolve };
}

let receiver: Receiver;
before(async () => {
  receiver = await startReceiver();
});
beforeEach(() => {
  receiver.requests.length = 0;
});
after(() => receiver.close());

describe('production mode: the SSRF guard at call time', () => {
  const dns = tableResolver({
    'rebound.test': ['127.0.0.1'],
    'mixed.test': ['93.184.215.14', '127.0.0.1'],
    'metadata.test': ['169.254.169.254'],
    'compat.test': ['::7f00:1'], // IPv4-compatible form of 127.0.0.1
    'compat-metadata.test': ['::a9fe:a9fe'], // of 169.254.169.254
    'nat64.test': ['64:ff9b::7f00:1'],
  });
  const prod = createWebhookCaller({ allowPrivate: false, resolve: dns.resolve, secretBox, logger, timeoutMs: 500 });
  after(() => prod.close());

  const refused: [string, (port: number) => string][] = [
    ['127.0.0.1', (port) => `http://127.0.0.1:${port}/hook`],
    ['[::ffff:127.0.0.1]', (port) => `http://[::ffff:127.0.0.1]:${port}/hook`],
    ['localhost', (port) => `http://localhost:${port}/hook`],
    ['a name that now resolves to 127.0.0.1 (DNS rebinding)', (port) => `http://rebound.test:${port}/hook`],
    ['a name with one private address among public ones', (port) => `http://mixed.test:${port}/hook`],
    ['a name resolving to the metadata address', (port) => `http://metadata.test:${port}/hook`],
    ['[::127.0.0.1] (IPv4-compatible IPv6 literal)', (port) => `http://[::127.0.0.1]:${port}/hook`],
    ['[::a9fe:a9fe] (the metadata address, IPv4-compatible)', (port) => `http://[::a9fe:a9fe]:${port}/hook`],
    ['a name resolving to an IPv4-compatible IPv6 address', (port) => `http://compat.test:${port}/hook`],
    [
      'a name resolving to the metadata address in IPv4-compatible form',
      (port) => `http://compat-metadata.test:${port}/hook`,
    ],
    ['a name resolving to a NAT64 address', (port) => `http://nat64.test:${port}/hook`],
  ];
  for (const [name, url] of refused) {
    test(`${name} → forbidden_address, and the receiver is never contacted`, async () => {
      const connectionsBefore = receiver.connections();
      const verdict = await prod.call({ webhook: hook(url(receiver.port)), webhookData: {} });
      assert.deepEqual({ ...verdict, latencyMs: 0 }, { verified: false, reason: 'forbidden_address', latencyMs: 0 });
      assert.equal(receiver.connections(), connectionsBefore, 'no connection');
      assert.equal(receiver.requests.length, 0, 'no request');
    });
  }

  test('a name that does not resolve → connection_failed, not forbidden_address', async () => {
    const verdict = await prod.call({ webhook: hook('http://unknown.test/hook'), webhookData: {} });
    assert.equal(verdict.verified === false && verdict.reason, 'connection_failed');
  });

  test('the same caller in dev mode reaches 127.0.0.1 (the guard is what refused it)', async () => {
    const dev = createWebhookCaller({ allowPrivate: true, resolve: dns.resolve, secretBox, logger });
    try {
      assert.equal((await dev.call({ webhook: hook(receiver.url()), webhookData: {} })).verified, true);
    } finally {
      await dev.close();
    }
  });
});

describe('connecting to the resolved address', () => {
  test('the connection goes to the address the resolver gave (no second lookup); Host keeps the name', async () => {
    // `.test` names never resolve in system DNS, so reaching the receiver proves the injected answer was used.
    const dns = tableResolver({ 'receiver.test': ['127.0.0.1'] });
    const caller = createWebhookCaller({ allowPrivate: true, resolve: dns.resolve, secretBox, logger });
    try {
      const verdict = await caller.call({
        webhook: hook(`http://receiver.test:${receiver.port}/hook`),
        webhookData: {},
      });
      assert.equal(verdict.verified, true);
      assert.equal(receiver.requests[0]?.headers.host, `receiver.test:${receiver.port}`);
      assert.deepEqual(dns.asked, ['receiver.test']);
    } finally {
      await caller.close();
    }
  });

  test('HTTPS: TLS SNI carries the host name, not the pinned address', async () => {
    const serverNames: string[] = [];
    // No certificate needed: the server name is read from the ClientHello, then the handshake is refused.
    const server = tls.createServer({
      SNICallback: (name, cb) => {
        serverNames.push(name);
        cb(new Error('no certificate in this test'));
      },
    });
    server.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const dns = tableResolver({ 'secure.receiver.test': ['127.0.0.1'] });
    const caller = createWebhookCaller({ allowPrivate: true, resolve: dns.resolve, secretBox, logger });
    try {
      const verdict = await caller.call({ webhook: hook(`https://secure.receiver.test:${port}/h`), webhookData: {} });
      assert.equal(verdict.verified === false && verdict.reason, 'connection_failed');
      assert.deepEqual(serverNames, ['secure.receiver.test']);
    } finally {
      await caller.close();
      server.close();
    }
  });
});

describe('keep-alive pooling', () => {
  test('50 sequential calls to one receiver reuse one or two connections', async () => {
    const own = await startReceiver();
    const caller = createWebhookCaller({ allowPrivate: true, resolve: async () => [], secretBox, logger });
    try {
      for (let i = 0; i < 50; i++) {
        const verdict = await caller.call({ webhook: hook(own.url()), webhookData: { i } });
        assert.equal(verdict.verified, true);
      }
      assert.equal(own.requests.length, 50);
      assert.ok(own.connections() <= 2, `${own.connections()} connections`);
    } finally {
      await caller.close();
      await own.close();
    }
  });

  test('close() closes the pooled connections, and a closed caller refuses to call', async () => {
    const own = await startReceiver();
    const caller = createWebhookCaller({ allowPrivate: true, resolve: async () => [], secretBox, logger });
    try {
      await caller.call({ webhook: hook(own.url()), webhookData: {} });
      assert.equal(own.openConnections(), 1, 'kept alive after the call');
      await caller.close();
      for (let i = 0; i < 100 && own.openConnections() > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(own.openConnections(), 0, 'closed by close()');
      await assert.rejects(caller.call({ webhook: hook(own.url()), webhookData: {} }), /closed/);
    } finally {
      await own.close();
    }
  });
});
