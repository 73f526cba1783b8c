import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { z } from 'zod';
import { restRoutes } from '../src/api/restRoutes.js';
import { type RouteDef, route } from '../src/api/route.js';
import { hasMember } from '../src/api/routeAuth.js';
import { ROUTE_ROLES } from '../src/api/routeRoles.js';
import { LOCAL_ORIGIN, setTenantPassword, signIn } from './helpers/dashboardSession.js';
import { insertTestTank } from './helpers/meeTanks.js';
import { createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * The team's roles, enforced by the server (src/api/routeRoles.ts, checked in route.ts): every route with a member
 * behind it declares its least role; a viewer is refused every write, an operator every owner route, with 403 in the
 * envelope, before the route reads its input, and nothing changes. Members are added, re-roled and removed by an owner
 * only, the last owner stays; and one team never reaches another's members, dApps or audit log.
 */

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let routes: readonly RouteDef[];
let ids: Record<string, string>;
const people: Record<'viewer' | 'operator', { memberId: string; email: string; password: string; token: string }> =
  Object.create(null);

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function api(method: string, url: string, headers: Record<string, string>, payload?: unknown) {
  const res = await ctx.app.inject({
    method: method as 'GET',
    url,
    headers: { ...headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
  const isJson = String(res.headers['content-type'] ?? '').startsWith('application/json');
  const body = (isJson ? res.json() : {}) as { statusCode?: number; message?: string; data?: unknown };
  return { status: res.statusCode, message: body.message ?? '', data: body.data, text: res.body };
}

async function addMember(role: 'viewer' | 'operator' | 'owner', email = `${role}-${randomUUID()}@example.com`) {
  const res = await api('POST', '/api/admin/members', bearer(a.authToken), { email, role });
  assert.equal(res.status, 200, res.text);
  const data = res.data as { memberId: string; email: string; role: string; initialPassword: string };
  assert.equal(data.role, role);
  return data;
}

before(async () => {
  ctx = await createTestContext();
  a = await createTenant(ctx.deps);
  b = await createTenant(ctx.deps);
  const webhook = await ctx.deps.webhooks.createForAccount({
    accountId: a.accountId,
    dappId: a.dappId,
    url: 'https://hooks.example.com/roles-test',
    requestType: 'POST',
  });
  const policy = await ctx.deps.policies.create({ dappId: a.dappId, name: 'roles test', rules: {} });
  const [token] = await ctx.deps.accounts.listTokens(a.accountId);
  assert.ok(token);
  const eventId = `evt_${randomUUID()}`;
  await ctx.deps.store.lifecycleEvents.append([
    { id: eventId, dappId: a.dappId, type: 'sponsorship.signed', opKey: 'roles-test', payload: '{}', createdAt: 1 },
  ]);
  await ctx.deps.lifecycleEvents.endpoints.set({
    dappId: a.dappId,
    url: 'https://hooks.example.com/events',
    active: true,
  });
  for (const role of ['viewer', 'operator'] as const) {
    const m = await addMember(role);
    const { secret } = await ctx.deps.accounts.createToken({ accountId: a.accountId, memberId: m.memberId });
    people[role] = { memberId: m.memberId, email: m.email, password: m.initialPassword, token: secret };
  }
  // The member in a path is the viewer: an owner route would change them, but every call below is refused first.
  ids = {
    dappId: a.dappId,
    webhookId: webhook.webhook.id,
    tokenId: token.id,
    policyId: policy.id,
    eventId,
    memberId: people.viewer.memberId,
    tankId: (await insertTestTank(ctx.deps.store, a.dappId)).id,
  };
  routes = restRoutes(ctx.deps);
});
after(async () => {
  await ctx.close();
});

const urlOf = (r: RouteDef) =>
  r.path.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => {
    const id = ids[name];
    assert.ok(id !== undefined, `${r.method} ${r.path}: no resource for :${name}`);
    return id;
  });

/** The member's credentials for a route: their token, with A's API key on the spec's pair routes. */
const credentialsOf = (r: RouteDef, token: string) =>
  r.auth === 'dappPair' ? { authtoken: token, apikey: a.apiKey } : bearer(token);

test('every route with a member behind it declares its least role, and the table names no other route', () => {
  const memberRoutes = routes.filter((r) => hasMember(r.auth));
  assert.ok(memberRoutes.length >= 45, `${memberRoutes.length} member routes`);
  for (const r of memberRoutes) {
    assert.ok(r.role !== undefined, `${r.method} ${r.path} (${r.operationId}) has no role in routeRoles.ts`);
    if (r.method !== 'GET') assert.ok(r.auditAction !== undefined, `${r.method} ${r.path} declares no audit`);
  }
  assert.deepEqual(Object.keys(ROUTE_ROLES).sort(), memberRoutes.map((r) => r.operationId).sort());
  // Routes without a member (health, sign-in) carry none.
  for (const r of routes.filter((r) => !hasMember(r.auth))) assert.equal(r.role, undefined, r.path);
});

test('a route declared without a role, or a write without an audit, fails at start-up', () => {
  const answer = { envelope: 'ok' } as const;
  const base = { path: '/api/admin/x', auth: 'account', summary: 's', tag: 't', answer } as const;
  assert.throws(
    () => route({ ...base, method: 'GET', operationId: 'notInTheTable', handler: async () => undefined }),
    /no role declared for notInTheTable in src\/api\/routeRoles.ts/,
  );
  assert.throws(
    () => route({ ...base, method: 'POST', operationId: 'createDapp', handler: async () => undefined }),
    /a write must declare how its change is audited/,
  );
  // A declared, audited route is accepted.
  route({
    ...base,
    method: 'POST',
    operationId: 'createDapp',
    body: z.object({}),
    audit: { action: 'x' },
    handler: async () => undefined,
  });
});

test('a viewer is refused every write, an operator every owner route: 403, and nothing changes or is logged', async (t) => {
  const snapshot = async () => ({
    dapps: await ctx.deps.accounts.listDapps(a.accountId),
    policies: await ctx.deps.policies.list(a.dappId),
    webhooks: await ctx.deps.webhooks.listForAccount({ accountId: a.accountId, dappId: a.dappId }),
    members: await ctx.deps.members.list(a.accountId),
    audit: await ctx.deps.store.auditLog.list({ accountId: a.accountId, limit: 200 }),
  });
  const before = await snapshot();
  const cases: [RouteDef, 'viewer' | 'operator'][] = [];
  for (const r of routes.filter((r) => r.role === 'operator' || r.role === 'owner')) cases.push([r, 'viewer']);
  for (const r of routes.filter((r) => r.role === 'owner')) cases.push([r, 'operator']);
  assert.ok(cases.length >= 30, `${cases.length} cases`);
  for (const [r, who] of cases) {
    await t.test(`${who}: ${r.method} ${r.path}`, async () => {
      const res = await api(r.method, urlOf(r), credentialsOf(r, people[who].token), r.example ?? {});
      assert.equal(res.status, 403, res.text);
      const article = who === 'viewer' ? 'a viewer' : 'an operator';
      assert.equal(
        res.message,
        `${r.method} ${r.path} needs the ${r.role} role or higher: you are ${article} of this team`,
      );
      assert.equal(res.data, undefined);
    });
  }
  assert.deepEqual(await snapshot(), before);
});

test('a viewer reads every read route; an operator makes day-to-day changes', async (t) => {
  for (const r of routes.filter((r) => r.role === 'viewer' && r.method === 'GET')) {
    await t.test(`viewer: ${r.method} ${r.path}`, async () => {
      const res = await api('GET', urlOf(r), credentialsOf(r, people.viewer.token));
      assert.equal(res.status, 200, res.text);
    });
  }
  const op = bearer(people.operator.token);
  const patched = await api('PATCH', `/api/admin/dapps/${a.dappId}/policies/${ids.policyId}`, op, { active: false });
  assert.equal(patched.status, 200, patched.text);
  const restricted = await api('PUT', `/api/admin/dapps/${a.dappId}/restrictions`, op, { methods: ['sponsorship'] });
  assert.equal(restricted.status, 200, restricted.text);
  // A viewer's own auth tokens are theirs to manage, and act as a viewer.
  const created = await api('POST', '/api/admin/tokens', bearer(people.viewer.token), { name: 'viewer ci' });
  assert.equal(created.status, 200, created.text);
  const own = await api('GET', '/api/admin/tokens', bearer(people.viewer.token));
  assert.equal((own.data as unknown[]).length, 2, "only the viewer's own tokens are listed");
  const { authToken } = created.data as { authToken: string };
  const refused = await api('POST', `/api/admin/dapps/${a.dappId}/policies`, bearer(authToken), {
    name: 'x',
    rules: {},
  });
  assert.equal(refused.status, 403, refused.text);
});

test('a signed-in member acts with their role: the session says it, and a cookie write above it is refused', async () => {
  const session = await signIn(ctx.app, people.viewer.email, people.viewer.password);
  const who = await api('GET', '/api/admin/session', { cookie: session.cookie });
  assert.equal(who.status, 200, who.text);
  const data = who.data as { account: { accountId: string }; member: { role: string; email: string } };
  assert.equal(data.account.accountId, a.accountId);
  assert.deepEqual([data.member.role, data.member.email], ['viewer', people.viewer.email]);
  const write = await api(
    'POST',
    `/api/admin/dapps/${a.dappId}/policies`,
    { cookie: session.cookie, 'x-csrf-token': session.csrfToken, origin: LOCAL_ORIGIN },
    { name: 'by a viewer', rules: {} },
  );
  assert.equal(write.status, 403, write.text);
});

test('the team: the last owner can be neither demoted nor removed; removing a member ends their access', async () => {
  const owner = bearer(a.authToken);
  const demote = await api('PATCH', `/api/admin/members/${a.accountId}`, owner, { role: 'operator' });
  assert.equal(demote.status, 409, demote.text);
  assert.equal(demote.message, 'A team keeps at least one owner: make another member owner first');
  const remove = await api('DELETE', `/api/admin/members/${a.accountId}`, owner);
  assert.equal(remove.status, 409, remove.text);
  const badRole = await api('PATCH', `/api/admin/members/${people.operator.memberId}`, owner, { role: 'admin' });
  assert.equal(badRole.status, 400, badRole.text);
  assert.equal(badRole.message, 'role must be one of owner, operator, viewer');
  const taken = await api('POST', '/api/admin/members', owner, { email: b.email, role: 'viewer' });
  assert.equal(taken.status, 409, taken.text);

  // A second owner: then the first may step down, and the second can take the first's role away.
  const second = await addMember('owner');
  const { secret: secondToken } = await ctx.deps.accounts.createToken({
    accountId: a.accountId,
    memberId: second.memberId,
  });
  const stepDown = await api('PATCH', `/api/admin/members/${a.accountId}`, bearer(secondToken), { role: 'viewer' });
  assert.equal(stepDown.status, 200, stepDown.text);
  // The first owner's token now acts as a viewer, at once.
  const nowViewer = await api('POST', '/api/admin/members', owner, { email: 'x@example.com', role: 'viewer' });
  assert.equal(nowViewer.status, 403, nowViewer.text);
  const back = await api('PATCH', `/api/admin/members/${a.accountId}`, bearer(secondToken), { role: 'owner' });
  assert.equal(back.status, 200, back.text);

  // Removing a member revokes their tokens and ends their sessions.
  const leaving = await addMember('operator');
  const { secret: leavingToken } = await ctx.deps.accounts.createToken({
    accountId: a.accountId,
    memberId: leaving.memberId,
  });
  const session = await signIn(ctx.app, leaving.email, leaving.initialPassword);
  assert.equal((await api('GET', '/api/admin/dapps', bearer(leavingToken))).status, 200);
  const removed = await api('DELETE', `/api/admin/members/${leaving.memberId}`, owner);
  assert.equal(removed.status, 200, removed.text);
  const after = await api('GET', '/api/admin/dapps', bearer(leavingToken));
  assert.deepEqual([after.status, after.message], [401, 'Invalid auth token']);
  assert.equal((await api('GET', '/api/admin/session', { cookie: session.cookie })).status, 401);
  const signInAgain = await ctx.app.inject({
    method: 'POST',
    url: '/api/admin/session',
    headers: { origin: LOCAL_ORIGIN },
    payload: { email: leaving.email, password: leaving.initialPassword },
  });
  assert.equal(signInAgain.statusCode, 401);
});

test('tenants never meet: a member of team A cannot read or change team B', async () => {
  const viewerA = bearer(people.viewer.token);
  const ownerA = bearer(a.authToken);
  await setTenantPassword(ctx.deps, b);
  // B's team, as B's owner sees it: B alone.
  const membersB = await api('GET', '/api/admin/members', bearer(b.authToken));
  assert.deepEqual(
    (membersB.data as { email: string }[]).map((m) => m.email),
    [b.email],
  );
  // A's people cannot reach B's dApp, B's members or B's audit rows.
  assert.equal((await api('GET', `/api/admin/dapps/${b.dappId}`, viewerA)).status, 404);
  const foreignPolicy = await api('POST', `/api/admin/dapps/${b.dappId}/policies`, bearer(people.operator.token), {
    name: 'into B',
    rules: {},
  });
  assert.equal(foreignPolicy.status, 404, foreignPolicy.text);
  const foreignMember = await api('PATCH', `/api/admin/members/${b.accountId}`, ownerA, { role: 'viewer' });
  assert.equal(foreignMember.status, 404, foreignMember.text);
  assert.equal((await api('DELETE', `/api/admin/members/${b.accountId}`, ownerA)).status, 404);
  // B makes a change; A's audit log never shows it, even asked for B's dApp.
  const changeB = await api('PUT', `/api/admin/dapps/${b.dappId}/restrictions`, bearer(b.authToken), {});
  assert.equal(changeB.status, 200, changeB.text);
  const logA = await api('GET', '/api/admin/audit-log?limit=200', viewerA);
  const entriesA = (logA.data as { entries: { dappId: string | null; memberEmail: string }[] }).entries;
  assert.ok(entriesA.length > 0);
  assert.ok(entriesA.every((e) => e.dappId !== b.dappId && e.memberEmail !== b.email));
  const askedForB = await api('GET', `/api/admin/audit-log?dappId=${b.dappId}`, viewerA);
  assert.deepEqual((askedForB.data as { entries: unknown[] }).entries, []);
  const logB = await api('GET', '/api/admin/audit-log', bearer(b.authToken));
  const entriesB = (logB.data as { entries: { dappId: string | null }[] }).entries;
  assert.deepEqual(
    entriesB.map((e) => e.dappId),
    [b.dappId],
  );
  // Team B's owner cannot change A's member either, and no row of A's carries B's account.
  const rows = await ctx.deps.store.auditLog.list({ accountId: a.accountId, limit: 500 });
  assert.ok(rows.every((r) => r.accountId === a.accountId));
});
