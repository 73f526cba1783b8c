import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { restRoutes } from '../src/api/restRoutes.js';
import type { RouteDef } from '../src/api/route.js';
import { type SignedIn, setTenantPassword, signIn, writeHeaders } from './helpers/dashboardSession.js';
import { insertTestTank } from './helpers/meeTanks.js';
import { createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * Every declared REST route (src/api/restRoutes.ts) through the credential and CSRF cases of its auth kind,
 * driven by the declarations themselves: a route added to the list is covered without touching this file, and
 * an auth kind added to routeAuth.ts fails to compile here until its cases are written.
 *
 * Resources in the path are account A's (its dApp, webhook, auth token, policy), so a refusal proves the check
 * and not a missing resource; writes carry the declaration's example body, so they would otherwise succeed.
 */

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let sessionA: SignedIn;
let ids: Record<string, string>;
let routes: readonly RouteDef[];

before(async () => {
  ctx = await createTestContext();
  a = await createTenant(ctx.deps);
  b = await createTenant(ctx.deps);
  await setTenantPassword(ctx.deps, a);
  sessionA = await signIn(ctx.app, a.email);
  const webhook = await ctx.deps.webhooks.createForAccount({
    accountId: a.accountId,
    dappId: a.dappId,
    url: 'https://hooks.example.com/auth-test',
    requestType: 'POST',
  });
  const [token] = await ctx.deps.accounts.listTokens(a.accountId);
  const policy = await ctx.deps.policies.create({ dappId: a.dappId, name: 'auth test', rules: {} });
  assert.ok(token);
  const eventId = `evt_${randomUUID()}`;
  await ctx.deps.store.lifecycleEvents.append([
    { id: eventId, dappId: a.dappId, type: 'sponsorship.signed', opKey: 'auth-test', payload: '{}', createdAt: 1 },
  ]);
  // The member: A's owner (an account's first owner has the account's id).
  ids = {
    dappId: a.dappId,
    webhookId: webhook.webhook.id,
    tokenId: token.id,
    policyId: policy.id,
    eventId,
    memberId: a.accountId,
    tankId: (await insertTestTank(ctx.deps.store, a.dappId)).id,
  };
  routes = restRoutes(ctx.deps);
});
after(async () => {
  await ctx.close();
});

const JUNK_TOKEN = `pat.${'A'.repeat(43)}`;
const JUNK_COOKIE = `patron_session=${'A'.repeat(43)}`;

function urlOf(r: RouteDef): string {
  return r.path.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => {
    const id = ids[name];
    assert.ok(id !== undefined, `${r.method} ${r.path}: no resource of account A for :${name}; add one above`);
    return id;
  });
}

async function call(r: RouteDef, headers: Record<string, string>) {
  const write = r.method !== 'GET';
  const res = await ctx.app.inject({
    method: r.method,
    url: urlOf(r),
    headers: { ...headers, ...(write ? { 'content-type': 'application/json' } : {}) },
    ...(write ? { payload: JSON.stringify(r.example ?? {}) } : {}),
  });
  // A file answer (the ledger's CSV) is not JSON; its errors are.
  const isJson = String(res.headers['content-type'] ?? '').startsWith('application/json');
  const body = (isJson ? res.json() : {}) as { statusCode?: number; message?: string; data?: unknown };
  return { status: res.statusCode, message: body.message, data: body.data, text: res.body };
}

async function expectRefused(
  r: RouteDef,
  label: string,
  headers: Record<string, string>,
  status: number,
  message: string | RegExp,
): Promise<void> {
  const res = await call(r, headers);
  const what = `${r.method} ${r.path}, ${label}: ${res.text}`;
  assert.equal(res.status, status, what);
  if (typeof message === 'string') assert.equal(res.message, message, what);
  else assert.match(res.message ?? '', message, what);
  assert.equal(res.data, undefined, `${what}: an error carries no data`);
}

const CSRF_MISSING = 'CSRF token missing or invalid: reload the dashboard';
const CROSS_SITE = 'Cross-site request refused';
const evil = () => ({ ...writeHeaders(sessionA), origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });

