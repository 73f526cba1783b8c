import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { exportJWK, exportPKCS8, generateKeyPair } from 'jose';
import { pad, toFunctionSelector } from 'viem';
import { eip1193ChainRuntime } from '../src/chain/chainRegistry.js';
import { callLabels } from '../src/metrics/callLabels.js';
import { createTokenIssuer, type TokenIssuer } from './helpers/sponsorshipTokens.js';
import { createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * The sponsorship-token settings through the real app (docs/guides/sponsorship-tokens.md): the owner's
 * GET/PUT /api/admin/dapps/:dappId/sponsorship-tokens, a refused call in the request log and the metrics' rule,
 * and CORS on the paymaster URL (the preflight a browser sends before a POST with an Authorization header).
 */
const IS_SIGNER = toFunctionSelector('isSigner(address)');

/** The caller-restrictions API test's stub chain: fee reads, a deployed sender, a deposit, the signer accepted. */
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
    entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789',
    paymaster: '0x1111111111111111111111111111111111111111',
  });

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let issuer: TokenIssuer;

before(async () => {
  ctx = await createTestContext({ chains: [stubChain()] });
  a = await createTenant(ctx.deps, `a-${randomUUID()}@example.com`);
  b = await createTenant(ctx.deps, `b-${randomUUID()}@example.com`);
  issuer = await createTokenIssuer();
});

after(async () => {
  await ctx.close();
});

const url = (t: Tenant) => `/api/admin/dapps/${t.dappId}/sponsorship-tokens`;
const put = (owner: Tenant, target: Tenant, doc: unknown) =>
  ctx.app.inject({
    method: 'PUT',
    url: url(target),
    headers: { authorization: `Bearer ${owner.authToken}`, 'content-type': 'application/json' },
    payload: JSON.stringify(doc),
  });
const get = (owner: Tenant, target: Tenant) =>
  ctx.app.inject({ method: 'GET', url: url(target), headers: { authorization: `Bearer ${owner.authToken}` } });

describe('the owner sets and reads the sponsorship-token settings', () => {
  test('none by default; set, read back; {} turns tokens off', async () => {
    assert.deepEqual((await get(a, a)).json().data, {
      dappId: a.dappId,
      sponsorshipTokens: { required: false, keys: [] },
    });
    const set = await put(a, a, issuer.settings(true));
    assert.equal(set.statusCode, 200, set.body);
    const read = (await get(a, a)).json().data;
    assert.equal(read.sponsorshipTokens.required, true);
    assert.equal(read.sponsorshipTokens.keys[0].id, issuer.kid);
    assert.equal((await put(a, a, {})).statusCode, 200);
    assert.deepEqual((await get(a, a)).json().data.sponsorshipTokens, { required: false, keys: [] });
  });

  test("another account's dApp is 404 on both verbs", async () => {
    assert.equal((await get(b, a)).statusCode, 404);
    assert.equal((await put(b, a, issuer.settings(true))).statusCode, 404);
  });

  test('invalid settings are a 400 naming the problem: required without a key, a private JWK, a private PEM, a refused JWKS URL', async () => {
    const cases: [unknown, RegExp][] = [
      [{ required: true }, /must hold a key/],
      [{ keys: [{ kind: 'jwk', id: 'x', jwk: await privateJwk() }] }, /private/],
      [{ keys: [{ kind: 'pem', id: 'p', alg: 'ES256', pem: await privatePem() }] }, /not a PEM/],
      [{ keys: [{ kind: 'jwksUrl', id: 'u', url: 'ftp://example.com/jwks' }] }, /http\(s\) URL/],
    ];
    for (const [doc, problem] of cases) {
      const res = await put(a, a, doc);
      assert.equal(res.statusCode, 400, `${JSON.stringify(doc)}: ${res.body}`);
      assert.match(res.body, problem);
    }
  });
});

async function privateJwk() {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return exportJWK(privateKey);
}
async function privatePem() {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return exportPKCS8(privateKey);
}

const op = {
  sender: '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01',
  nonce: '0x0',
  initCode: '0x',
  callData: '0x',
  callGasLimit: '100000',
  verificationGasLimit: '200000',
  preVerificationGas: '50000',
  maxFeePerGas: '0x3b9aca00',
  maxPriorityFeePerGas: '0x3b9aca00',
};

