import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { pad, toFunctionSelector } from 'viem';
import { eip1193ChainRuntime } from '../src/chain/chainRegistry.js';
import { createTenant, createTestContext, type Tenant, type TestContext, testConfig } from './helpers/testContext.js';

/**
 * Caller-bound keys through the real app (docs/guides/security-keys.md): the owner sets who may use the dApp's API
 * key with `PUT /api/admin/dapps/:dappId/restrictions`; a paymaster call that breaks a rule is -32003 with HTTP 403
 * and `data.rule`, logged as a denial, and one inside every rule is served. The chain is the request log test's
 * stub: fee reads, a deployed sender, a 1,000 ETH deposit, the signer accepted.
 */
const SENDER = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';
const PAYMASTER = '0x1111111111111111111111111111111111111111';
const ENTRY_POINT = '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789';
const IS_SIGNER = toFunctionSelector('isSigner(address)');

const op = (nonce: number) => ({
  sender: SENDER,
  nonce: `0x${nonce.toString(16)}`,
  initCode: '0x',
  callData: '0x',
  callGasLimit: '100000',
  verificationGasLimit: '200000',
  preVerificationGas: '50000',
  maxFeePerGas: '0x3b9aca00',
  maxPriorityFeePerGas: '0x3b9aca00',
  signature: '0x',
});
const sponsored = (nonce: number) => [op(nonce), { mode: 'SPONSORED', calculateGasLimits: false }];

let ctx: TestContext;
let a: Tenant;
let b: Tenant;

const stubChain = () =>
  eip1193ChainRuntime({
    chainId: 31337,
    request: async ({ method, params }) => {
      if (method === 'eth_getBlockByNumber') return { number: '0x1', baseFeePerGas: '0x3b9aca00' };
      if (method === 'eth_maxPriorityFeePerGas') return '0x3b9aca00';
      if (method === 'eth_getCode') return '0x60006000fd';
      if (method === 'eth_call' && JSON.stringify(params).includes(IS_SIGNER.slice(2))) return pad('0x01');
      if (method === 'eth_call') return `0x${(10n ** 21n).toString(16).padStart(64, '0')}${'0'.repeat(64 * 4)}`;
      throw new Error('no chain in this test');
    },
    entryPoint: ENTRY_POINT,
    paymaster: PAYMASTER,
  });

before(async () => {
  ctx = await createTestContext({ chains: [stubChain()] });
  a = await createTenant(ctx.deps, `a-${randomUUID()}@example.com`);
  b = await createTenant(ctx.deps, `b-${randomUUID()}@example.com`);
});

after(async () => {
  await ctx.close();
});

const restrictionsUrl = (t: Tenant) => `/api/admin/dapps/${t.dappId}/restrictions`;

async function setRestrictions(owner: Tenant, target: Tenant, doc: unknown) {
  return ctx.app.inject({
    method: 'PUT',
    url: restrictionsUrl(target),
    headers: { authorization: `Bearer ${owner.authToken}`, 'content-type': 'application/json' },
    payload: JSON.stringify(doc),
  });
}