async function accountCases(r: RouteDef): Promise<void> {
  await expectRefused(r, 'no credential', {}, 401, 'Auth token is required in the headers');
  await expectRefused(r, 'unknown token', { authorization: `Bearer ${JUNK_TOKEN}` }, 401, 'Invalid auth token');
  await expectRefused(r, 'unknown authToken header', { authtoken: JUNK_TOKEN }, 401, 'Invalid auth token');
  await expectRefused(r, 'unknown session', { cookie: JUNK_COOKIE }, 401, 'Session expired: sign in again');
  // Another account's resource reads as one that does not exist.
  if (r.path.includes(':')) {
    await expectRefused(r, "B's token on A's resource", { authorization: `Bearer ${b.authToken}` }, 404, /not found$/);
  }
  if (r.method === 'GET') {
    // The positive control: reads need only the cookie, and the path's resources are A's.
    const res = await call(r, { cookie: sessionA.cookie });
    assert.equal(res.status, 200, `${r.method} ${r.path} with A's cookie: ${res.text}`);
    return;
  }
  const { 'x-csrf-token': _csrf, ...noCsrf } = writeHeaders(sessionA);
  await expectRefused(r, 'cookie without x-csrf-token', noCsrf, 403, CSRF_MISSING);
  await expectRefused(r, 'cookie with a wrong x-csrf-token', { ...noCsrf, 'x-csrf-token': 'x' }, 403, CSRF_MISSING);
  await expectRefused(r, 'cookie and token from another site', evil(), 403, CROSS_SITE);
  await expectRefused(
    r,
    'cookie and token, cross-site Origin only',
    { ...writeHeaders(sessionA), origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' },
    403,
    CROSS_SITE,
  );
}

async function dappPairCases(r: RouteDef): Promise<void> {
  const missing =
    r.method === 'GET' ? 'Auth token is required in the headers' : 'Auth token and API key is required in the headers';
  const invalid = 'Invalid auth token or API key';
  await expectRefused(r, 'no credential', {}, 401, missing);
  await expectRefused(r, 'API key only', { apiKey: a.apiKey }, 401, missing);
  await expectRefused(r, 'unknown token', { authToken: JUNK_TOKEN, apiKey: a.apiKey }, 401, invalid);
  await expectRefused(r, "A's token with B's API key", { authToken: a.authToken, apiKey: b.apiKey }, 401, invalid);
  // The admin credentials are not this API's.
  await expectRefused(r, 'a bearer token', { authorization: `Bearer ${a.authToken}`, apiKey: a.apiKey }, 401, missing);
}

async function casesOf(r: RouteDef): Promise<void> {
  switch (r.auth) {
    case 'account':
      return accountCases(r);
    case 'dappPair':
      return dappPairCases(r);
    case 'session':
      await expectRefused(r, 'no cookie', {}, 401, 'Not signed in');
      await expectRefused(r, 'unknown session', { cookie: JUNK_COOKIE }, 401, 'Session expired: sign in again');
      return;
    case 'optionalSession': {
      const { 'x-csrf-token': _csrf, ...noCsrf } = writeHeaders(sessionA);
      await expectRefused(r, 'live cookie without x-csrf-token', noCsrf, 403, CSRF_MISSING);
      await expectRefused(r, 'live cookie from another site', evil(), 403, CROSS_SITE);
      return;
    }
    case 'sameSite':
      await expectRefused(r, 'another site', { origin: 'https://evil.example' }, 403, CROSS_SITE);
      await expectRefused(r, 'Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }, 403, CROSS_SITE);
      return;
    case 'public': {
      const res = await ctx.app.inject({ method: r.method, url: urlOf(r) });
      assert.equal(res.statusCode, 200, `${r.method} ${r.path} answers without credentials`);
      return;
    }
    default: {
      const unhandled: never = r.auth;
      assert.fail(`no cases for auth kind ${String(unhandled)}`);
    }
  }
}

test('every declared route refuses missing, wrong and foreign credentials, and cross-site cookie writes', async (t) => {
  assert.ok(routes.length >= 30, `${routes.length} routes declared`);
  for (const r of routes) await t.test(`${r.method} ${r.path} (${r.auth})`, () => casesOf(r));
  // Nothing above changed A's resources or signed A out.
  assert.equal((await ctx.deps.accounts.listDapps(a.accountId)).length, 1);
  assert.equal((await ctx.deps.webhooks.listForAccount({ accountId: a.accountId, dappId: a.dappId })).length, 1);
  assert.equal((await ctx.deps.policies.list(a.dappId)).length, 1);
  const [token] = await ctx.deps.accounts.listTokens(a.accountId);
  assert.equal(token?.revokedAt, null);
  const session = await ctx.app.inject({
    method: 'GET',
    url: '/api/admin/session',
    headers: { cookie: sessionA.cookie },
  });
  assert.equal(session.statusCode, 200);
});

test('the sign-in route is the only admin route open to a caller without credentials', () => {
  const open = routes.filter((r) => r.path.startsWith('/api/admin/') && (r.auth === 'sameSite' || r.auth === 'public'));
  assert.deepEqual(
    open.map((r) => `${r.method} ${r.path}`),
    ['POST /api/admin/session'],
  );
});
