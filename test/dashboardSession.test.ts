import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { LOCKOUT } from '../src/accounts/sessionService.js';
import { createApp } from '../src/app.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import {
  LOCAL_ORIGIN,
  type SignedIn,
  setTenantPassword,
  signIn,
  TEST_PASSWORD,
  writeHeaders,
} from './helpers/dashboardSession.js';
import {
  BACKEND,
  createTenant,
  createTestContext,
  fakeResolver,
  openTestStore,
  TEST_MASTER_KEY,
  type Tenant,
  type TestContext,
  testConfig,
} from './helpers/testContext.js';

/**
 * Dashboard sign-in through the app (inject): password check, session cookie attributes, CSRF protection of
 * cookie-authenticated writes, idle and absolute expiry, sign-out, and lock-out after repeated failures.
 */
let ctx: TestContext;
let tenant: Tenant;
let clock = Date.now();
const IDLE_MS = 30 * 60_000;
const MAX_MS = 4 * 3_600_000;

before(async () => {
  ctx = await createTestContext({
    now: () => clock,
    config: {
      dashboard: { basePath: '/dashboard', sessionIdleMs: IDLE_MS, sessionMaxMs: MAX_MS, depositWarningWei: 0n },
    },
  });
  tenant = await createTenant(ctx.deps);
  await setTenantPassword(ctx.deps, tenant);
});
after(() => ctx.close());
beforeEach(() => {
  clock += 24 * 3_600_000; // every test starts past any earlier test's lock-out or session
});

const session = (headers: Record<string, string>) =>
  ctx.app.inject({ method: 'GET', url: '/api/admin/session', headers });
const createToken = (headers: Record<string, string>) =>
  ctx.app.inject({ method: 'POST', url: '/api/admin/tokens', headers, payload: { name: 'from-dashboard' } });
const attempt = (email: string, password: string) =>
  ctx.app.inject({
    method: 'POST',
    url: '/api/admin/session',
    headers: { origin: LOCAL_ORIGIN },
    payload: { email, password },
  });

describe('sign-in', () => {
  test('the right password signs in: HttpOnly SameSite=Strict cookie, a CSRF token, the account', async () => {
    const res = await attempt(tenant.email, TEST_PASSWORD);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.data.account.email, tenant.email);
    assert.equal(body.data.account.accountId, tenant.accountId);
    assert.match(body.data.csrfToken, /^[A-Za-z0-9_-]{43}$/);
    const cookie = String(res.headers['set-cookie']);
    // inject() sends Host: localhost:80, a loopback host: no Secure (browsers accept it on http://localhost).
    assert.match(cookie, /^patron_session=[A-Za-z0-9_-]{43}; Max-Age=14400; Path=\/; HttpOnly; SameSite=Strict$/);
    assert.doesNotMatch(
      res.body,
      new RegExp(cookie.split(';')[0]?.split('=')[1] ?? 'x'),
      'the secret is only in the cookie',
    );
  });

  test('outside localhost the cookie is Secure and __Host- prefixed', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/admin/session',
      headers: { host: 'patron.example.com', origin: 'https://patron.example.com' },
      payload: { email: tenant.email, password: TEST_PASSWORD },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(
      String(res.headers['set-cookie']),
      /^__Host-patron_session=[A-Za-z0-9_-]{43}; Max-Age=14400; Path=\/; HttpOnly; SameSite=Strict; Secure$/,
    );
    const pair = String(res.headers['set-cookie']).split(';')[0] ?? '';
    const me = await ctx.app.inject({
      method: 'GET',
      url: '/api/admin/session',
      headers: { host: 'patron.example.com', cookie: pair },
    });
    assert.equal(me.statusCode, 200);
  });

  test('a wrong password, an unknown email and an account without password all get the same 401', async () => {
    const other = await createTenant(ctx.deps); // no password set
    for (const [email, password] of [
      [tenant.email, 'wrong password!!'],
      ['nobody@example.com', TEST_PASSWORD],
      [other.email, TEST_PASSWORD],
    ] as const) {
      const res = await attempt(email, password);
      assert.equal(res.statusCode, 401, `${email}: ${res.body}`);
      assert.deepEqual(res.json(), { statusCode: 401, message: 'Wrong email or password' });
      assert.equal(res.headers['set-cookie'], undefined);
    }
  });

  test('malformed sign-in bodies are 400', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/admin/session',
      payload: { email: 'x', password: 1 },
    });
    assert.equal(res.statusCode, 400);
  });

  test('a sign-in posted from another site is refused (login CSRF)', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/admin/session',
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      payload: { email: tenant.email, password: TEST_PASSWORD },
    });
    assert.equal(res.statusCode, 403);
    assert.equal(res.headers['set-cookie'], undefined);
  });
});

