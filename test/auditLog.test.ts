import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { REDACTED, redactSecrets } from '../src/accounts/auditRedaction.js';
import { createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * The audit log (migration 0026, docs/guides/dashboard.md "Audit log"): each change through the admin API writes one
 * row naming who (member, email, auth token), what (action, target), before and after with secrets redacted, when and
 * the request id; GET /api/admin/audit-log pages it newest first. A refused or failed change writes nothing.
 */

let ctx: TestContext;
let a: Tenant;
let operator: { memberId: string; email: string; token: string; tokenId: string };

interface Entry {
  id: string;
  at: string;
  dappId: string | null;
  memberId: string | null;
  memberEmail: string;
  authTokenId: string | null;
  action: string;
  targetId: string | null;
  before: unknown;
  after: unknown;
  requestId: string | null;
}

async function api(method: string, url: string, token: string, payload?: unknown) {
  const res = await ctx.app.inject({
    method: method as 'GET',
    url,
    headers: {
      authorization: `Bearer ${token}`,
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
  return { status: res.statusCode, body: res.json() as { message: string; data?: unknown }, headers: res.headers };
}

/** One field of an entry's before or after document (undefined when absent). */
function field(entry: Entry | undefined, side: 'before' | 'after', key: string): unknown {
  const doc = entry?.[side];
  return typeof doc === 'object' && doc !== null ? Object.getOwnPropertyDescriptor(doc, key)?.value : undefined;
}

async function entries(query = 'limit=200'): Promise<Entry[]> {
  const res = await api('GET', `/api/admin/audit-log?${query}`, a.authToken);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.data as { entries: Entry[] }).entries;
}

before(async () => {
  ctx = await createTestContext();
  a = await createTenant(ctx.deps);
  const added = await api('POST', '/api/admin/members', a.authToken, { email: 'ops@example.com', role: 'operator' });
  assert.equal(added.status, 200);
  const { memberId } = added.body.data as { memberId: string };
  const { token, secret } = await ctx.deps.accounts.createToken({ accountId: a.accountId, memberId, name: 'ops' });
  operator = { memberId, email: 'ops@example.com', token: secret, tokenId: token.id };
});
after(async () => {
  await ctx.close();
});

test('a policy change: who (member, email, token), what, before and after, when, and the request id', async () => {
  const created = await api('POST', `/api/admin/dapps/${a.dappId}/policies`, operator.token, {
    name: 'daily cap',
    rules: {},
  });
  assert.equal(created.status, 200);
  const { policyId } = created.body.data as { policyId: string };
  const t0 = Date.now();
  const updated = await api('PATCH', `/api/admin/dapps/${a.dappId}/policies/${policyId}`, operator.token, {
    active: false,
  });
  assert.equal(updated.status, 200);
  const [latest, creation] = await entries();
  assert.ok(latest && creation);
  assert.equal(creation.action, 'policy.create');
  assert.equal(creation.targetId, policyId);
  assert.equal(creation.before, null);
  assert.equal(field(creation, 'after', 'name'), 'daily cap');
  assert.equal(latest.action, 'policy.update');
  assert.equal(latest.targetId, policyId);
  assert.equal(latest.dappId, a.dappId);
  assert.equal(latest.memberId, operator.memberId);
  assert.equal(latest.memberEmail, operator.email);
  assert.equal(latest.authTokenId, operator.tokenId);
  assert.equal(field(latest, 'before', 'active'), true);
  assert.equal(field(latest, 'after', 'active'), false);
  assert.ok(Date.parse(latest.at) >= t0 - 1000 && Date.parse(latest.at) <= Date.now());
  assert.match(latest.requestId ?? '', /\S/, 'the request id of the access log');
});

test('no secret reaches the log: tokens, API keys and signing secrets are redacted, in the stored rows too', async () => {
  const token = await api('POST', '/api/admin/tokens', a.authToken, { name: 'ci' });
  const { authToken } = token.body.data as { authToken: string };
  const rotated = await api('POST', `/api/admin/dapps/${a.dappId}/rotate-key`, a.authToken);
  const { apiKey } = rotated.body.data as { apiKey: string };
  const webhook = await api('POST', `/api/admin/dapps/${a.dappId}/webhooks`, operator.token, {
    webhookUrl: 'https://hooks.example.com/audit',
    requestType: 'POST',
  });
  const { webhookId, signingSecret } = webhook.body.data as { webhookId: string; signingSecret: string };
  const revealed = await api('POST', `/api/admin/dapps/${a.dappId}/webhooks/${webhookId}/reveal-secret`, a.authToken);
  assert.equal(revealed.status, 200);
  const log = await entries();
  const byAction = (action: string) => log.find((e) => e.action === action);
  assert.equal(field(byAction('authToken.create'), 'after', 'authToken'), REDACTED);
  assert.equal(field(byAction('dapp.apiKey.rotate'), 'after', 'apiKey'), REDACTED);
  assert.equal(field(byAction('dapp.apiKey.rotate'), 'before', 'apiKey'), REDACTED);
  assert.equal(field(byAction('dapp.apiKey.rotate'), 'after', 'dappId'), a.dappId, 'the rest is kept');
  assert.equal(field(byAction('webhook.create'), 'after', 'signingSecret'), REDACTED);
  assert.equal(field(byAction('webhook.secret.reveal'), 'after', 'signingSecret'), REDACTED);
  assert.equal(byAction('webhook.secret.reveal')?.targetId, webhookId);
  // The stored text itself (the repository returns the columns as written).
  const stored = await ctx.deps.store.auditLog.list({ accountId: a.accountId, limit: 500 });
  const all = stored.map((r) => `${r.before ?? ''}${r.after ?? ''}`).join('\n');
  for (const secret of [authToken, apiKey, signingSecret, a.authToken]) assert.ok(!all.includes(secret), 'no secret');
  assert.ok(!/pat\.[0-9A-Za-z]{20}|pk\.[0-9A-Za-z]{20}|whsec_/.test(all));
});

test('redaction catches a secret by its field name or by its shape, and keeps ids and prefixes', () => {
  assert.deepEqual(
    redactSecrets({
      tokenId: 't1',
      apiKeyPrefix: 'pk.abc',
      nested: [{ password: 'hunter2hunter2', note: `pat.${'A'.repeat(43)}` }],
      other: `whsec_${'B'.repeat(32)}`,
      signingSecret: null,
    }),
    {
      tokenId: 't1',
      apiKeyPrefix: 'pk.abc',
      nested: [{ password: REDACTED, note: REDACTED }],
      other: REDACTED,
      signingSecret: null,
    },
  );
});

test('a refused or failed change writes no row', async () => {
  const count = (await entries()).length;
  const viewer = await api('POST', '/api/admin/members', a.authToken, { email: 'v@example.com', role: 'viewer' });
  const { memberId } = viewer.body.data as { memberId: string };
  const { secret } = await ctx.deps.accounts.createToken({ accountId: a.accountId, memberId });
  assert.equal((await api('PUT', `/api/admin/dapps/${a.dappId}/restrictions`, secret, {})).status, 403);
  assert.equal(
    (await api('PUT', `/api/admin/dapps/${a.dappId}/restrictions`, a.authToken, { origins: 'nope' })).status,
    400,
  );
  assert.equal((await api('DELETE', `/api/admin/members/${a.accountId}`, a.authToken)).status, 409);
  const now = await entries();
  assert.equal(now.length, count + 1, 'only the member added');
  assert.equal(now[0]?.action, 'member.add');
});

test('the member changes are logged with the change, in one transaction', async () => {
  const added = await api('POST', '/api/admin/members', a.authToken, { email: 'later@example.com', role: 'viewer' });
  const { memberId } = added.body.data as { memberId: string };
  assert.equal((await api('PATCH', `/api/admin/members/${memberId}`, a.authToken, { role: 'operator' })).status, 200);
  assert.equal((await api('DELETE', `/api/admin/members/${memberId}`, a.authToken)).status, 200);
  const [removed, role, add] = await entries();
  assert.deepEqual([removed?.action, role?.action, add?.action], ['member.remove', 'member.role', 'member.add']);
  assert.deepEqual([field(role, 'before', 'role'), field(role, 'after', 'role')], ['viewer', 'operator']);
  assert.equal(field(removed, 'before', 'email'), 'later@example.com');
  assert.equal(removed?.after, null);
  assert.ok([removed, role, add].every((e) => e?.targetId === memberId && e.memberId === a.accountId));
  assert.ok(!JSON.stringify(add?.after).includes('assword'), 'the first password is not logged');
});

test('paging: newest first, `before` = nextCursor, every row once; a dApp filter', async () => {
  const all = await entries();
  assert.ok(all.length >= 10, `${all.length} rows`);
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await api(
      'GET',
      `/api/admin/audit-log?limit=3${cursor === null ? '' : `&before=${cursor}`}`,
      a.authToken,
    );
    const page = res.body.data as { entries: Entry[]; nextCursor: string | null };
    seen.push(...page.entries.map((e) => e.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  assert.deepEqual(
    seen,
    all.map((e) => e.id),
  );
  const times = all.map((e) => Date.parse(e.at));
  assert.deepEqual(
    times,
    [...times].sort((x, y) => y - x),
  );
  const ofDapp = await entries(`dappId=${a.dappId}&limit=200`);
  assert.ok(ofDapp.length > 0 && ofDapp.every((e) => e.dappId === a.dappId));
  const bad = await api('GET', '/api/admin/audit-log?before=nope', a.authToken);
  assert.deepEqual([bad.status, bad.body.message], [400, 'before must be a cursor from nextCursor']);
});
