import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  createTenant,
  createTestContext,
  type Tenant,
  type TestContext,
  WEBHOOK_PATH,
  webhookHeaders,
} from './helpers/testContext.js';

/** The decisions Patron makes where the spec says "not shown" (docs/reference/rest-api.md, "Decisions"), each tested. */
let ctx: TestContext;
let tenant: Tenant;

before(async () => {
  ctx = await createTestContext();
  tenant = await createTenant(ctx.deps);
});
after(() => ctx.close());

const create = (payload: unknown, t: Tenant = tenant) =>
  ctx.app.inject({ method: 'POST', url: WEBHOOK_PATH, headers: webhookHeaders(t), payload: payload as object });

describe('Create', () => {
  test('a new webhook is active', async () => {
    const res = await create({ webhookUrl: 'http://127.0.0.1:4000/a', requestType: 'POST' });
    assert.equal(res.json().data.active, true);
    const [stored] = await ctx.deps.store.webhooks.listByDapp(tenant.dappId);
    assert.equal(stored?.active, true);
  });

  for (const [sent, stored] of [
    ['post', 'POST'],
    ['Get', 'GET'],
    [' GET ', 'GET'],
  ] as const) {
    test(`requestType "${sent}" is normalised to ${stored}`, async () => {
      const res = await create({ webhookUrl: 'http://127.0.0.1:4000/b', requestType: sent });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().data.requestType, stored);
    });
  }

  const invalid: [string, unknown, string][] = [
    [
      'requestType PUT',
      { webhookUrl: 'http://127.0.0.1/', requestType: 'PUT' },
      'requestType must be one of GET, POST',
    ],
    ['requestType missing', { webhookUrl: 'http://127.0.0.1/' }, 'requestType must be one of GET, POST'],
    [
      'requestType a number',
      { webhookUrl: 'http://127.0.0.1/', requestType: 1 },
      'requestType must be one of GET, POST',
    ],
    ['webhookUrl missing', { requestType: 'POST' }, 'webhookUrl must be a string'],
    ['webhookUrl a number', { webhookUrl: 7, requestType: 'POST' }, 'webhookUrl must be a string'],
    ['webhookUrl empty', { webhookUrl: '', requestType: 'POST' }, 'webhookUrl must not be empty'],
    [
      'webhookUrl relative',
      { webhookUrl: '/hook', requestType: 'POST' },
      'webhookUrl must be an absolute http or https URL',
    ],
    [
      'webhookUrl ftp',
      { webhookUrl: 'ftp://127.0.0.1/x', requestType: 'POST' },
      'webhookUrl must be an absolute http or https URL',
    ],
    [
      'webhookUrl javascript:',
      { webhookUrl: 'javascript:alert(1)', requestType: 'POST' },
      'webhookUrl must be an absolute http or https URL',
    ],
    [
      'webhookUrl with credentials',
      { webhookUrl: 'http://u:p@127.0.0.1/x', requestType: 'POST' },
      'webhookUrl must not contain credentials',
    ],
    [
      'webhookUrl over 2048 chars',
      { webhookUrl: `http://127.0.0.1/${'a'.repeat(2040)}`, requestType: 'POST' },
      'webhookUrl must be at most 2048 characters',
    ],
  ];
  for (const [name, payload, message] of invalid) {
    test(`400 for ${name}`, async () => {
      const before = (await ctx.deps.store.webhooks.listByDapp(tenant.dappId)).length;
      const res = await create(payload);
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { statusCode: 400, message });
      assert.equal((await ctx.deps.store.webhooks.listByDapp(tenant.dappId)).length, before, 'nothing stored');
    });
  }

  test('a URL of exactly 2048 characters is accepted', async () => {
    const url = `http://127.0.0.1/${'a'.repeat(2048 - 'http://127.0.0.1/'.length)}`;
    assert.equal(url.length, 2048);
    const res = await create({ webhookUrl: url, requestType: 'POST' });
    assert.equal(res.statusCode, 200);
  });

  test('unknown body fields are ignored', async () => {
    const res = await create({
      webhookUrl: 'http://127.0.0.1:4000/c',
      requestType: 'POST',
      active: false,
      extra: { a: 1 },
    });
    assert.equal(res.statusCode, 200);
    // signingSecret: the Standard Webhooks secret, added to the Create answer only (see test/adminWebhooks.test.ts).
    assert.deepEqual(Object.keys(res.json().data).sort(), [
      'active',
      'requestType',
      'signingSecret',
      'webhookId',
      'webhookUrl',
    ]);
    assert.equal(res.json().data.active, true);
  });

  test('at most 10 webhooks per dApp; the 11th gets 409 and is not stored', async () => {
    const t = await createTenant(ctx.deps);
    for (let i = 0; i < 10; i++)
      assert.equal((await create({ webhookUrl: `http://127.0.0.1/${i}`, requestType: 'POST' }, t)).statusCode, 200);
    const res = await create({ webhookUrl: 'http://127.0.0.1/11', requestType: 'POST' }, t);
    assert.equal(res.statusCode, 409);
    assert.deepEqual(res.json(), {
      statusCode: 409,
      message: 'Webhook limit reached: a dApp can have at most 10 webhooks',
    });
    assert.equal((await ctx.deps.store.webhooks.listByDapp(t.dappId)).length, 10);
    // Deleting one frees a place.
    const [first] = await ctx.deps.store.webhooks.listByDapp(t.dappId);
    await ctx.app.inject({
      method: 'DELETE',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(t),
      payload: { webhookId: first?.id },
    });
    assert.equal((await create({ webhookUrl: 'http://127.0.0.1/12', requestType: 'POST' }, t)).statusCode, 200);
  });
});

