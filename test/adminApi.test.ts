import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { hashSecret } from '../src/accounts/credentials.js';
import { createApp } from '../src/app.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import type { Store } from '../src/store/store.js';
import {
  createTenant,
  createTestContext,
  dropTestSchema,
  fakeResolver,
  openTestStore,
  TEST_MASTER_KEY,
  type Tenant,
  type TestContext,
  testConfig,
  WEBHOOK_PATH,
  webhookHeaders,
} from './helpers/testContext.js';
import { accountWire, createdTokenWire, dappWire, tokenWire } from './helpers/wireSchemas.js';

// ---------------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------------

/** The envelope, strictly: no other top-level key may appear. */
const envelopeSchema = z.strictObject({
  statusCode: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
type Envelope = z.infer<typeof envelopeSchema>;

type TokenView = z.infer<typeof tokenWire>;
type DappView = z.infer<typeof dappWire>;

/** Anything that looks like a stack frame, a source path or a serialised Error. */
const STACK_TRACE = /\n\s*at\s|\bat .+:\d+:\d+|file:\/\/|\/work\/|node_modules|\.[cm]?[jt]s:\d+|"stack"/;

interface Res {
  readonly status: number;
  readonly text: string;
  readonly body: Envelope;
}

type Auth = { readonly bearer: string } | { readonly authToken: string } | { readonly headers: Record<string, string> };

interface CallOptions {
  readonly auth?: Auth;
  readonly body?: unknown;
  /** Sent as is, with content-type application/json unless `contentType` says otherwise. */
  readonly rawBody?: string;
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';

/**
 * One request through `inject()`. Every response is checked for the envelope shape, a JSON content type, a
 * status equal to the envelope's statusCode, and the absence of a stack trace.
 */
async function call(app: FastifyInstance, method: Method, url: string, opts: CallOptions = {}): Promise<Res> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  const auth = opts.auth;
  if (auth !== undefined) {
    if ('bearer' in auth) headers.authorization = `Bearer ${auth.bearer}`;
    else if ('authToken' in auth) headers.authtoken = auth.authToken;
    else Object.assign(headers, auth.headers);
  }
  let payload: string | undefined;
  if (opts.rawBody !== undefined) payload = opts.rawBody;
  else if (opts.body !== undefined) payload = JSON.stringify(opts.body);
  if (payload !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
  const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
  assert.doesNotMatch(res.body, STACK_TRACE, `${method} ${url} leaked internals: ${res.body}`);
  assert.match(String(res.headers['content-type']), /^application\/json/, `${method} ${url} content type`);
  const parsed: unknown = JSON.parse(res.body);
  const body = envelopeSchema.parse(parsed);
  assert.equal(body.statusCode, res.statusCode, `${method} ${url}: envelope statusCode`);
  return { status: res.statusCode, text: res.body, body };
}

/** Asserts an exact error response: status, and a body that is exactly `{statusCode, message}`. */
function assertError(res: Res, status: number, message: string, what = ''): void {
  assert.deepEqual({ status: res.status, body: res.body }, { status, body: { statusCode: status, message } }, what);
}

function okData<T>(res: Res, message: string, schema: z.ZodType<T>): T {
  assert.equal(res.status, 200, `expected 200, got ${res.status}: ${res.text}`);
  assert.equal(res.body.message, message);
  assert.ok('data' in res.body, 'data is present');
  return schema.parse(res.body.data);
}

const bearer = (t: Pick<Tenant, 'authToken'>): Auth => ({ bearer: t.authToken });

async function pollUntil<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function listTokens(app: FastifyInstance, auth: Auth): Promise<TokenView[]> {
  return okData(await call(app, 'GET', '/api/admin/tokens', { auth }), 'Auth tokens fetched', z.array(tokenWire));
}

async function listDapps(app: FastifyInstance, auth: Auth): Promise<DappView[]> {
  return okData(await call(app, 'GET', '/api/admin/dapps', { auth }), 'dApps fetched', z.array(dappWire));
}

async function webhookList(app: FastifyInstance, creds: Pick<Tenant, 'authToken' | 'apiKey'>): Promise<Res> {
  return call(app, 'GET', WEBHOOK_PATH, { headers: webhookHeaders(creds) });
}

// ---------------------------------------------------------------------------------------------------------------
// Happy paths
// ---------------------------------------------------------------------------------------------------------------

/** The chains the happy paths' deployment serves (dApps may list only these). */
const SERVED = [1, 5, 10, 137, 8453, 31337];

describe('admin API: happy paths', () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await createTestContext({ servedChainIds: SERVED });
  });
  after(async () => {
    await ctx.close();
  });

  test('GET /api/admin/account with a Bearer token and with an authToken header', async () => {
    const t = await createTenant(ctx.deps);
    const stored = await ctx.deps.store.accounts.findById(t.accountId);
    assert.ok(stored);
    const expected = {
      statusCode: 200,
      message: 'Account fetched',
      data: { accountId: t.accountId, email: t.email, createdAt: new Date(stored.createdAt).toISOString() },
    };
    for (const auth of [
      bearer(t),
      { authToken: t.authToken },
      { headers: { authorization: `bearer   ${t.authToken}  ` } },
      { headers: { authtoken: `  ${t.authToken}  ` } },
    ] satisfies Auth[]) {
      const res = await call(ctx.app, 'GET', '/api/admin/account', { auth });
      assert.equal(res.status, 200, JSON.stringify(auth));
      assert.deepEqual(res.body, expected);
    }
  });

  test('POST /api/admin/tokens returns the token once; the list only has its prefix; the token works', async () => {
    const t = await createTenant(ctx.deps);
    const created = okData(
      await call(ctx.app, 'POST', '/api/admin/tokens', { auth: bearer(t), body: { name: '  ci deploy  ' } }),
      'Auth token created',
      createdTokenWire,
    );
    assert.equal(created.name, 'ci deploy');
    assert.equal(created.prefix, created.authToken.slice(0, 12));
    assert.equal(created.lastUsedAt, null);
    assert.equal(created.revokedAt, null);

    // Storage keeps the hash, the prefix and the name; the secret resolves to this record.
    const stored = await ctx.deps.store.accounts.findTokenByHash(hashSecret(created.authToken));
    assert.ok(stored);
    assert.deepEqual(
      { id: stored.id, accountId: stored.accountId, prefix: stored.prefix, name: stored.name },
      { id: created.tokenId, accountId: t.accountId, prefix: created.prefix, name: 'ci deploy' },
    );

    // The new token authenticates as the same account.
    const account = okData(
      await call(ctx.app, 'GET', '/api/admin/account', { auth: { bearer: created.authToken } }),
      'Account fetched',
      accountWire,
    );
    assert.equal(account.accountId, t.accountId);

    // The list never carries a secret.
    const res = await call(ctx.app, 'GET', '/api/admin/tokens', { auth: bearer(t) });
    assert.ok(!res.text.includes(created.authToken), 'list must not contain the new secret');
    assert.ok(!res.text.includes(t.authToken), 'list must not contain the caller secret');
    assert.doesNotMatch(res.text, /pat\.[0-9A-Za-z]{13,}/);
    const tokens = okData(res, 'Auth tokens fetched', z.array(tokenWire));
    assert.deepEqual(
      // Listed in creation order; two rows made within one millisecond may swap, so compare sorted.
      tokens.map((x) => [x.name, x.prefix]).sort(),
      [
        ['ci deploy', created.prefix],
        ['test', t.authToken.slice(0, 12)],
      ],
    );
    const listed = tokens.find((x) => x.tokenId === created.tokenId);
    assert.ok(listed);
    assert.equal(listed.createdAt, created.createdAt);
  });

  test('POST /api/admin/tokens without a body or with {} names the token "default"', async () => {
    const t = await createTenant(ctx.deps);
    const a = okData(
      await call(ctx.app, 'POST', '/api/admin/tokens', { auth: bearer(t) }),
      'Auth token created',
      createdTokenWire,
    );
    const b = okData(
      await call(ctx.app, 'POST', '/api/admin/tokens', { auth: bearer(t), body: {} }),
      'Auth token created',
      createdTokenWire,
    );
    assert.equal(a.name, 'default');
    assert.equal(b.name, 'default');
    assert.notEqual(a.authToken, b.authToken);
    assert.equal((await ctx.deps.store.accounts.listTokens(t.accountId)).length, 3);
  });

  test('DELETE /api/admin/tokens/:id revokes: the token gets 401, the list shows revokedAt', async () => {
    const t = await createTenant(ctx.deps);
    const victim = okData(
      await call(ctx.app, 'POST', '/api/admin/tokens', { auth: bearer(t), body: { name: 'to revoke' } }),
      'Auth token created',
      createdTokenWire,
    );
    // Used once, so the token is in the authentication cache when it is revoked.
    assert.equal(
      (await call(ctx.app, 'GET', '/api/admin/account', { auth: { bearer: victim.authToken } })).status,
      200,
    );

    const res = await call(ctx.app, 'DELETE', `/api/admin/tokens/${victim.tokenId}`, { auth: bearer(t) });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { statusCode: 200, message: 'Auth token revoked' });

    for (const auth of [{ bearer: victim.authToken }, { authToken: victim.authToken }] satisfies Auth[]) {
      assertError(await call(ctx.app, 'GET', '/api/admin/account', { auth }), 401, 'Invalid auth token');
    }
    const stored = await ctx.deps.store.accounts.findTokenByHash(hashSecret(victim.authToken));
    assert.ok(stored);
    assert.equal(typeof stored.revokedAt, 'number');

    const listed = (await listTokens(ctx.app, bearer(t))).find((x) => x.tokenId === victim.tokenId);
    assert.ok(listed);
    assert.equal(listed.revokedAt, new Date(stored.revokedAt ?? 0).toISOString());
    // The caller's own token is untouched.
    const own = (await listTokens(ctx.app, bearer(t))).find((x) => x.name === 'test');
    assert.equal(own?.revokedAt, null);

    // Revoking it again: it is no longer a live token.
    assertError(
      await call(ctx.app, 'DELETE', `/api/admin/tokens/${victim.tokenId}`, { auth: bearer(t) }),
      404,
      'Auth token not found',
    );
  });

  test('a token can revoke itself and is refused at once', async () => {
    const t = await createTenant(ctx.deps);
    const [own] = await ctx.deps.store.accounts.listTokens(t.accountId);
    assert.ok(own);
    const res = await call(ctx.app, 'DELETE', `/api/admin/tokens/${own.id}`, { auth: { authToken: t.authToken } });
    assert.deepEqual(res.body, { statusCode: 200, message: 'Auth token revoked' });
    assertError(await call(ctx.app, 'GET', '/api/admin/tokens', { auth: bearer(t) }), 401, 'Invalid auth token');
  });

  test('POST /api/admin/dapps deduplicates and sorts chainIds, trims the name; GET list and one', async () => {
    const t = await createTenant(ctx.deps);
    const created = okData(
      await call(ctx.app, 'POST', '/api/admin/dapps', {
        auth: bearer(t),
        body: { name: '  My dApp  ', chainIds: [137, 1, 137, 10, 1] },
      }),
      'dApp created',
      dappWire,
    );
    assert.equal(created.name, 'My dApp');
    assert.deepEqual(created.chainIds, [1, 10, 137]);
    assert.equal(created.createdAt, created.updatedAt);

    const stored = await ctx.deps.store.dapps.findById(created.dappId);
    assert.ok(stored);
    assert.deepEqual(
      { accountId: stored.accountId, name: stored.name, chainIds: stored.chainIds, apiKeyPrefix: stored.apiKeyPrefix },
      { accountId: t.accountId, name: 'My dApp', chainIds: [1, 10, 137], apiKeyPrefix: created.apiKey.slice(0, 12) },
    );
    assert.ok(!stored.apiKeyCiphertext.includes(created.apiKey), 'the API key is stored encrypted');
    assert.equal((await ctx.deps.store.dapps.findByApiKeyHash(hashSecret(created.apiKey)))?.id, created.dappId);

    const list = await listDapps(ctx.app, bearer(t));
    assert.deepEqual(list.map((d) => [d.name, d.dappId, d.chainIds]).sort(), [
      ['My dApp', created.dappId, [1, 10, 137]],
      ['Test dApp', t.dappId, [31337]],
    ]);
    assert.equal(list.find((d) => d.dappId === t.dappId)?.apiKey, t.apiKey);
    assert.equal(list.find((d) => d.dappId === created.dappId)?.apiKey, created.apiKey);

    const one = await call(ctx.app, 'GET', `/api/admin/dapps/${created.dappId}`, { auth: bearer(t) });
    assert.deepEqual(one.body, { statusCode: 200, message: 'dApp fetched', data: created });

    // The new dApp's key works on the webhook API with the account's token.
    const hooks = await webhookList(ctx.app, { authToken: t.authToken, apiKey: created.apiKey });
    assert.deepEqual(hooks.body, { statusCode: 200, message: 'Webhook list fetched', data: [] });
  });

  test('PATCH /api/admin/dapps/:id renames, changes chains, or both', async () => {
    const t = await createTenant(ctx.deps);
    const url = `/api/admin/dapps/${t.dappId}`;
    const renamed = okData(
      await call(ctx.app, 'PATCH', url, { auth: bearer(t), body: { name: ' Renamed ' } }),
      'dApp updated',
      dappWire,
    );
    assert.deepEqual([renamed.name, renamed.chainIds, renamed.apiKey], ['Renamed', [31337], t.apiKey]);

    const rechained = okData(
      await call(ctx.app, 'PATCH', url, { auth: bearer(t), body: { chainIds: [10, 8453, 10] } }),
      'dApp updated',
      dappWire,
    );
    assert.deepEqual([rechained.name, rechained.chainIds], ['Renamed', [10, 8453]]);

    const both = okData(
      await call(ctx.app, 'PATCH', url, { auth: { authToken: t.authToken }, body: { name: 'Both', chainIds: [5] } }),
      'dApp updated',
      dappWire,
    );
    assert.deepEqual([both.name, both.chainIds, both.dappId, both.apiKey], ['Both', [5], t.dappId, t.apiKey]);
    assert.ok(Date.parse(both.updatedAt) >= Date.parse(both.createdAt));

    const stored = await ctx.deps.store.dapps.findById(t.dappId);
    assert.deepEqual([stored?.name, stored?.chainIds], ['Both', [5]]);
    assert.deepEqual((await call(ctx.app, 'GET', url, { auth: bearer(t) })).body.data, both);
  });

  test('POST /api/admin/dapps/:id/rotate-key: the old key stops working on the webhook API, the new one works', async () => {
    const t = await createTenant(ctx.deps);
    // Used first, so the old key is in the API key cache.
    assert.deepEqual((await webhookList(ctx.app, t)).body, {
      statusCode: 200,
      message: 'Webhook list fetched',
      data: [],
    });

    const rotated = okData(
      await call(ctx.app, 'POST', `/api/admin/dapps/${t.dappId}/rotate-key`, { auth: bearer(t) }),
      'API key rotated',
      dappWire,
    );
    assert.notEqual(rotated.apiKey, t.apiKey);
    assert.deepEqual([rotated.dappId, rotated.name, rotated.chainIds], [t.dappId, 'Test dApp', [31337]]);

    assertError(await webhookList(ctx.app, t), 401, 'Invalid auth token or API key', 'old key');
    assert.deepEqual((await webhookList(ctx.app, { authToken: t.authToken, apiKey: rotated.apiKey })).body, {
      statusCode: 200,
      message: 'Webhook list fetched',
      data: [],
    });

    const stored = await ctx.deps.store.dapps.findById(t.dappId);
    assert.equal(stored?.apiKeyPrefix, rotated.apiKey.slice(0, 12));
    assert.equal(await ctx.deps.store.dapps.findByApiKeyHash(hashSecret(t.apiKey)), undefined);
    const fetched = okData(
      await call(ctx.app, 'GET', `/api/admin/dapps/${t.dappId}`, { auth: bearer(t) }),
      'dApp fetched',
      dappWire,
    );
    assert.equal(fetched.apiKey, rotated.apiKey);
  });

  test('last_used_at of a token is recorded once it is used', async () => {
    const t = await createTenant(ctx.deps);
    const { secret: unused } = await ctx.deps.accounts.createToken({ accountId: t.accountId, name: 'unused' });
    const before = await ctx.deps.store.accounts.listTokens(t.accountId);
    assert.deepEqual(before.map((x) => [x.name, x.lastUsedAt]).sort(), [
      ['test', null],
      ['unused', null],
    ]);
    const startedAt = Date.now();
    // The write is fire-and-forget: poll the API until it shows.
    const used = await pollUntil('lastUsedAt of the "test" token', async () => {
      const list = await listTokens(ctx.app, bearer(t));
      const tok = list.find((x) => x.name === 'test');
      return tok?.lastUsedAt === null ? undefined : tok;
    });
    assert.ok(used.lastUsedAt !== null && Date.parse(used.lastUsedAt) >= startedAt - 1000);
    const other = (await ctx.deps.store.accounts.listTokens(t.accountId)).find((x) => x.name === 'unused');
    assert.equal(other?.lastUsedAt, null, 'an unused token keeps lastUsedAt null');

    // Using the other token records it too.
    assert.equal((await call(ctx.app, 'GET', '/api/admin/account', { auth: { authToken: unused } })).status, 200);
    await pollUntil('lastUsedAt of the "unused" token', async () => {
      const row = (await ctx.deps.store.accounts.listTokens(t.accountId)).find((x) => x.name === 'unused');
      return row?.lastUsedAt === null ? undefined : row;
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------------------------

const ALL_ROUTES: readonly { method: Method; url: (dappId: string) => string; body?: unknown }[] = [
  { method: 'GET', url: () => '/api/admin/account' },
  { method: 'GET', url: () => '/api/admin/tokens' },
  { method: 'POST', url: () => '/api/admin/tokens', body: { name: 'x' } },
  { method: 'DELETE', url: () => '/api/admin/tokens/00000000-0000-4000-8000-000000000000' },
  { method: 'GET', url: () => '/api/admin/dapps' },
  { method: 'POST', url: () => '/api/admin/dapps', body: { name: 'x', chainIds: [1] } },
  { method: 'GET', url: (id) => `/api/admin/dapps/${id}` },
  { method: 'PATCH', url: (id) => `/api/admin/dapps/${id}`, body: { name: 'x' } },
  { method: 'POST', url: (id) => `/api/admin/dapps/${id}/rotate-key` },
];

describe('admin API: errors', () => {
  let ctx: TestContext;
  let t: Tenant;
  let revoked: string;
  before(async () => {
    ctx = await createTestContext();
    t = await createTenant(ctx.deps);
    const r = await ctx.deps.accounts.createToken({ accountId: t.accountId, name: 'revoked' });
    await ctx.deps.accounts.revokeToken({ accountId: t.accountId, tokenId: r.token.id });
    revoked = r.secret;
  });
  after(async () => {
    await ctx.close();
  });

  /** The tenant's dApp and tokens exactly as stored, to prove a refused request changed nothing. */
  async function snapshot() {
    return {
      dapps: await ctx.deps.store.dapps.listByAccount(t.accountId),
      // lastUsedAt moves whenever the token authenticates; everything else must not.
      tokens: (await ctx.deps.store.accounts.listTokens(t.accountId)).map((x) => ({ ...x, lastUsedAt: null })),
    };
  }

  test('missing credentials → 401 "Auth token is required in the headers" on every admin route', async () => {
    const before = await snapshot();
    const missing: readonly { label: string; headers: Record<string, string> }[] = [
      { label: 'no header', headers: {} },
      { label: 'blank authToken', headers: { authtoken: '   ' } },
      { label: 'Bearer without a token', headers: { authorization: 'Bearer ' } },
      { label: 'Basic scheme', headers: { authorization: 'Basic dXNlcjpwYXNz' } },
    ];
    for (const route of ALL_ROUTES) {
      for (const m of missing) {
        const res = await call(ctx.app, route.method, route.url(t.dappId), {
          auth: { headers: m.headers },
          ...(route.body === undefined ? {} : { body: route.body }),
        });
        assertError(
          res,
          401,
          'Auth token is required in the headers',
          `${route.method} ${route.url(t.dappId)} ${m.label}`,
        );
      }
    }
    assert.deepEqual(await snapshot(), before);
  });

  test('garbage, unknown or revoked token → 401 "Invalid auth token" on every admin route', async () => {
    const before = await snapshot();
    const bad: readonly { label: string; auth: Auth }[] = [
      { label: 'garbage bearer', auth: { bearer: 'garbage' } },
      { label: 'garbage header', auth: { authToken: 'not-a-token' } },
      { label: 'well-formed unknown', auth: { bearer: `pat.${'A'.repeat(43)}` } },
      { label: 'API key as token', auth: { bearer: t.apiKey } },
      { label: 'token with a suffix', auth: { bearer: `${t.authToken}x` } },
      { label: 'revoked bearer', auth: { bearer: revoked } },
      { label: 'revoked header', auth: { authToken: revoked } },
    ];
    for (const route of ALL_ROUTES) {
      for (const b of bad) {
        const res = await call(ctx.app, route.method, route.url(t.dappId), {
          auth: b.auth,
          ...(route.body === undefined ? {} : { body: route.body }),
        });
        assertError(res, 401, 'Invalid auth token', `${route.method} ${route.url(t.dappId)} ${b.label}`);
      }
    }
    assert.deepEqual(await snapshot(), before);
  });

  test('authentication is checked before body validation', async () => {
    // (Malformed JSON is refused by the body parser, which runs before any handler, so it gets 400 either way.)
    assertError(
      await call(ctx.app, 'POST', '/api/admin/dapps', { body: { name: '' } }),
      401,
      'Auth token is required in the headers',
    );
    assertError(
      await call(ctx.app, 'POST', '/api/admin/dapps', { auth: { bearer: revoked }, body: { name: '' } }),
      401,
      'Invalid auth token',
    );
  });

  test('invalid bodies → 400 with the specific message, nothing stored', async () => {
    const before = await snapshot();
    const long = 'x'.repeat(101);
    const cases: readonly { label: string; method: Method; url: string; body?: unknown; message: string }[] = [
      // POST /api/admin/dapps
      {
        label: 'name empty',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: '', chainIds: [1] },
        message: 'name must not be empty',
      },
      {
        label: 'name blank',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: '   ', chainIds: [1] },
        message: 'name must not be empty',
      },
      {
        label: 'name too long',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: long, chainIds: [1] },
        message: 'name must be at most 100 characters',
      },
      {
        label: 'name missing',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { chainIds: [1] },
        message: 'name must be a string',
      },
      {
        label: 'name number',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: 5, chainIds: [1] },
        message: 'name must be a string',
      },
      { label: 'no body', method: 'POST', url: '/api/admin/dapps', message: 'name must be a string' },
      {
        label: 'chainIds string',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: 'ok', chainIds: '1' },
        message: 'chainIds must be an array of chain ids',
      },
      {
        label: 'chainIds object',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: 'ok', chainIds: { 0: 1 } },
        message: 'chainIds must be an array of chain ids',
      },
      {
        label: 'chainIds missing',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: 'ok' },
        message: 'chainIds must be an array of chain ids',
      },
      {
        label: 'chainIds [0]',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: 'ok', chainIds: [0] },
        message: 'chainIds must be positive integers',
      },
      {
        label: 'chainIds [-1]',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: 'ok', chainIds: [-1] },
        message: 'chainIds must be positive integers',
      },
      {
        label: 'chainIds [1.5]',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: 'ok', chainIds: [1.5] },
        message: 'chainIds must be positive integers',
      },
      {
        label: 'chainIds ["1"]',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: 'ok', chainIds: ['1'] },
        message: 'chainIds must be positive integers',
      },
      {
        label: 'chainIds unsafe',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: 'ok', chainIds: [2 ** 53] },
        message: 'chainIds must be positive integers',
      },
      {
        label: 'chainIds []',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: 'ok', chainIds: [] },
        message: 'chainIds must name at least one chain',
      },
      {
        label: 'chainIds 65',
        method: 'POST',
        url: '/api/admin/dapps',
        body: { name: 'ok', chainIds: Array.from({ length: 65 }, (_, i) => i + 1) },
        message: 'chainIds may name at most 64 chains',
      },
      // PATCH /api/admin/dapps/:id
      {
        label: 'patch {}',
        method: 'PATCH',
        url: `/api/admin/dapps/${t.dappId}`,
        body: {},
        message: 'give name or chainIds to change',
      },
      {
        label: 'patch no body',
        method: 'PATCH',
        url: `/api/admin/dapps/${t.dappId}`,
        message: 'give name or chainIds to change',
      },
      {
        label: 'patch unknown keys only',
        method: 'PATCH',
        url: `/api/admin/dapps/${t.dappId}`,
        body: { apiKey: 'pk.x' },
        message: 'give name or chainIds to change',
      },
      {
        label: 'patch name empty',
        method: 'PATCH',
        url: `/api/admin/dapps/${t.dappId}`,
        body: { name: '' },
        message: 'name must not be empty',
      },
      {
        label: 'patch name null',
        method: 'PATCH',
        url: `/api/admin/dapps/${t.dappId}`,
        body: { name: null },
        message: 'name must be a string',
      },
      {
        label: 'patch name too long',
        method: 'PATCH',
        url: `/api/admin/dapps/${t.dappId}`,
        body: { name: long },
        message: 'name must be at most 100 characters',
      },
      {
        label: 'patch chainIds []',
        method: 'PATCH',
        url: `/api/admin/dapps/${t.dappId}`,
        body: { chainIds: [] },
        message: 'chainIds must name at least one chain',
      },
      {
        label: 'patch chainIds [0]',
        method: 'PATCH',
        url: `/api/admin/dapps/${t.dappId}`,
        body: { name: 'ok', chainIds: [0] },
        message: 'chainIds must be positive integers',
      },
      {
        label: 'patch chainIds number',
        method: 'PATCH',
        url: `/api/admin/dapps/${t.dappId}`,
        body: { chainIds: 1 },
        message: 'chainIds must be an array of chain ids',
      },
      // POST /api/admin/tokens
      {
        label: 'token name empty',
        method: 'POST',
        url: '/api/admin/tokens',
        body: { name: '' },
        message: 'name must not be empty',
      },
      {
        label: 'token name too long',
        method: 'POST',
        url: '/api/admin/tokens',
        body: { name: long },
        message: 'name must be at most 100 characters',
      },
      {
        label: 'token name null',
        method: 'POST',
        url: '/api/admin/tokens',
        body: { name: null },
        message: 'name must be a string',
      },
    ];
    for (const c of cases) {
      const res = await call(ctx.app, c.method, c.url, {
        auth: bearer(t),
        ...(c.body === undefined ? {} : { body: c.body }),
      });
      assertError(res, 400, c.message, c.label);
    }
    assert.deepEqual(await snapshot(), before);
  });

  test('non-object JSON → 400 "Request body must be a JSON object"; malformed JSON → 400; other types → 415', async () => {
    const before = await snapshot();
    const targets: readonly { method: Method; url: string }[] = [
      { method: 'POST', url: '/api/admin/tokens' },
      { method: 'POST', url: '/api/admin/dapps' },
      { method: 'PATCH', url: `/api/admin/dapps/${t.dappId}` },
    ];
    for (const target of targets) {
      for (const raw of ['[]', '[{"name":"x","chainIds":[1]}]', '"name"', '42', 'null', 'true']) {
        assertError(
          await call(ctx.app, target.method, target.url, { auth: bearer(t), rawBody: raw }),
          400,
          'Request body must be a JSON object',
          `${target.method} ${target.url} ${raw}`,
        );
      }
      for (const raw of ['{"name":', '{name: "x"}', "{'name':'x'}", '{"name":"x",}', 'undefined']) {
        assertError(
          await call(ctx.app, target.method, target.url, { auth: bearer(t), rawBody: raw }),
          400,
          'Malformed JSON in request body',
          `${target.method} ${target.url} ${raw}`,
        );
      }
      assertError(
        await call(ctx.app, target.method, target.url, {
          auth: bearer(t),
          rawBody: 'name=x',
          contentType: 'text/plain',
        }),
        415,
        'Unsupported content type: send application/json',
      );
      assertError(
        await call(ctx.app, target.method, target.url, {
          auth: bearer(t),
          rawBody: JSON.stringify({ name: 'x'.repeat(70 * 1024) }),
        }),
        413,
        'Request body is larger than 65536 bytes',
      );
    }
    assert.deepEqual(await snapshot(), before);
  });

  test('unknown ids → 404 "dApp not found" / "Auth token not found"; unknown routes → 404', async () => {
    const before = await snapshot();
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope', "x'; DROP TABLE dapps; --"]) {
      const enc = encodeURIComponent(id);
      assertError(
        await call(ctx.app, 'GET', `/api/admin/dapps/${enc}`, { auth: bearer(t) }),
        404,
        'dApp not found',
        id,
      );
      assertError(
        await call(ctx.app, 'PATCH', `/api/admin/dapps/${enc}`, { auth: bearer(t), body: { name: 'x' } }),
        404,
        'dApp not found',
        id,
      );
      assertError(
        await call(ctx.app, 'POST', `/api/admin/dapps/${enc}/rotate-key`, { auth: bearer(t) }),
        404,
        'dApp not found',
        id,
      );
      assertError(
        await call(ctx.app, 'DELETE', `/api/admin/tokens/${enc}`, { auth: bearer(t) }),
        404,
        'Auth token not found',
        id,
      );
    }
    assertError(
      await call(ctx.app, 'GET', '/api/admin/nothing?x=1', { auth: bearer(t) }),
      404,
      'Route GET /api/admin/nothing not found',
    );
    assertError(
      await call(ctx.app, 'PUT', '/api/admin/account', { auth: bearer(t) }),
      404,
      'Route PUT /api/admin/account not found',
    );
    assert.deepEqual(await snapshot(), before);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Security
// ---------------------------------------------------------------------------------------------------------------

describe('admin API: security', () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await createTestContext();
  });
  after(async () => {
    await ctx.close();
  });

  test("account B cannot read, patch, rotate or revoke account A's dApps and tokens (404 like an unknown id)", async () => {
    const a = await createTenant(ctx.deps);
    const b = await createTenant(ctx.deps);
    const [aToken] = await ctx.deps.store.accounts.listTokens(a.accountId);
    assert.ok(aToken);
    const beforeDapp = await ctx.deps.store.dapps.findById(a.dappId);
    const beforeTokens = await ctx.deps.store.accounts.listTokens(a.accountId);

    const unknownDapp = '00000000-0000-4000-8000-000000000000';
    const attempts: readonly { method: Method; url: (id: string) => string; body?: unknown; message: string }[] = [
      { method: 'GET', url: (id) => `/api/admin/dapps/${id}`, message: 'dApp not found' },
      {
        method: 'PATCH',
        url: (id) => `/api/admin/dapps/${id}`,
        body: { name: 'pwned', chainIds: [666] },
        message: 'dApp not found',
      },
      { method: 'PATCH', url: (id) => `/api/admin/dapps/${id}`, body: { name: 'pwned' }, message: 'dApp not found' },
      { method: 'POST', url: (id) => `/api/admin/dapps/${id}/rotate-key`, message: 'dApp not found' },
    ];
    for (const attempt of attempts) {
      for (const auth of [bearer(b), { authToken: b.authToken }] satisfies Auth[]) {
        const opts = { auth, ...(attempt.body === undefined ? {} : { body: attempt.body }) };
        const cross = await call(ctx.app, attempt.method, attempt.url(a.dappId), opts);
        const unknown = await call(ctx.app, attempt.method, attempt.url(unknownDapp), opts);
        assertError(cross, 404, attempt.message, `${attempt.method} ${attempt.url('A')}`);
        assert.deepEqual(cross.body, unknown.body);
        assert.ok(!cross.text.includes(a.apiKey));
      }
    }
    const revoke = await call(ctx.app, 'DELETE', `/api/admin/tokens/${aToken.id}`, { auth: bearer(b) });
    assertError(revoke, 404, 'Auth token not found');
    assert.deepEqual(
      revoke.body,
      (await call(ctx.app, 'DELETE', '/api/admin/tokens/00000000-0000-4000-8000-000000000000', { auth: bearer(b) }))
        .body,
    );

    // B's lists hold only B's things.
    const bDapps = await listDapps(ctx.app, bearer(b));
    assert.deepEqual(
      bDapps.map((d) => d.dappId),
      [b.dappId],
    );
    const bTokensRes = await call(ctx.app, 'GET', '/api/admin/tokens', { auth: bearer(b) });
    assert.ok(!bTokensRes.text.includes(aToken.id));
    assert.ok(!bTokensRes.text.includes(a.authToken.slice(0, 12)));

    // A's data is unchanged: the stored dApp (key ciphertext included) and tokens are identical, and still work.
    assert.deepEqual(await ctx.deps.store.dapps.findById(a.dappId), beforeDapp);
    const afterTokens = await ctx.deps.store.accounts.listTokens(a.accountId);
    assert.deepEqual(
      afterTokens.map((x) => ({ ...x, lastUsedAt: null })),
      beforeTokens.map((x) => ({ ...x, lastUsedAt: null })),
    );
    assert.equal(afterTokens[0]?.revokedAt, null);
    assert.deepEqual((await webhookList(ctx.app, a)).body, {
      statusCode: 200,
      message: 'Webhook list fetched',
      data: [],
    });
    const aView = okData(
      await call(ctx.app, 'GET', `/api/admin/dapps/${a.dappId}`, { auth: bearer(a) }),
      'dApp fetched',
      dappWire,
    );
    assert.deepEqual([aView.name, aView.chainIds, aView.apiKey], ['Test dApp', [31337], a.apiKey]);
    // A's token with B's API key (and the reverse) is refused on the webhook API.
    assertError(
      await webhookList(ctx.app, { authToken: a.authToken, apiKey: b.apiKey }),
      401,
      'Invalid auth token or API key',
    );
    assertError(
      await webhookList(ctx.app, { authToken: b.authToken, apiKey: a.apiKey }),
      401,
      'Invalid auth token or API key',
    );
  });

  test('an internal failure answers 500 "Internal server error" without a stack trace or the cause', async () => {
    const { store, schema } = await openTestStore();
    const failing: Store = {
      ...store,
      accounts: {
        ...store.accounts,
        findTokenByHash: async () => {
          throw new Error('SECRET-DETAIL: connection to db.internal:5432 refused');
        },
      },
    };
    const deps = await createDeps(testConfig(), createLogger({ level: 'silent' }), {
      store: failing,
      masterKey: TEST_MASTER_KEY,
      resolver: fakeResolver,
      servedChainIds: [31337],
    });
    const app = createApp(deps);
    try {
      await app.ready();
      const t = await createTenant(deps);
      for (const route of ALL_ROUTES) {
        const res = await call(app, route.method, route.url(t.dappId), {
          auth: bearer(t),
          ...(route.body === undefined ? {} : { body: route.body }),
        });
        assertError(res, 500, 'Internal server error', `${route.method} ${route.url(t.dappId)}`);
        assert.ok(!res.text.includes('SECRET-DETAIL'));
      }
    } finally {
      await app.close();
      await deps.close();
      await dropTestSchema(schema);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Bugs found while writing these tests, now fixed: each states the expected behaviour.
// ---------------------------------------------------------------------------------------------------------------

describe('admin API: edge cases that once failed', () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await createTestContext();
  });
  after(async () => {
    await ctx.close();
  });

  test('a URL with malformed percent-encoding gets the {statusCode, message} envelope', {}, async () => {
    const t = await createTenant(ctx.deps);
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/api/admin/dapps/%E0%A4%A',
      headers: { authorization: `Bearer ${t.authToken}` },
    });
    assert.equal(res.statusCode, 400);
    const body = z.record(z.string(), z.unknown()).parse(JSON.parse(res.body));
    assert.deepEqual(Object.keys(body).sort(), ['message', 'statusCode'], res.body);
    assert.equal(body.statusCode, 400);
    assert.equal(typeof body.message, 'string');
  });

  test('ids holding a NUL byte are unknown ids (404), not internal errors', {}, async () => {
    const t = await createTenant(ctx.deps);
    assertError(await call(ctx.app, 'GET', '/api/admin/dapps/a%00b', { auth: bearer(t) }), 404, 'dApp not found');
    assertError(
      await call(ctx.app, 'PATCH', '/api/admin/dapps/a%00b', { auth: bearer(t), body: { name: 'x' } }),
      404,
      'dApp not found',
    );
    assertError(
      await call(ctx.app, 'POST', '/api/admin/dapps/a%00b/rotate-key', { auth: bearer(t) }),
      404,
      'dApp not found',
    );
    assertError(
      await call(ctx.app, 'DELETE', '/api/admin/tokens/a%00b', { auth: bearer(t) }),
      404,
      'Auth token not found',
    );
  });

  test('names holding control characters (NUL) are refused with 400 on every back end', {}, async () => {
    const t = await createTenant(ctx.deps);
    const before = {
      dapps: await ctx.deps.store.dapps.listByAccount(t.accountId),
      tokens: (await ctx.deps.store.accounts.listTokens(t.accountId)).length,
    };
    const attempts: readonly { method: Method; url: string; body: unknown }[] = [
      { method: 'POST', url: '/api/admin/dapps', body: { name: 'a\u0000b', chainIds: [1] } },
      { method: 'PATCH', url: `/api/admin/dapps/${t.dappId}`, body: { name: 'a\u0000b' } },
      { method: 'POST', url: '/api/admin/tokens', body: { name: 'a\u0000b' } },
    ];
    for (const a of attempts) {
      const res = await call(ctx.app, a.method, a.url, { auth: bearer(t), body: a.body });
      assert.equal(res.status, 400, `${a.method} ${a.url}: ${res.text}`);
      assert.match(res.body.message, /^name /);
    }
    assert.deepEqual(
      {
        dapps: await ctx.deps.store.dapps.listByAccount(t.accountId),
        tokens: (await ctx.deps.store.accounts.listTokens(t.accountId)).length,
      },
      before,
    );
  });
});