describe('the session authenticates the admin API', () => {
  let s: SignedIn;
  beforeEach(async () => {
    s = await signIn(ctx.app, tenant.email);
  });

  test('GET /api/admin/session gives the account and the same CSRF token again (after a reload)', async () => {
    const res = await session({ cookie: s.cookie });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().data.csrfToken, s.csrfToken);
    assert.equal(res.json().data.account.email, tenant.email);
  });

  test('reads need only the cookie', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/admin/dapps', headers: { cookie: s.cookie } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().data[0].dappId, tenant.dappId);
  });

  test('a write with the cookie and its CSRF token works', async () => {
    const res = await createToken(writeHeaders(s));
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.json().data.authToken, /^pat\./);
  });

  test('CSRF: a write with the cookie but no token, a wrong token, or another session’s token is 403', async () => {
    const other = await signIn(ctx.app, tenant.email);
    for (const headers of [
      { cookie: s.cookie },
      { cookie: s.cookie, 'x-csrf-token': 'A'.repeat(43) },
      { cookie: s.cookie, 'x-csrf-token': other.csrfToken },
      { cookie: s.cookie, 'x-csrf-token': '' },
    ]) {
      const res = await createToken(headers);
      assert.equal(res.statusCode, 403, JSON.stringify(headers));
      assert.equal(res.json().message, 'CSRF token missing or invalid: reload the dashboard');
    }
    for (const method of ['PATCH', 'DELETE'] as const) {
      const res = await ctx.app.inject({
        method,
        url:
          method === 'PATCH'
            ? `/api/admin/dapps/${tenant.dappId}`
            : '/api/admin/tokens/00000000-0000-4000-8000-000000000000',
        headers: { cookie: s.cookie },
        ...(method === 'PATCH' ? { payload: { name: 'hijacked' } } : {}),
      });
      assert.equal(res.statusCode, 403, method);
    }
    const dapp = await ctx.app.inject({
      method: 'GET',
      url: `/api/admin/dapps/${tenant.dappId}`,
      headers: { cookie: s.cookie },
    });
    assert.equal(dapp.json().data.name, 'Test dApp');
  });

  test('CSRF: a write naming another origin is 403 even with the token', async () => {
    for (const extra of [
      { origin: 'https://evil.example' },
      { origin: 'http://localhost:8080' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ]) {
      const res = await createToken({ ...writeHeaders(s), ...extra });
      assert.equal(res.statusCode, 403, JSON.stringify(extra));
      assert.equal(res.json().message, 'Cross-site request refused');
    }
  });

  test('an auth token still works without CSRF (it is not ambient); a bad token is not rescued by the cookie', async () => {
    const ok = await createToken({ authorization: `Bearer ${tenant.authToken}` });
    assert.equal(ok.statusCode, 200);
    const bad = await createToken({ ...writeHeaders(s), authorization: 'Bearer pat.nonsense' });
    assert.equal(bad.statusCode, 401);
  });

  test('sign-out ends the session and clears the cookie', async () => {
    const res = await ctx.app.inject({ method: 'DELETE', url: '/api/admin/session', headers: writeHeaders(s) });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['set-cookie']), /^patron_session=; Max-Age=0; Path=\/; HttpOnly; SameSite=Strict$/);
    assert.equal((await session({ cookie: s.cookie })).statusCode, 401);
    assert.equal(
      (await ctx.app.inject({ method: 'GET', url: '/api/admin/dapps', headers: { cookie: s.cookie } })).statusCode,
      401,
    );
  });

  test('sign-out without the CSRF token is refused (no forced sign-out by another site)', async () => {
    const res = await ctx.app.inject({ method: 'DELETE', url: '/api/admin/session', headers: { cookie: s.cookie } });
    assert.equal(res.statusCode, 403);
    assert.equal((await session({ cookie: s.cookie })).statusCode, 200);
  });

  test('a changed password signs every session out', async () => {
    await setTenantPassword(ctx.deps, tenant, 'another long password');
    assert.equal((await session({ cookie: s.cookie })).statusCode, 401);
    await setTenantPassword(ctx.deps, tenant);
  });

  test('junk cookies are 401', async () => {
    for (const cookie of ['patron_session=', 'patron_session=abc', `patron_session=${'x'.repeat(43)}`, 'other=1']) {
      const res = await session({ cookie });
      assert.equal(res.statusCode, 401, cookie);
    }
  });
});

