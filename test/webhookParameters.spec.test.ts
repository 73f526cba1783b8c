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

/**
 * Every row of spec §4.1 (operations) and §7 (errors), table-driven: status, exact message, body shape.
 */
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

let ctx: TestContext;
let tenant: Tenant;
let webhookId: string;

before(async () => {
  ctx = await createTestContext();
  tenant = await createTenant(ctx.deps);
  const res = await ctx.app.inject({
    method: 'POST',
    url: WEBHOOK_PATH,
    headers: webhookHeaders(tenant),
    payload: { webhookUrl: 'http://127.0.0.1:4000/hook', requestType: 'POST' },
  });
  webhookId = res.json().data.webhookId;
});
after(() => ctx.close());

async function call(args: {
  method: Method;
  headers?: Record<string, string>;
  payload?: unknown;
  query?: Record<string, string>;
}) {
  const res = await ctx.app.inject({
    method: args.method,
    url: WEBHOOK_PATH,
    headers: args.headers ?? webhookHeaders(tenant),
    ...(args.query === undefined ? {} : { query: args.query }),
    ...(args.payload === undefined ? {} : { payload: args.payload as object }),
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown>, type: res.headers['content-type'] };
}

describe('spec §4.1 success responses', () => {
  test('Create: 200, "Webhook created", data {webhookId, webhookUrl, requestType}', async () => {
    const r = await call({
      method: 'POST',
      payload: { webhookUrl: 'https://127.0.0.1:8443/verify', requestType: 'GET' },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.statusCode, 200);
    assert.equal(r.body.message, 'Webhook created');
    const data = r.body.data as Record<string, unknown>;
    assert.equal(typeof data.webhookId, 'string');
    assert.equal(data.webhookUrl, 'https://127.0.0.1:8443/verify');
    assert.equal(data.requestType, 'GET');
    assert.equal(data.active, true);
    assert.match(String(r.type), /^application\/json/);
  });

  test('Get: 200, "Webhook list fetched", data = array with the webhook (GET with body {webhookUrl:""})', async () => {
    const r = await call({ method: 'GET', query: { webhookId }, payload: { webhookUrl: '' } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      statusCode: 200,
      message: 'Webhook list fetched',
      data: [{ webhookId, webhookUrl: 'http://127.0.0.1:4000/hook', requestType: 'POST', active: true }],
    });
  });

  test('Get without a body is accepted too', async () => {
    const r = await call({ method: 'GET', query: { webhookId } });
    assert.equal(r.status, 200);
    assert.equal((r.body.data as unknown[]).length, 1);
  });

  test('Update: 200, "Webhook updated", no data; active toggles both ways', async () => {
    for (const active of [false, true, false]) {
      const r = await call({ method: 'PATCH', payload: { webhookId, active } });
      assert.deepEqual(r.body, { statusCode: 200, message: 'Webhook updated' });
      assert.equal(r.status, 200);
      const g = await call({ method: 'GET', query: { webhookId } });
      assert.equal((g.body.data as { active: boolean }[])[0]?.active, active);
    }
  });

  test('Delete: 200, "Webhook deleted", no data; the webhook is gone', async () => {
    const c = await call({ method: 'POST', payload: { webhookUrl: 'http://127.0.0.1:4001/x', requestType: 'POST' } });
    const id = (c.body.data as { webhookId: string }).webhookId;
    const r = await call({ method: 'DELETE', payload: { webhookId: id } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { statusCode: 200, message: 'Webhook deleted' });
    const g = await call({ method: 'GET', query: { webhookId: id } });
    assert.equal(g.status, 404);
  });
});

describe('spec §7 error rows', () => {
  const MISSING_BOTH = 'Auth token and API key is required in the headers';
  const rows: {
    name: string;
    method: Method;
    headers?: () => Record<string, string>;
    payload?: () => unknown;
    query?: () => Record<string, string>;
    status: number;
    message: string;
  }[] = [
    {
      name: 'Update: active not a boolean (string)',
      method: 'PATCH',
      payload: () => ({ webhookId, active: 'true' }),
      status: 400,
      message: 'active must be a boolean value',
    },
    {
      name: 'Update: active not a boolean (number)',
      method: 'PATCH',
      payload: () => ({ webhookId, active: 1 }),
      status: 400,
      message: 'active must be a boolean value',
    },
    {
      name: 'Update: active missing',
      method: 'PATCH',
      payload: () => ({ webhookId }),
      status: 400,
      message: 'active must be a boolean value',
    },
    {
      name: 'Update: active null',
      method: 'PATCH',
      payload: () => ({ webhookId, active: null }),
      status: 400,
      message: 'active must be a boolean value',
    },
    {
      name: 'Delete: webhookId a number',
      method: 'DELETE',
      payload: () => ({ webhookId: 42 }),
      status: 400,
      message: 'webhookId must be a string',
    },
    {
      name: 'Delete: webhookId missing',
      method: 'DELETE',
      payload: () => ({}),
      status: 400,
      message: 'webhookId must be a string',
    },
    { name: 'Delete: no body at all', method: 'DELETE', status: 400, message: 'webhookId must be a string' },
    {
      name: 'Delete: webhookId an object',
      method: 'DELETE',
      payload: () => ({ webhookId: { id: 'x' } }),
      status: 400,
      message: 'webhookId must be a string',
    },
    {
      name: 'Create: no authToken',
      method: 'POST',
      headers: () => ({ apiKey: tenant.apiKey }),
      payload: () => ({ webhookUrl: 'http://127.0.0.1/', requestType: 'POST' }),
      status: 401,
      message: MISSING_BOTH,
    },
    {
      name: 'Create: no apiKey',
      method: 'POST',
      headers: () => ({ authToken: tenant.authToken }),
      payload: () => ({ webhookUrl: 'http://127.0.0.1/', requestType: 'POST' }),
      status: 401,
      message: MISSING_BOTH,
    },
    {
      name: 'Create: no headers',
      method: 'POST',
      headers: () => ({}),
      payload: () => ({ webhookUrl: 'http://127.0.0.1/', requestType: 'POST' }),
      status: 401,
      message: MISSING_BOTH,
    },
    {
      name: 'Update: no authToken',
      method: 'PATCH',
      headers: () => ({ apiKey: tenant.apiKey }),
      payload: () => ({ webhookId, active: true }),
      status: 401,
      message: MISSING_BOTH,
    },
    {
      name: 'Update: no apiKey',
      method: 'PATCH',
      headers: () => ({ authToken: tenant.authToken }),
      payload: () => ({ webhookId, active: true }),
      status: 401,
      message: MISSING_BOTH,
    },
    {
      name: 'Delete: no authToken',
      method: 'DELETE',
      headers: () => ({ apiKey: tenant.apiKey }),
      payload: () => ({ webhookId }),
      status: 401,
      message: MISSING_BOTH,
    },
    {
      name: 'Delete: no apiKey',
      method: 'DELETE',
      headers: () => ({ authToken: tenant.authToken }),
      payload: () => ({ webhookId }),
      status: 401,
      message: MISSING_BOTH,
    },
    {
      name: 'Get: no authToken',
      method: 'GET',
      headers: () => ({ apiKey: tenant.apiKey }),
      query: () => ({ webhookId }),
      status: 401,
      message: 'Auth token is required in the headers',
    },
    {
      name: 'Get: no headers',
      method: 'GET',
      headers: () => ({}),
      query: () => ({ webhookId }),
      status: 401,
      message: 'Auth token is required in the headers',
    },
    {
      name: 'Update: unknown webhookId',
      method: 'PATCH',
      payload: () => ({ webhookId: '00000000-0000-4000-8000-000000000000', active: true }),
      status: 404,
      message: 'Webhook not found',
    },
    {
      name: 'Update: malformed webhookId',
      method: 'PATCH',
      payload: () => ({ webhookId: 'not-an-id', active: true }),
      status: 404,
      message: 'Webhook not found',
    },
    {
      name: 'Delete: unknown webhookId',
      method: 'DELETE',
      payload: () => ({ webhookId: '00000000-0000-4000-8000-000000000000' }),
      status: 404,
      message: 'Webhook not found',
    },
  ];
  for (const row of rows) {
    test(`${row.name} → ${row.status} "${row.message}"`, async () => {
      const r = await call({
        method: row.method,
        ...(row.headers === undefined ? {} : { headers: row.headers() }),
        ...(row.payload === undefined ? {} : { payload: row.payload() }),
        ...(row.query === undefined ? {} : { query: row.query() }),
      });
      assert.equal(r.status, row.status);
      assert.deepEqual(r.body, { statusCode: row.status, message: row.message });
    });
  }

  test('a refused request changed nothing: the webhook is still there, unchanged', async () => {
    const g = await call({ method: 'GET', query: { webhookId } });
    assert.equal(g.status, 200);
    assert.equal((g.body.data as { webhookUrl: string }[])[0]?.webhookUrl, 'http://127.0.0.1:4000/hook');
  });
});
