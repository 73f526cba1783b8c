import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ValidationError } from '../errors/PatronError.js';
import {
  assertPublicHost,
  createWebhookUrlPolicy,
  type HostResolver,
  isPublicAddress,
  MAX_WEBHOOK_URL_LENGTH,
} from './webhookUrlPolicy.js';

const INTERNAL = 'webhookUrl must not point at a loopback, private, link-local or metadata address';
const UNRESOLVABLE = 'webhookUrl host could not be resolved';
const NOT_HTTP = 'webhookUrl must be an absolute http or https URL';
const CREDENTIALS = 'webhookUrl must not contain credentials';
const TOO_LONG = 'webhookUrl must be at most 2048 characters';

/** A fake DNS: no network. Records every name it is asked for. */
function fakeResolver(table: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve: HostResolver = async (host) => {
    asked.push(host);
    const found = table[host];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  return { resolve, asked };
}

const DNS = {
  'hooks.example.com': ['93.184.215.14'],
  'v6.example.com': ['2606:4700:4700::1111'],
  'both.example.com': ['93.184.215.14', '2606:4700:4700::1111'],
  'internal.example.com': ['10.1.2.3'],
  'mixed.example.com': ['93.184.215.14', '10.0.0.7'],
  'metadata.example.com': ['169.254.169.254'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'compat.example.com': ['::a9fe:a9fe'],
  'empty.example.com': [],
};

async function rejectsWith(p: Promise<unknown>, message: string): Promise<ValidationError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ValidationError, `expected a ValidationError, got ${String(err)}`);
    assert.equal(err.code, 'VALIDATION');
    assert.equal(err.message, message);
    assert.equal(err.shortMessage, message);
    return err;
  }
  assert.fail(`expected a ValidationError "${message}"`);
}

describe('isPublicAddress', () => {
  const cases: [string, boolean][] = [
    ['127.0.0.1', false],
    ['10.0.0.1', false],
    ['172.16.5.4', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.100.100.200', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fd00:ec2::254', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['64:ff9b::a00:1', false],
    // Every IPv6 form that embeds an IPv4 address (ipaddr.js calls ::/96 unicast: these passed before).
    ['::127.0.0.1', false], // IPv4-compatible, loopback
    ['::a9fe:a9fe', false], // IPv4-compatible, 169.254.169.254
    ['::8.8.8.8', false], // IPv4-compatible: refused outright, even for a public IPv4
    ['::ffff:0:7f00:1', false], // IPv4-translated
    ['64:ff9b::8.8.8.8', false], // NAT64, even for a public IPv4
    ['64:ff9b:1::a9fe:a9fe', false], // local-use NAT64
    ['2002:7f00:1::', false], // 6to4 of 127.0.0.1
    ['2002:808:808::1', false], // 6to4 of a public IPv4: refused outright
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false], // Teredo
    ['::ffff:169.254.169.254', false],
    ['ff02::1', false],
    ['100::1', false], // discard-only
    ['2001:db8::1', false], // documentation
    ['not-an-ip', false],
    ['', false],
    ['93.184.215.14', true],
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['::ffff:8.8.8.8', true],
    ['2a00:1450:4001:80b::200e', true],
  ];
  for (const [address, expected] of cases) {
    test(`${address || '(empty)'} → ${expected}`, () => {
      assert.equal(isPublicAddress(address), expected);
    });
  }
});

describe('createWebhookUrlPolicy: length and normalisation', () => {
  const { resolve } = fakeResolver(DNS);
  const policy = createWebhookUrlPolicy({ allowPrivate: true, resolve });

  test('the URL is returned (and so stored) normalised', async () => {
    assert.equal(await policy.check('HTTP://Hooks.Example.COM:80/a/../b?x=1'), 'http://hooks.example.com/b?x=1');
  });

  test('2048 characters pass; 2049 are refused before parsing', async () => {
    const base = 'https://hooks.example.com/';
    assert.equal((await policy.check(base + 'a'.repeat(2048 - base.length))).length, 2048);
    await rejectsWith(
      policy.check(base + 'a'.repeat(2049 - base.length)),
      'webhookUrl must be at most 2048 characters',
    );
  });

  test('a URL that normalisation lengthens past 2048 characters is refused', async () => {
    // 600 × "é" is 626 characters as sent and 3,626 once percent-encoded.
    const raw = `https://hooks.example.com/${'é'.repeat(600)}`;
    assert.ok(raw.length <= 2048);
    await rejectsWith(policy.check(raw), 'webhookUrl must be at most 2048 characters');
  });
});