describe('expiry', () => {
  test('idle: unused for the idle limit, the session is gone (401 "Session expired")', async () => {
    const s = await signIn(ctx.app, tenant.email);
    clock += IDLE_MS - 1000;
    assert.equal((await session({ cookie: s.cookie })).statusCode, 200, 'still alive just before the limit');
    clock += IDLE_MS - 1000; // used a moment ago: the idle clock restarted
    assert.equal((await session({ cookie: s.cookie })).statusCode, 200);
    clock += IDLE_MS + 1;
    const res = await ctx.app.inject({ method: 'GET', url: '/api/admin/dapps', headers: { cookie: s.cookie } });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().message, 'Session expired: sign in again');
    clock -= IDLE_MS; // going back does not resurrect it: the row was deleted
    assert.equal((await session({ cookie: s.cookie })).statusCode, 401);
  });

  test('absolute: however busy, a session ends after its maximum lifetime', async () => {
    const s = await signIn(ctx.app, tenant.email);
    for (let t = 0; t < MAX_MS - IDLE_MS; t += IDLE_MS / 2) {
      clock += IDLE_MS / 2;
      assert.equal((await session({ cookie: s.cookie })).statusCode, 200);
    }
    clock += IDLE_MS;
    assert.equal((await session({ cookie: s.cookie })).statusCode, 401);
  });

  test('pruning deletes ended sessions', async () => {
    await signIn(ctx.app, tenant.email);
    clock += MAX_MS + 1;
    const pruned = await ctx.deps.sessions.prune();
    assert.ok(pruned.sessions >= 1);
  });
});

