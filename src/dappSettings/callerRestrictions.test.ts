import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  brokenCallerRule,
  type CallerRestrictions,
  callerRestrictionsColumn,
  callerRestrictionsSchema,
  compileCallerRestrictions,
  NO_CALLER_RESTRICTIONS,
} from './callerRestrictions.js';

const compile = (input: unknown): CallerRestrictions =>
  compileCallerRestrictions(callerRestrictionsSchema.parse(input));

const rule = (r: CallerRestrictions, call: { origin?: string; ip?: string; family?: 'sponsorship' | 'dryRun' }) =>
  brokenCallerRule({
    restrictions: r,
    origin: call.origin,
    ip: call.ip ?? '203.0.113.7',
    family: call.family ?? 'sponsorship',
  });

const problem = (input: unknown): string => {
  const r = callerRestrictionsSchema.safeParse(input);
  assert.equal(r.success, false, `expected ${JSON.stringify(input)} to be refused`);
  return r.error?.issues[0]?.message ?? '';
};

describe('origin rule', () => {
  const r = compile({ origins: ['https://app.example.com', '*.example.org', 'http://localhost:3000'] });

  test('exact origins match after normalisation: case, default port, trailing dot', () => {
    for (const origin of ['https://app.example.com', 'HTTPS://APP.Example.COM', 'https://app.example.com:443']) {
      assert.equal(rule(r, { origin }), undefined, origin);
    }
    assert.equal(rule(r, { origin: 'https://app.example.com.' }), undefined);
    assert.equal(rule(r, { origin: 'http://localhost:3000' }), undefined);
  });

  test('another scheme, port or host is refused', () => {
    for (const origin of [
      'http://app.example.com',
      'https://app.example.com:8443',
      'http://localhost:3001',
      'https://example.com',
      'https://app.example.com.evil.io',
      'null',
      'not an origin',
    ]) {
      assert.equal(rule(r, { origin }), 'origin', origin);
    }
  });

  test('a wildcard matches subdomains at any depth, https by default, never the apex or a look-alike', () => {
    assert.equal(rule(r, { origin: 'https://a.example.org' }), undefined);
    assert.equal(rule(r, { origin: 'https://a.b.example.org' }), undefined);
    for (const origin of [
      'https://example.org',
      'https://evilexample.org',
      'https://example.org.evil.io',
      'https://a.example.org.evil.io',
      'http://a.example.org',
      'https://a.example.org:8443',
    ]) {
      assert.equal(rule(r, { origin }), 'origin', origin);
    }
  });

  test('IDN origins compare in punycode', () => {
    const idn = compile({ origins: ['https://bücher.example'] });
    assert.equal(rule(idn, { origin: 'https://xn--bcher-kva.example' }), undefined);
  });

  test('no Origin header is refused unless allowNoOrigin', () => {
    assert.equal(rule(r, {}), 'origin');
    const scripts = compile({ origins: ['https://app.example.com'], allowNoOrigin: true });
    assert.equal(rule(scripts, {}), undefined);
    assert.equal(rule(scripts, { origin: 'https://evil.io' }), 'origin');
  });

  test('patterns are validated with the fix named', () => {
    assert.match(problem({ origins: ['*'] }), /leave origins out/);
    assert.match(problem({ origins: ['https://app.example.com/path'] }), /scheme:\/\/host/);
    assert.match(problem({ origins: ['ftp://app.example.com'] }), /scheme:\/\/host/);
    assert.match(problem({ origins: ['*.com'] }), /two labels/);
    assert.match(problem({ allowNoOrigin: true }), /only applies with an origins list/);
    assert.match(problem({ origin: ['x'] }), /origin/);
  });
});

describe('ip rule', () => {
  const r = compile({ cidrs: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.9'] });

  test('IPv4, IPv6 and single addresses', () => {
    assert.equal(rule(r, { ip: '203.0.113.200' }), undefined);
    assert.equal(rule(r, { ip: '198.51.100.9' }), undefined);
    assert.equal(rule(r, { ip: '2001:db8:1::5' }), undefined);
    assert.equal(rule(r, { ip: '203.0.114.1' }), 'ip');
    assert.equal(rule(r, { ip: '198.51.100.10' }), 'ip');
    assert.equal(rule(r, { ip: '2001:db9::1' }), 'ip');
    assert.equal(rule(r, { ip: 'garbage' }), 'ip');
  });

  test('an IPv4-mapped IPv6 client counts as its IPv4 address, and a mapped range as its IPv4 range', () => {
    assert.equal(rule(r, { ip: '::ffff:203.0.113.5' }), undefined);
    assert.equal(rule(r, { ip: '::ffff:203.0.114.5' }), 'ip');
    const mapped = compile({ cidrs: ['::ffff:10.0.0.0/104'] });
    assert.deepEqual(mapped.doc.cidrs, ['10.0.0.0/8']);
    assert.equal(rule(mapped, { ip: '10.1.2.3' }), undefined);
    assert.equal(rule(mapped, { ip: '11.1.2.3' }), 'ip');
  });

  test('ranges are validated', () => {
    assert.match(problem({ cidrs: ['10.0.0.0/33'] }), /not an IP range/);
    assert.match(problem({ cidrs: ['example.com'] }), /not an IP range/);
  });
});

describe('method rule', () => {
  const r = compile({ methods: ['dryRun'] });

  test('only the listed families; a method of no family always passes', () => {
    assert.equal(rule(r, { family: 'dryRun' }), undefined);
    assert.equal(rule(r, { family: 'sponsorship' }), 'method');
    assert.equal(brokenCallerRule({ restrictions: r, origin: undefined, ip: '1.2.3.4', family: undefined }), undefined);
  });

  test('families are validated', () => {
    assert.match(problem({ methods: [] }), /at least one family/);
    assert.match(problem({ methods: ['sponsor'] }), /sponsorship, tokenQuotes, dryRun/);
  });
});

describe('stored column', () => {
  test('empty restrictions cost one check', () => {
    assert.equal(callerRestrictionsColumn('{}'), NO_CALLER_RESTRICTIONS);
    assert.equal(compile({ origins: [], cidrs: [] }).rules, undefined);
    assert.equal(rule(NO_CALLER_RESTRICTIONS, { origin: 'https://anything.io', ip: '::1' }), undefined);
  });

  test('the rules are checked in order origin, ip, method', () => {
    const all = compile({ origins: ['https://a.io'], cidrs: ['10.0.0.0/8'], methods: ['dryRun'] });
    assert.equal(rule(all, { origin: 'https://b.io', ip: '1.1.1.1' }), 'origin');
    assert.equal(rule(all, { origin: 'https://a.io', ip: '1.1.1.1' }), 'ip');
    assert.equal(rule(all, { origin: 'https://a.io', ip: '10.0.0.1' }), 'method');
    const back = callerRestrictionsColumn(JSON.stringify(all.doc));
    assert.deepEqual(back.doc, all.doc);
  });
});