describe('a refused call', () => {
  test('-32013 with HTTP 401, a denial in the request log with the reason in its message; metrics rule token_<reason>', async () => {
    assert.equal((await put(a, a, issuer.settings(true))).statusCode, 200);
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/api/v1/31337/${a.apiKey}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'pm_sponsorUserOperation',
        params: [op, { mode: 'SPONSORED' }],
      }),
    });
    assert.equal(res.statusCode, 401, res.body);
    const error = res.json().error;
    assert.equal(error.code, -32013);
    assert.deepEqual(error.data, { reason: 'token_required' });
    await ctx.deps.requestLog.flush();
    const log = await ctx.app.inject({
      method: 'GET',
      url: '/api/admin/request-log',
      headers: { authorization: `Bearer ${a.authToken}` },
    });
    const entry = (log.json().data as { entries: Record<string, unknown>[] }).entries[0];
    assert.equal(entry?.outcome, 'denied');
    assert.match(String(entry?.reason), /token_required/);
    const labels = callLabels({
      at: 0,
      method: 'pm_sponsorUserOperation',
      accountId: a.accountId,
      dappId: a.dappId,
      chainId: 31337,
      facts: [],
      latencyMs: 1,
      error,
    });
    assert.deepEqual([labels.outcome, labels.rule], ['denied', 'token_required']);
  });
});

describe('CORS on the paymaster URL', () => {
  const preflight = (t: Tenant, origin: string) =>
    ctx.app.inject({
      method: 'OPTIONS',
      url: `/api/v2/31337/${t.apiKey}`,
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
  const restrict = (t: Tenant, origins: string[]) =>
    ctx.app.inject({
      method: 'PUT',
      url: `/api/admin/dapps/${t.dappId}/restrictions`,
      headers: { authorization: `Bearer ${t.authToken}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ origins }),
    });

  test('no origin rule: any origin is answered (preflight and the POST), reflected, with methods, headers and max-age', async () => {
    const res = await preflight(b, 'https://wallet.example');
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['access-control-allow-origin'], 'https://wallet.example');
    assert.equal(res.headers['access-control-allow-methods'], 'POST');
    assert.equal(res.headers['access-control-allow-headers'], 'content-type, authorization');
    assert.equal(res.headers['access-control-max-age'], '600');
    const post = await ctx.app.inject({
      method: 'POST',
      url: `/api/v2/31337/${b.apiKey}`,
      headers: { 'content-type': 'application/json', origin: 'https://wallet.example' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'pm_supportedEntryPoints', params: [] }),
    });
    assert.equal(post.statusCode, 200, post.body);
    assert.equal(post.headers['access-control-allow-origin'], 'https://wallet.example');
  });

  test('with an origin rule: only an allowed origin is answered; an unknown key gets no CORS', async () => {
    assert.equal((await restrict(b, ['https://app.example.com'])).statusCode, 200);
    const ok = await preflight(b, 'https://app.example.com');
    assert.equal(ok.headers['access-control-allow-origin'], 'https://app.example.com');
    const other = await preflight(b, 'https://evil.example');
    assert.equal(other.headers['access-control-allow-origin'], undefined);
    const unknown = await ctx.app.inject({
      method: 'OPTIONS',
      url: '/api/v2/31337/pk.nope',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
    });
    assert.equal(unknown.headers['access-control-allow-origin'], undefined);
    // The POSTs: the allowed origin is answered (from the dApp the call resolved, or, for a body refused before the
    // key was looked up, from a lookup of its own); the refused origin is not.
    const post = (origin: string, payload: string) =>
      ctx.app.inject({
        method: 'POST',
        url: `/api/v2/31337/${b.apiKey}`,
        headers: { 'content-type': 'application/json', origin },
        payload,
      });
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'pm_supportedEntryPoints', params: [] });
    const allowed = await post('https://app.example.com', call);
    assert.equal(allowed.statusCode, 200, allowed.body);
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://app.example.com');
    const refused = await post('https://evil.example', call);
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(refused.headers['access-control-allow-origin'], undefined);
    const unparsed = await post('https://app.example.com', '{not json');
    assert.equal(unparsed.headers['access-control-allow-origin'], 'https://app.example.com', unparsed.body);
    assert.equal((await post('https://evil.example', '{not json')).headers['access-control-allow-origin'], undefined);
  });

  test('no CORS on the admin routes', async () => {
    const res = await ctx.app.inject({
      method: 'GET',
      url: url(a),
      headers: { authorization: `Bearer ${a.authToken}`, origin: 'https://wallet.example' },
    });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });
});