describe('createWebhookUrlPolicy({ allowPrivate: false })', () => {
  const rejected: [string, string][] = [
    ['http://127.0.0.1/x', INTERNAL],
    ['http://[::1]/', INTERNAL],
    ['http://[::ffff:127.0.0.1]/', INTERNAL],
    ['http://[::127.0.0.1]/', INTERNAL],
    ['http://[::a9fe:a9fe]/latest/meta-data/', INTERNAL],
    ['http://[::ffff:0:a9fe:a9fe]/', INTERNAL],
    ['http://[64:ff9b::a9fe:a9fe]/', INTERNAL],
    ['http://[2002:a9fe:a9fe::1]/', INTERNAL],
    ['https://compat.example.com/hook', INTERNAL],
    ['http://localhost:4000/', INTERNAL],
    ['http://LOCALHOST./', INTERNAL],
    ['http://api.localhost/', INTERNAL],
    ['http://2130706433/', INTERNAL],
    ['http://0x7f.1/', INTERNAL],
    ['http://0/', INTERNAL],
    ['http://10.0.0.1/', INTERNAL],
    ['http://169.254.169.254/latest/meta-data/', INTERNAL],
    ['http://[fd00:ec2::254]/', INTERNAL],
    ['http://metadata.google.internal/', INTERNAL],
    ['https://internal.example.com/hook', INTERNAL],
    ['https://metadata.example.com/hook', INTERNAL],
    ['https://mapped.example.com/hook', INTERNAL],
    ['https://mixed.example.com/hook', INTERNAL],
    ['https://nowhere.example.com/hook', UNRESOLVABLE],
    ['https://empty.example.com/hook', UNRESOLVABLE],
  ];
  for (const [url, message] of rejected) {
    test(`rejects ${url}`, async () => {
      const { resolve } = fakeResolver(DNS);
      await rejectsWith(createWebhookUrlPolicy({ allowPrivate: false, resolve }).check(url), message);
    });
  }

  test('literal addresses and internal names are judged without asking DNS', async () => {
    const { resolve, asked } = fakeResolver(DNS);
    const policy = createWebhookUrlPolicy({ allowPrivate: false, resolve });
    for (const url of [
      'http://127.0.0.1/x',
      'http://[::1]/',
      'http://localhost/',
      'http://metadata.google.internal/',
    ]) {
      await rejectsWith(policy.check(url), INTERNAL);
    }
    assert.equal(await policy.check('http://8.8.8.8/hook'), 'http://8.8.8.8/hook');
    assert.equal(await policy.check('http://[2606:4700:4700::1111]/hook'), 'http://[2606:4700:4700::1111]/hook');
    assert.deepEqual(asked, []);
  });

  test('an unresolvable host keeps the resolver error as the cause', async () => {
    const { resolve } = fakeResolver(DNS);
    const err = await rejectsWith(
      createWebhookUrlPolicy({ allowPrivate: false, resolve }).check('https://nowhere.example.com/'),
      UNRESOLVABLE,
    );
    assert.ok(err.cause instanceof Error);
    assert.equal(err.cause.message, 'getaddrinfo ENOTFOUND nowhere.example.com');
  });

  test('accepts and normalises a URL whose host resolves to public addresses only', async () => {
    const { resolve, asked } = fakeResolver(DNS);
    const policy = createWebhookUrlPolicy({ allowPrivate: false, resolve });
    assert.equal(await policy.check('https://hooks.example.com/a'), 'https://hooks.example.com/a');
    assert.equal(await policy.check('HTTPS://Hooks.Example.COM/a?b=1'), 'https://hooks.example.com/a?b=1');
    assert.equal(await policy.check('http://v6.example.com:8080'), 'http://v6.example.com:8080/');
    assert.equal(await policy.check('https://both.example.com/'), 'https://both.example.com/');
    assert.deepEqual(asked, ['hooks.example.com', 'hooks.example.com', 'v6.example.com', 'both.example.com']);
  });
});

describe('assertPublicHost', () => {
  test('accepts a public name and rejects a private one', async () => {
    const { resolve } = fakeResolver(DNS);
    await assertPublicHost('hooks.example.com', resolve);
    await assertPublicHost('[2606:4700:4700::1111]', resolve);
    await rejectsWith(assertPublicHost('internal.example.com', resolve), INTERNAL);
    await rejectsWith(assertPublicHost('[::1]', resolve), INTERNAL);
  });
});

describe('createWebhookUrlPolicy in both modes', () => {
  const longUrl = `https://hooks.example.com/${'a'.repeat(MAX_WEBHOOK_URL_LENGTH - 'https://hooks.example.com/'.length + 1)}`;
  const rejected: [string, string][] = [
    ['ftp://hooks.example.com/x', NOT_HTTP],
    ['file:///etc/passwd', NOT_HTTP],
    ['javascript:alert(1)', NOT_HTTP],
    ['/relative/hook', NOT_HTTP],
    ['hooks.example.com/hook', NOT_HTTP],
    ['', NOT_HTTP],
    ['http://', NOT_HTTP],
    ['http://user:pass@hooks.example.com/', CREDENTIALS],
    ['http://user@hooks.example.com/', CREDENTIALS],
    ['http://:pass@hooks.example.com/', CREDENTIALS],
    [longUrl, TOO_LONG],
  ];
  for (const allowPrivate of [false, true]) {
    for (const [url, message] of rejected) {
      test(`allowPrivate ${allowPrivate}: rejects ${url.length > 60 ? `a ${url.length}-character URL` : JSON.stringify(url)}`, async () => {
        const { resolve, asked } = fakeResolver(DNS);
        await rejectsWith(createWebhookUrlPolicy({ allowPrivate, resolve }).check(url), message);
        assert.deepEqual(asked, []);
      });
    }

    test(`allowPrivate ${allowPrivate}: a URL of exactly ${MAX_WEBHOOK_URL_LENGTH} characters is accepted`, async () => {
      const { resolve } = fakeResolver(DNS);
      const url = longUrl.slice(0, MAX_WEBHOOK_URL_LENGTH);
      assert.equal(url.length, MAX_WEBHOOK_URL_LENGTH);
      assert.equal(await createWebhookUrlPolicy({ allowPrivate, resolve }).check(url), url);
    });
  }

  test('allowPrivate true accepts loopback and private hosts without asking DNS', async () => {
    const { resolve, asked } = fakeResolver({});
    const policy = createWebhookUrlPolicy({ allowPrivate: true, resolve });
    assert.equal(await policy.check('http://127.0.0.1:4000/hook'), 'http://127.0.0.1:4000/hook');
    assert.equal(await policy.check('http://localhost:4000/hook'), 'http://localhost:4000/hook');
    assert.equal(await policy.check('http://10.0.0.1/'), 'http://10.0.0.1/');
    assert.equal(await policy.check('http://unresolvable.example.com/'), 'http://unresolvable.example.com/');
    assert.deepEqual(asked, []);
  });
});
