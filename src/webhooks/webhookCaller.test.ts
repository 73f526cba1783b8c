import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { inspect } from 'node:util';
import {
  answer,
  closedPort,
  type Receiver,
  type ReceiverHandler,
  startReceiver,
  verifiedAnswer,
} from '../../test/helpers/webhookReceiver.js';
import { createSecretBox } from '../crypto/secretBox.js';
import type { WebhookRequestType } from '../store/records.js';
import {
  createWebhookCaller,
  generateSigningSecret,
  messageIds,
  type SignableWebhook,
  verifyStandardWebhookSignature,
  type WebhookCallerOptions,
} from './webhookCaller.js';
import type { HostResolver } from './webhookUrlPolicy.js';

// Real HTTP receivers on 127.0.0.1, real undici: nothing is mocked but DNS (an injected resolver).

const secretBox = createSecretBox(Buffer.alloc(32, 9));
const SECRET = generateSigningSecret();
const FIXED_NOW = 1_750_000_000_123;
const logs: { level: string; obj: object }[] = [];
const logger = {
  warn: (obj: object) => logs.push({ level: 'warn', obj }),
  debug: (obj: object) => logs.push({ level: 'debug', obj }),
};
const noDns: HostResolver = async (host) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

const makeCaller = (o: Partial<WebhookCallerOptions> = {}) =>
  createWebhookCaller({ allowPrivate: true, resolve: noDns, secretBox, now: () => FIXED_NOW, logger, ...o });
const hook = (url: string, requestType: WebhookRequestType = 'POST'): SignableWebhook => ({
  id: randomUUID(),
  url,
  requestType,
  signingSecretCiphertext: secretBox.seal(SECRET),
});
const verifies = (r: { headers: Record<string, string | string[] | undefined>; body: string }) =>
  verifyStandardWebhookSignature({
    secret: SECRET,
    id: String(r.headers['webhook-id']),
    timestamp: String(r.headers['webhook-timestamp']),
    body: r.body,
    signature: String(r.headers['webhook-signature']),
    now: () => FIXED_NOW,
  });

let receiver: Receiver;
const caller = makeCaller({ maxResponseBytes: 1024 });
before(async () => {
  receiver = await startReceiver();
});
beforeEach(() => {
  receiver.handler = verifiedAnswer;
  receiver.requests.length = 0;
});
after(async () => {
  await caller.close();
  await receiver.close();
});

describe('POST webhooks', () => {
  test('body {"data": webhookData} as JSON, Standard Webhooks headers that verify, user-agent', async () => {
    const webhookData = { num: 4, user: { address: '0xabc' } };
    const verdict = await caller.call({ webhook: hook(receiver.url()), webhookData });
    assert.deepEqual({ ...verdict, latencyMs: 0 }, { verified: true, status: 200, latencyMs: 0 });
    const [r] = receiver.requests;
    assert.ok(r);
    assert.equal(r.method, 'POST');
    assert.equal(r.url, '/hook');
    assert.deepEqual(JSON.parse(r.body), { data: webhookData });
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.headers['user-agent'], 'Patron-Webhooks/1');
    assert.match(String(r.headers['webhook-id']), /^msg_/);
    assert.equal(r.headers['webhook-timestamp'], String(Math.floor(FIXED_NOW / 1000)));
    assert.equal(verifies(r), true);
    assert.equal(verifies({ ...r, body: r.body.replace('4', '5') }), false, 'a tampered body fails');
  });

  test('message ids from the pooled generator: the Standard Webhooks format, unique across pool refills', () => {
    const next = messageIds();
    const ids = new Set(Array.from({ length: 1000 }, next));
    assert.equal(ids.size, 1000);
    for (const id of ids) assert.match(id, /^msg_[A-Za-z0-9_-]{22}$/);
  });

  test('each call has its own webhook-id', async () => {
    await caller.call({ webhook: hook(receiver.url()), webhookData: {} });
    await caller.call({ webhook: hook(receiver.url()), webhookData: {} });
    const ids = receiver.requests.map((r) => r.headers['webhook-id']);
    assert.equal(new Set(ids).size, 2);
  });
});