describe('Get', () => {
  test('without webhookId: every webhook of the dApp, oldest first, and only this dApp’s', async () => {
    const t = await createTenant(ctx.deps);
    const other = await createTenant(ctx.deps);
    await create({ webhookUrl: 'http://127.0.0.1/other', requestType: 'POST' }, other);
    const ids: string[] = [];
    for (const u of ['http://127.0.0.1/1', 'http://127.0.0.1/2', 'http://127.0.0.1/3']) {
      ids.push((await create({ webhookUrl: u, requestType: 'GET' }, t)).json().data.webhookId);
    }
    for (const query of [undefined, { webhookId: '' }]) {
      const res = await ctx.app.inject({
        method: 'GET',
        url: WEBHOOK_PATH,
        headers: webhookHeaders(t),
        ...(query ? { query } : {}),
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().message, 'Webhook list fetched');
      assert.deepEqual(
        res.json().data.map((w: { webhookId: string }) => w.webhookId),
        ids,
      );
    }
  });

  test('an empty list is 200 with data []', async () => {
    const t = await createTenant(ctx.deps);
    const res = await ctx.app.inject({ method: 'GET', url: WEBHOOK_PATH, headers: webhookHeaders(t) });
    assert.deepEqual(res.json(), { statusCode: 200, message: 'Webhook list fetched', data: [] });
  });

  test('unknown webhookId → 404 "Webhook not found"', async () => {
    const res = await ctx.app.inject({
      method: 'GET',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(tenant),
      query: { webhookId: '00000000-0000-4000-8000-000000000000' },
    });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { statusCode: 404, message: 'Webhook not found' });
  });

  test('webhookId given twice → 400 "webhookId must be a string"', async () => {
    const res = await ctx.app.inject({
      method: 'GET',
      url: `${WEBHOOK_PATH}?webhookId=a&webhookId=b`,
      headers: webhookHeaders(tenant),
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { statusCode: 400, message: 'webhookId must be a string' });
  });

  test('Get with token but no apiKey → 401 with the general message', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: WEBHOOK_PATH, headers: { authToken: tenant.authToken } });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().message, 'Auth token and API key is required in the headers');
  });
});

