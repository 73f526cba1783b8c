import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { createDeps, type Deps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import {
  BACKEND,
  createTenant,
  dropTestSchema,
  fakeResolver,
  openTestStore,
  TEST_DATABASE_URL,
  WEBHOOK_PATH,
  webhookHeaders,
} from './helpers/testContext.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-persist-'));
let schema: string | undefined;
after(async () => {
  fs.rmSync(dataDir, { recursive: true, force: true });
  await dropTestSchema(schema);
});

/**
 * Starts the service the way main.ts does (configuration, master key file in the data directory, storage),
 * on SQLite in a data directory, or on PostgreSQL in one schema that survives the restart.
 */
async function start(): Promise<Deps> {
  const config = loadConfig({ PATRON_DATA_DIR: dataDir, LOG_LEVEL: 'silent', PATRON_DEV_CHAIN: 'false' });
  const logger = createLogger({ level: 'silent' });
  // No chain runs here; the tenant's dApp stands on the dev chain's id.
  if (BACKEND === 'sqlite') return createDeps(config, logger, { resolver: fakeResolver, servedChainIds: [31337] });
  const opened = await openTestStore(schema === undefined ? {} : { schema });
  schema = opened.schema;
  return createDeps({ ...config, storage: { kind: 'postgres', url: String(TEST_DATABASE_URL), poolSize: 5 } }, logger, {
    store: opened.store,
    resolver: fakeResolver,
    servedChainIds: [31337],
  });
}

test(`data survives a restart (${BACKEND})`, async () => {
  const deps1 = await start();
  const app1 = createApp(deps1);
  const tenant = await createTenant(deps1);
  const created = await app1.inject({
    method: 'POST',
    url: WEBHOOK_PATH,
    headers: webhookHeaders(tenant),
    payload: { webhookUrl: 'http://127.0.0.1:4000/persist', requestType: 'GET' },
  });
  const { webhookId } = created.json().data;
  await app1.inject({
    method: 'PATCH',
    url: WEBHOOK_PATH,
    headers: webhookHeaders(tenant),
    payload: { webhookId, active: false },
  });
  await app1.close();
  await deps1.close();
  if (BACKEND === 'sqlite') {
    assert.ok(fs.existsSync(path.join(dataDir, 'patron.sqlite')));
    assert.equal(fs.statSync(path.join(dataDir, 'master.key')).mode & 0o777, 0o600);
  }

  const deps2 = await start();
  const app2 = createApp(deps2);
  try {
    // Same credentials (the API key decrypts with the master key kept in the data directory), same webhook.
    const res = await app2.inject({
      method: 'GET',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(tenant),
      query: { webhookId },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().data, [
      { webhookId, webhookUrl: 'http://127.0.0.1:4000/persist', requestType: 'GET', active: false },
    ]);
    const dapps = await deps2.accounts.listDapps(tenant.accountId);
    assert.equal(dapps[0]?.apiKey, tenant.apiKey);
  } finally {
    await app2.close();
    await deps2.close();
  }
});
