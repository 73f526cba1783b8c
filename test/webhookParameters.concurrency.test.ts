import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createApp } from '../src/app.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import {
  BACKEND,
  createTenant,
  createTestContext,
  fakeResolver,
  openTestStore,
  TEST_MASTER_KEY,
  type TestContext,
  testConfig,
  WEBHOOK_PATH,
  webhookHeaders,
} from './helpers/testContext.js';

const contexts: TestContext[] = [];
after(async () => {
  for (const c of contexts) await c.close();
});

const LIMIT_MESSAGE = 'Webhook limit reached: a dApp can have at most 10 webhooks';

test(`200 parallel creates on one dApp: exactly 10 succeed, 190 get the limit error, 10 unique rows (${BACKEND})`, async () => {
  const ctx = await createTestContext({ poolSize: 20 });
  contexts.push(ctx);
  const tenant = await createTenant(ctx.deps);
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      ctx.app.inject({
        method: 'POST',
        url: WEBHOOK_PATH,
        headers: webhookHeaders(tenant),
        payload: { webhookUrl: `http://127.0.0.1:4000/hook/${i}`, requestType: i % 2 ? 'GET' : 'POST' },
      }),
    ),
  );
  const ok = results.filter((r) => r.statusCode === 200);
  const limited = results.filter((r) => r.statusCode === 409);
  assert.equal(ok.length, 10);
  assert.equal(limited.length, 190);
  for (const r of limited) assert.deepEqual(r.json(), { statusCode: 409, message: LIMIT_MESSAGE });
  const rows = await ctx.deps.store.webhooks.listByDapp(tenant.dappId);
  assert.equal(rows.length, 10);
  assert.equal(new Set(rows.map((r) => r.id)).size, 10);
  assert.deepEqual(
    new Set(rows.map((r) => r.id)),
    new Set(ok.map((r) => r.json().data.webhookId as string)),
    'the stored rows are exactly the ones reported as created',
  );
});

test('parallel creates on different dApps do not block each other’s quota', async () => {
  const ctx = await createTestContext({ poolSize: 20 });
  contexts.push(ctx);
  const tenants = await Promise.all(Array.from({ length: 5 }, () => createTenant(ctx.deps)));
  const results = await Promise.all(
    tenants.flatMap((t) =>
      Array.from({ length: 12 }, (_, i) =>
        ctx.app.inject({
          method: 'POST',
          url: WEBHOOK_PATH,
          headers: webhookHeaders(t),
          payload: { webhookUrl: `http://127.0.0.1/${i}`, requestType: 'POST' },
        }),
      ),
    ),
  );
  assert.equal(results.filter((r) => r.statusCode === 200).length, 50);
  for (const t of tenants) assert.equal((await ctx.deps.store.webhooks.listByDapp(t.dappId)).length, 10);
});

test('two service instances on one PostgreSQL database: 2 × 100 parallel creates, still exactly 10', {
  skip:
    BACKEND !== 'postgres' &&
    'needs PATRON_TEST_DATABASE_URL (separate processes on SQLite are covered by the CLI test)',
}, async () => {
  const ctx = await createTestContext({ poolSize: 10 });
  contexts.push(ctx);
  const tenant = await createTenant(ctx.deps);
  // A second instance with its own pool on the same schema, like a second process.
  assert.ok(ctx.schema);
  const { store: secondStore } = await openTestStore({ schema: ctx.schema, poolSize: 10 });
  const deps2 = await createDeps(testConfig(), createLogger({ level: 'silent' }), {
    store: secondStore,
    masterKey: TEST_MASTER_KEY,
    resolver: fakeResolver,
  });
  const app2 = createApp(deps2);
  try {
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (i % 2 ? ctx.app : app2).inject({
          method: 'POST',
          url: WEBHOOK_PATH,
          headers: webhookHeaders(tenant),
          payload: { webhookUrl: `http://127.0.0.1/${i}`, requestType: 'POST' },
        }),
      ),
    );
    assert.equal(results.filter((r) => r.statusCode === 200).length, 10);
    assert.equal(results.filter((r) => r.statusCode === 409).length, 190);
    assert.equal((await ctx.deps.store.webhooks.listByDapp(tenant.dappId)).length, 10);
  } finally {
    await app2.close();
    await deps2.close();
  }
});