describe('GET webhooks', () => {
  const webhookData = {
    num: 42,
    numericString: '42',
    float: -1.5e-7,
    flags: { yes: true, no: false, none: null },
    nested: { list: [1, 'two', { three: [3] }], deep: { a: { b: { c: 'd' } } } },
    unicode: 'Grüße, 世界 🚀 e\u0301 ٣',
    reserved: 'a&b=c+d %20 #frag ?q /slash',
    empty: '',
  };

  test('webhookData in the `data` query parameter round-trips; the URL’s own query is kept', async () => {
    const url = receiver.url('/hook?token=a%2Bb&empty=&flag&x=1&data=stale#fragment');
    const verdict = await caller.call({ webhook: hook(url, 'GET'), webhookData });
    assert.equal(verdict.verified, true);
    const [r] = receiver.requests;
    assert.ok(r);
    assert.equal(r.method, 'GET');
    assert.equal(r.body, '');
    assert.equal(r.headers['content-type'], undefined);
    assert.ok(r.url.startsWith('/hook?token=a%2Bb&empty=&flag&x=1&data='), r.url);
    // Decoded independently of the source, the way a receiver would.
    const query = new URL(r.url, 'http://receiver').searchParams;
    assert.deepEqual(query.getAll('data').length, 1, 'the URL’s own data parameter is replaced');
    assert.deepEqual(JSON.parse(query.get('data') ?? ''), webhookData);
    assert.equal(query.get('token'), 'a+b');
    assert.equal(verifies(r), true, 'signed with the empty string as body');
  });

  test('no webhookData is `data={}`', async () => {
    await caller.call({ webhook: hook(receiver.url('/g'), 'GET'), webhookData: {} });
    assert.equal(receiver.requests[0]?.url, '/g?data=%7B%7D');
  });
});

describe('answers', () => {
  const cases: [string, ReceiverHandler, { verified: boolean; reason?: string; status?: number }][] = [
    ['arePoliciesVerified: true', answer({ arePoliciesVerified: true }), { verified: true, status: 200 }],
    [
      'Biconomy spelling arePoliciesVerifed: true',
      answer({ arePoliciesVerifed: true }),
      { verified: true, status: 200 },
    ],
    ['true with extra fields', answer({ arePoliciesVerified: true, note: 'x' }), { verified: true, status: 200 }],
    ['false', answer({ arePoliciesVerified: false }), { verified: false, reason: 'denied', status: 200 }],
    [
      'Biconomy spelling false',
      answer({ arePoliciesVerifed: false }),
      { verified: false, reason: 'denied', status: 200 },
    ],
    [
      'the string "true"',
      answer({ arePoliciesVerified: 'true' }),
      { verified: false, reason: 'invalid_response', status: 200 },
    ],
    ['the number 1', answer({ arePoliciesVerified: 1 }), { verified: false, reason: 'invalid_response', status: 200 }],
    ['null', answer({ arePoliciesVerified: null }), { verified: false, reason: 'invalid_response', status: 200 }],
    ['no verdict field', answer({ ok: true }), { verified: false, reason: 'invalid_response', status: 200 }],
    ['an array', answer([{ arePoliciesVerified: true }]), { verified: false, reason: 'invalid_response', status: 200 }],
    [
      'both spellings disagreeing',
      answer({ arePoliciesVerified: true, arePoliciesVerifed: false }),
      { verified: false, reason: 'invalid_response', status: 200 },
    ],
    [
      'HTML',
      answer('<html><body>OK</body></html>', 200, 'text/html'),
      { verified: false, reason: 'invalid_response', status: 200 },
    ],
    [
      'malformed JSON',
      answer('{"arePoliciesVerified": tru'),
      { verified: false, reason: 'invalid_response', status: 200 },
    ],
    ['an empty 200', answer(''), { verified: false, reason: 'invalid_response', status: 200 }],
    [
      '204 No Content',
      (_q, res) => {
        res.writeHead(204).end();
      },
      { verified: false, reason: 'invalid_response', status: 204 },
    ],
    [
      '500 with a true body',
      answer({ arePoliciesVerified: true }, 500),
      { verified: false, reason: 'http_status', status: 500 },
    ],
    ['404', answer('not found', 404, 'text/plain'), { verified: false, reason: 'http_status', status: 404 }],
  ];
  for (const [name, handler, expected] of cases) {
    test(`${name} → ${expected.reason ?? 'verified'}`, async () => {
      receiver.handler = handler;
      const { latencyMs, ...verdict } = await caller.call({ webhook: hook(receiver.url()), webhookData: {} });
      assert.deepEqual(verdict, expected);
      assert.equal(typeof latencyMs, 'number');
    });
  }

  for (const status of [301, 302, 307, 308]) {
    test(`${status} → redirect, and the target is never requested`, async () => {
      receiver.handler = (_q, res) => {
        res.writeHead(status, { location: receiver.url('/target') }).end();
      };
      const verdict = await caller.call({ webhook: hook(receiver.url()), webhookData: {} });
      assert.deepEqual({ ...verdict, latencyMs: 0 }, { verified: false, reason: 'redirect', status, latencyMs: 0 });
      assert.deepEqual(
        receiver.requests.map((r) => r.url),
        ['/hook'],
      );
    });
  }

  test('an answer of exactly maxResponseBytes is read; one byte more is response_too_large', async () => {
    const exact = JSON.stringify({ arePoliciesVerified: true, pad: '' });
    const padded = (n: number) => JSON.stringify({ arePoliciesVerified: true, pad: 'x'.repeat(n - exact.length) });
    receiver.handler = answer(padded(1024));
    assert.equal((await caller.call({ webhook: hook(receiver.url()), webhookData: {} })).verified, true);
    receiver.handler = answer(padded(1025));
    const verdict = await caller.call({ webhook: hook(receiver.url()), webhookData: {} });
    assert.equal(verdict.verified === false && verdict.reason, 'response_too_large');
  });

  test('a 1xx informational response before the answer is skipped (103 Early Hints, then 200)', async () => {
    receiver.handler = (_q, res) => {
      res.writeEarlyHints({ link: '</x.css>; rel=preload; as=style' });
      verifiedAnswer(_q, res);
    };
    const { latencyMs: _l, ...verdict } = await caller.call({ webhook: hook(receiver.url()), webhookData: {} });
    assert.deepEqual(verdict, { verified: true, status: 200 });
  });

  test('a refusal with a large body is still decided by its status, and the next call works', async () => {
    receiver.handler = answer('x'.repeat(100 * 1024), 503, 'text/plain');
    const { latencyMs: _l, ...verdict } = await caller.call({ webhook: hook(receiver.url()), webhookData: {} });
    assert.deepEqual(verdict, { verified: false, reason: 'http_status', status: 503 });
    receiver.handler = verifiedAnswer;
    assert.equal((await caller.call({ webhook: hook(receiver.url()), webhookData: {} })).verified, true);
  });

  test('a declared Content-Length over the limit is response_too_large before the body is read', async () => {
    receiver.handler = (_q, res) => {
      // Promises more than it sends: only the header can make this too large.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5000' });
      res.write('{"arePoliciesVerified":true}');
    };
    const verdict = await caller.call({ webhook: hook(receiver.url()), webhookData: {} });
    assert.equal(verdict.verified === false && verdict.reason, 'response_too_large');
    assert.ok(verdict.latencyMs < 1000, `${verdict.latencyMs}`);
  });

  test('a connection closed before the declared Content-Length arrived → connection_failed', async () => {
    receiver.handler = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.end('{"arePoliciesVerified":true}');
      res.socket?.destroy();
    };
    const verdict = await caller.call({ webhook: hook(receiver.url()), webhookData: {} });
    assert.equal(verdict.verified === false && verdict.reason, 'connection_failed');
  });

  test('an endless chunked body is cut off at the limit (response_too_large, not a timeout)', async () => {
    const slowCaller = makeCaller({ maxResponseBytes: 64 * 1024, timeoutMs: 5000 });
    receiver.handler = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) {}
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    };
    try {
      const verdict = await slowCaller.call({ webhook: hook(receiver.url()), webhookData: {} });
      assert.equal(verdict.verified === false && verdict.reason, 'response_too_large');
      assert.ok(verdict.latencyMs < 1000, `stopped reading early (${verdict.latencyMs} ms)`);
    } finally {
      await slowCaller.close();
    }
  });
});