describe('lock-out', () => {
  test(`after ${LOCKOUT.maxFailures} failures in 15 minutes the email is refused with 429 and Retry-After, even with the right password`, async () => {
    for (let i = 0; i < LOCKOUT.maxFailures - 1; i++) {
      assert.equal((await attempt(tenant.email, 'wrong password!!')).statusCode, 401);
      clock += 10_000;
    }
    const fifth = await attempt(tenant.email, 'wrong password!!');
    assert.equal(fifth.statusCode, 429);
    const locked = await attempt(tenant.email, TEST_PASSWORD);
    assert.equal(locked.statusCode, 429);
    assert.match(locked.json().message, /^Too many failed sign-ins for this email: try again in \d+ minutes$/);
    const retryAfter = Number(locked.headers['retry-after']);
    assert.ok(retryAfter > 0 && retryAfter <= 15 * 60, String(retryAfter));
    assert.equal(locked.headers['set-cookie'], undefined);
    clock += retryAfter * 1000;
    const after = await attempt(tenant.email, TEST_PASSWORD);
    assert.equal(after.statusCode, 200, 'the lock ends after Retry-After');
  });

  test('a success clears the failure count', async () => {
    for (let i = 0; i < LOCKOUT.maxFailures - 1; i++) await attempt(tenant.email, 'wrong password!!');
    assert.equal((await attempt(tenant.email, TEST_PASSWORD)).statusCode, 200);
    for (let i = 0; i < LOCKOUT.maxFailures - 1; i++) {
      assert.equal((await attempt(tenant.email, 'wrong password!!')).statusCode, 401);
    }
  });

  test('failures spread over more than the window do not lock', async () => {
    for (let i = 0; i < LOCKOUT.maxFailures * 2; i++) {
      assert.equal((await attempt(tenant.email, 'wrong password!!')).statusCode, 401);
      clock += LOCKOUT.windowMs / (LOCKOUT.maxFailures - 1) + 1000;
    }
  });

  for (const burst of [9, 40]) {
    test(`a burst of ${burst} concurrent wrong passwords, then the right one: exactly ${LOCKOUT.maxFailures} are verified, the right one is refused`, async () => {
      const results = await Promise.all(Array.from({ length: burst }, () => attempt(tenant.email, 'wrong password!!')));
      const statuses = results.map((r) => r.statusCode);
      assert.ok(
        statuses.every((s) => s === 401 || s === 429),
        statuses.join(','),
      );
      // Each attempt counts before its scrypt: exactly maxFailures were let through to a password check (one
      // failure row each); every other one was refused without it.
      const counted = await ctx.deps.store.sessions.loginFailuresSince({ email: tenant.email, since: clock - 1 });
      assert.equal(counted.length, LOCKOUT.maxFailures);
      assert.ok(statuses.filter((s) => s === 429).length >= burst - LOCKOUT.maxFailures + 1, statuses.join(','));
      const right = await attempt(tenant.email, TEST_PASSWORD);
      assert.equal(right.statusCode, 429, right.body);
      assert.equal(right.headers['set-cookie'], undefined);
      assert.ok(Number(right.headers['retry-after']) > 0);
    });
  }

  test('the right password sent right behind a concurrent burst of wrong ones (the reported bypass) is refused', async () => {
    const results = await Promise.all([
      ...Array.from({ length: 20 }, () => attempt(tenant.email, 'wrong password!!')),
      attempt(tenant.email, TEST_PASSWORD),
    ]);
    const right = results.at(-1);
    assert.equal(right?.statusCode, 429, right?.body);
    assert.equal(right?.headers['set-cookie'], undefined);
  });

  test('two service instances on one PostgreSQL database: a burst split over both still lets exactly the lock-out count through', {
    skip: BACKEND !== 'postgres' && 'needs PATRON_TEST_DATABASE_URL (one process on SQLite)',
  }, async () => {
    assert.ok(ctx.schema);
    // A second instance with its own pool on the same schema, like a second process.
    const { store } = await openTestStore({ schema: ctx.schema, poolSize: 10 });
    const deps2 = await createDeps(testConfig(ctx.deps.config), createLogger({ level: 'silent' }), {
      store,
      masterKey: TEST_MASTER_KEY,
      resolver: fakeResolver,
      now: () => clock,
    });
    const app2 = createApp(deps2);
    try {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? ctx.app : app2).inject({
            method: 'POST',
            url: '/api/admin/session',
            headers: { origin: LOCAL_ORIGIN },
            payload: { email: tenant.email, password: 'wrong password!!' },
          }),
        ),
      );
      assert.ok(results.every((r) => r.statusCode === 401 || r.statusCode === 429));
      const counted = await ctx.deps.store.sessions.loginFailuresSince({ email: tenant.email, since: clock - 1 });
      assert.equal(counted.length, LOCKOUT.maxFailures);
      assert.equal((await attempt(tenant.email, TEST_PASSWORD)).statusCode, 429);
    } finally {
      await app2.close();
      await deps2.close();
    }
  });

  test('unknown emails lock the same way (the answer says nothing about which emails exist)', async () => {
    let last = 0;
    for (let i = 0; i < LOCKOUT.maxFailures; i++) last = (await attempt('ghost@example.com', 'whatever')).statusCode;
    assert.equal(last, 429);
    assert.equal((await attempt(tenant.email, TEST_PASSWORD)).statusCode, 200, 'other emails are not affected');
  });
});