async function call(args: {
  method: string;
  params: unknown[];
  origin?: string;
  ip?: string;
}): Promise<{ status: number; body: { result?: unknown; error?: { code: number; message: string; data?: unknown } } }> {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/31337/${a.apiKey}`,
    headers: { 'content-type': 'application/json', ...(args.origin === undefined ? {} : { origin: args.origin }) },
    remoteAddress: args.ip ?? '203.0.113.7',
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: args.method, params: args.params }),
  });
  return { status: res.statusCode, body: res.json() };
}

/**
 * The newest request-log entry (of `method` and `outcome`, when given). Entries of one millisecond have no order among them, so a
 * test that made other calls just before names the method it looks for.
 */
async function lastLogEntry(method?: string, outcome?: string): Promise<Record<string, unknown> | undefined> {
  await ctx.deps.requestLog.flush();
  const res = await ctx.app.inject({
    method: 'GET',
    url: '/api/admin/request-log',
    headers: { authorization: `Bearer ${a.authToken}` },
  });
  assert.equal(res.statusCode, 200, res.body);
  const entries = (res.json().data as { entries: Record<string, unknown>[] }).entries;
  return entries.find(
    (e) => (method === undefined || e.method === method) && (outcome === undefined || e.outcome === outcome),
  );
}

function assertRefused(out: Awaited<ReturnType<typeof call>>, rule: string): void {
  assert.equal(out.status, 403, JSON.stringify(out.body));
  assert.equal(out.body.error?.code, -32003);
  assert.deepEqual((out.body.error?.data as { rule?: unknown } | undefined)?.rule, rule);
  assert.match(out.body.error?.message ?? '', new RegExp(`rule ${rule}`));
}

describe('the owner sets and reads the restrictions', () => {
  test('set, normalised, read back; invalid input is a 400 naming the problem', async () => {
    const set = await setRestrictions(a, a, {
      origins: ['https://App.Example.com', '*.example.org'],
      cidrs: ['203.0.113.0/24'],
      methods: ['sponsorship'],
    });
    assert.equal(set.statusCode, 200, set.body);
    const expected = {
      dappId: a.dappId,
      restrictions: {
        origins: ['https://app.example.com:443', 'https://*.example.org:443'],
        cidrs: ['203.0.113.0/24'],
        methods: ['sponsorship'],
      },
    };
    assert.deepEqual(set.json().data, expected);
    const got = await ctx.app.inject({
      method: 'GET',
      url: restrictionsUrl(a),
      headers: { authorization: `Bearer ${a.authToken}` },
    });
    assert.deepEqual(got.json().data, expected);
    const bad = await setRestrictions(a, a, { origins: ['https://app.example.com/path'] });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /scheme:\/\/host/);
    const unknownKey = await setRestrictions(a, a, { origin: ['https://app.example.com'] });
    assert.equal(unknownKey.statusCode, 400);
  });

  test('another account can neither read nor set them: 404 as for a missing dApp, and nothing changes', async () => {
    const read = await ctx.app.inject({
      method: 'GET',
      url: restrictionsUrl(a),
      headers: { authorization: `Bearer ${b.authToken}` },
    });
    assert.equal(read.statusCode, 404);
    const write = await setRestrictions(b, a, {});
    assert.equal(write.statusCode, 404);
    const still = await ctx.deps.accounts.getDapp({ accountId: a.accountId, dappId: a.dappId });
    assert.deepEqual(still.restrictions.doc.methods, ['sponsorship']);
  });
});

describe('paymaster calls under the restrictions', () => {
  test('origin: refused without one or from another; the look-alikes too; logged as a denial with its rule', async () => {
    assert.equal(
      (await setRestrictions(a, a, { origins: ['https://app.example.com', '*.example.org'] })).statusCode,
      200,
    );
    assertRefused(await call({ method: 'pm_supportedEntryPoints', params: [] }), 'origin');
    for (const origin of [
      'https://evil.io',
      'https://example.org',
      'https://example.org.evil.io',
      'http://app.example.com',
    ]) {
      assertRefused(await call({ method: 'pm_supportedEntryPoints', params: [], origin }), 'origin');
    }
    const denied = await call({ method: 'pm_getFeeQuoteOrData', params: sponsored(1), origin: 'https://evil.io' });
    assertRefused(denied, 'origin');
    const e = await lastLogEntry('pm_getFeeQuoteOrData');
    assert.equal(e?.outcome, 'denied');
    assert.equal(e?.errorCode, -32003);
    assert.match(String(e?.reason), /rule origin/);
    assert.equal(e?.method, 'pm_getFeeQuoteOrData');

    const ok = await call({ method: 'pm_getFeeQuoteOrData', params: sponsored(2), origin: 'https://a.b.example.org' });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal((await lastLogEntry('pm_getFeeQuoteOrData', 'sponsored'))?.outcome, 'sponsored');
  });

  test('allowNoOrigin lets scripts without an Origin through, not a wrong origin', async () => {
    await setRestrictions(a, a, { origins: ['https://app.example.com'], allowNoOrigin: true });
    assert.equal((await call({ method: 'pm_supportedEntryPoints', params: [] })).status, 200);
    assertRefused(await call({ method: 'pm_supportedEntryPoints', params: [], origin: 'https://evil.io' }), 'origin');
  });

  test('ip: the client IP inside a range (IPv4, IPv6, IPv4-mapped) passes, another is refused', async () => {
    await setRestrictions(a, a, { cidrs: ['203.0.113.0/24', '2001:db8::/32'] });
    for (const ip of ['203.0.113.9', '::ffff:203.0.113.9', '2001:db8::1']) {
      assert.equal((await call({ method: 'pm_supportedEntryPoints', params: [], ip })).status, 200, ip);
    }
    for (const ip of ['198.51.100.1', '2001:db9::1']) {
      assertRefused(await call({ method: 'pm_supportedEntryPoints', params: [], ip }), 'ip');
    }
  });

  test('method: a family not listed is refused, whatever the method or mode; a listed one is served', async () => {
    await setRestrictions(a, a, { methods: ['dryRun'] });
    assertRefused(await call({ method: 'pm_getFeeQuoteOrData', params: sponsored(3) }), 'method');
    const erc20 = await call({ method: 'pm_getFeeQuoteOrData', params: [op(4), { mode: 'ERC20' }] });
    assertRefused(erc20, 'method');
    assert.deepEqual(erc20.body.error?.data, { rule: 'method', family: 'tokenQuotes' });
    const quotes = await call({ method: 'pimlico_getTokenQuotes', params: [{ tokens: [] }, ENTRY_POINT, '0x7a69'] });
    assertRefused(quotes, 'method');
    // Metadata of no family stays open.
    assert.equal((await call({ method: 'pm_supportedEntryPoints', params: [] })).status, 200);

    await setRestrictions(a, a, { methods: ['sponsorship'] });
    assert.equal((await call({ method: 'pm_getFeeQuoteOrData', params: sponsored(5) })).status, 200);
    assertRefused(
      await call({ method: 'pimlico_getTokenQuotes', params: [{ tokens: [] }, ENTRY_POINT, '0x7a69'] }),
      'method',
    );
  });

  test('{} lifts every restriction at once', async () => {
    await setRestrictions(a, a, { origins: ['https://app.example.com'] });
    assertRefused(await call({ method: 'pm_supportedEntryPoints', params: [] }), 'origin');
    await setRestrictions(a, a, {});
    assert.equal((await call({ method: 'pm_supportedEntryPoints', params: [], origin: 'https://x.io' })).status, 200);
  });
});

test('behind a trusted proxy the ip rule reads the forwarded client IP, and only from that proxy', async () => {
  const base = testConfig();
  const proxied = await createTestContext({
    chains: [stubChain()],
    config: { rateLimits: { ...base.rateLimits, trustedProxies: ['127.0.0.1'] } },
  });
  try {
    const t = await createTenant(proxied.deps);
    await proxied.deps.accounts.setDappRestrictions({
      accountId: t.accountId,
      dappId: t.dappId,
      restrictions: { cidrs: ['203.0.113.0/24'] },
    });
    const send = async (remoteAddress: string, forwardedFor: string) => {
      const res = await proxied.app.inject({
        method: 'POST',
        url: `/api/v1/31337/${t.apiKey}`,
        headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
        remoteAddress,
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'pm_supportedEntryPoints', params: [] }),
      });
      return { status: res.statusCode, body: res.json() as { error?: { data?: { rule?: string } } } };
    };
    assert.equal((await send('127.0.0.1', '203.0.113.9')).status, 200);
    const outside = await send('127.0.0.1', '198.51.100.1');
    assert.equal(outside.status, 403);
    assert.equal(outside.body.error?.data?.rule, 'ip');
    // A client that is not the proxy cannot claim an address with the header.
    assert.equal((await send('10.9.9.9', '203.0.113.9')).status, 403);
  } finally {
    await proxied.close();
  }
});