describe('timeouts and connection failures', () => {
  const timeoutMs = 300;
  const MARGIN_MS = 250;
  const quick = makeCaller({ timeoutMs });
  after(() => quick.close());

  test('a receiver that never answers → timeout within timeoutMs + margin', async () => {
    receiver.handler = () => {};
    const verdict = await quick.call({ webhook: hook(receiver.url()), webhookData: {} });
    assert.equal(verdict.verified === false && verdict.reason, 'timeout');
    assert.ok(verdict.latencyMs >= timeoutMs - 5 && verdict.latencyMs < timeoutMs + MARGIN_MS, `${verdict.latencyMs}`);
  });

  test('a body that trickles in forever → timeout: the budget covers the body too', async () => {
    receiver.handler = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"arePoliciesVerified":');
      const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(' ')), 50);
    };
    const verdict = await quick.call({ webhook: hook(receiver.url()), webhookData: {} });
    assert.equal(verdict.verified === false && verdict.reason, 'timeout');
    assert.ok(verdict.latencyMs < timeoutMs + MARGIN_MS, `${verdict.latencyMs}`);
  });

  test('a slow resolver counts against the budget → timeout', async () => {
    const slowDns = makeCaller({ timeoutMs, resolve: () => new Promise(() => {}) });
    const verdict = await slowDns.call({ webhook: hook('http://receiver.test/hook'), webhookData: {} });
    await slowDns.close();
    assert.equal(verdict.verified === false && verdict.reason, 'timeout');
  });

  test('connection refused → connection_failed', async () => {
    const port = await closedPort();
    const verdict = await quick.call({ webhook: hook(`http://127.0.0.1:${port}/hook`), webhookData: {} });
    assert.deepEqual({ ...verdict, latencyMs: 0 }, { verified: false, reason: 'connection_failed', latencyMs: 0 });
  });

  test('a host that does not resolve → connection_failed', async () => {
    const verdict = await quick.call({ webhook: hook('http://nowhere.test/hook'), webhookData: {} });
    assert.equal(verdict.verified === false && verdict.reason, 'connection_failed');
  });

  test('failures are logged without the URL (its query may hold credentials)', async () => {
    logs.length = 0;
    await quick.call({ webhook: hook('http://nowhere.test/hook?apiKey=SECRET'), webhookData: {} });
    assert.equal(logs.length, 1);
    assert.doesNotMatch(inspect(logs, { depth: 10 }), /SECRET/);
  });
});