describe('malformed requests get a clear 4xx in the same shape', () => {
  const headers = () => ({ ...webhookHeaders(tenant), 'content-type': 'application/json' });
  const cases: [
    string,
    () => { method: 'POST' | 'PATCH' | 'DELETE'; headers: Record<string, string>; payload: string },
    number,
    string,
  ][] = [
    [
      'malformed JSON',
      () => ({ method: 'POST', headers: headers(), payload: '{"webhookUrl": ' }),
      400,
      'Malformed JSON in request body',
    ],
    [
      'a JSON array',
      () => ({ method: 'POST', headers: headers(), payload: '[1,2]' }),
      400,
      'Request body must be a JSON object',
    ],
    [
      'a JSON string',
      () => ({ method: 'PATCH', headers: headers(), payload: '"hello"' }),
      400,
      'Request body must be a JSON object',
    ],
    [
      'JSON null',
      () => ({ method: 'DELETE', headers: headers(), payload: 'null' }),
      400,
      'Request body must be a JSON object',
    ],
    [
      'a prototype-poisoning key',
      () => ({ method: 'POST', headers: headers(), payload: '{"__proto__":{"x":1}}' }),
      400,
      'Malformed JSON in request body',
    ],
    [
      'an empty JSON body on DELETE',
      () => ({ method: 'DELETE', headers: headers(), payload: '' }),
      400,
      'webhookId must be a string',
    ],
    [
      'text/plain',
      () => ({ method: 'POST', headers: { ...webhookHeaders(tenant), 'content-type': 'text/plain' }, payload: 'x' }),
      415,
      'Unsupported content type: send application/json',
    ],
    [
      'form-encoded',
      () => ({
        method: 'PATCH',
        headers: { ...webhookHeaders(tenant), 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'a=b',
      }),
      415,
      'Unsupported content type: send application/json',
    ],
    [
      'a body over 64 KiB',
      () => ({
        method: 'POST',
        headers: headers(),
        payload: JSON.stringify({ webhookUrl: 'x'.repeat(70_000), requestType: 'POST' }),
      }),
      413,
      'Request body is larger than 65536 bytes',
    ],
  ];
  for (const [name, req, status, message] of cases) {
    test(`${name} → ${status}`, async () => {
      const res = await ctx.app.inject({ url: WEBHOOK_PATH, ...req() });
      assert.equal(res.statusCode, status);
      assert.deepEqual(res.json(), { statusCode: status, message });
      assert.doesNotMatch(res.body, /at .*\.(ts|js):\d+/, 'no stack trace');
    });
  }

  test('application/json with a charset parameter is accepted', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: WEBHOOK_PATH,
      headers: { ...webhookHeaders(tenant), 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ webhookUrl: 'http://127.0.0.1/charset', requestType: 'POST' }),
    });
    assert.equal(res.statusCode, 200);
  });

  test('an unknown route is a 404 in the same shape', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/v2/public/sdk/nope' });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().statusCode, 404);
  });
});

describe('ids and URLs PostgreSQL could not store are refused like any other bad input', () => {
  test('a NUL byte in webhookId is "Webhook not found" on Get, Update and Delete', async () => {
    const id = 'a\u0000b';
    const get = await ctx.app.inject({
      method: 'GET',
      url: `${WEBHOOK_PATH}?webhookId=a%00b`,
      headers: webhookHeaders(tenant),
    });
    const patch = await ctx.app.inject({
      method: 'PATCH',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(tenant),
      payload: { webhookId: id, active: true },
    });
    const del = await ctx.app.inject({
      method: 'DELETE',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(tenant),
      payload: { webhookId: id },
    });
    for (const res of [get, patch, del]) {
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { statusCode: 404, message: 'Webhook not found' });
    }
  });

  for (const url of [
    'http://127.0.0.1/a\u0000b',
    'http://127.0.0.1/a b',
    'http://127.0.0.1/\n',
    ' http://127.0.0.1/',
  ]) {
    test(`webhookUrl ${JSON.stringify(url)} → 400`, async () => {
      const res = await create({ webhookUrl: url, requestType: 'POST' });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { statusCode: 400, message: 'webhookUrl must be an absolute http or https URL' });
    });
  }
});
