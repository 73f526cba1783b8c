import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Config } from '../src/config/config.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import {
  dropTestSchema,
  fakeResolver,
  openTestStore,
  TEST_MASTER_KEY,
  TEST_SIGNER_KEY,
  testConfig,
} from './helpers/testContext.js';

/**
 * A start that fails on the way (deps.ts, async/closers.ts) closes what it had opened, last opened first. The
 * failure: the settlement's block range, built last but one (the schema refuses a fraction; the test passes the
 * configuration by hand), when the store, the request log's writer, the signing gate, the lifecycle events and the
 * sweeps are open.
 */
describe('createDeps: a start that fails', () => {
  const logger = createLogger({ level: 'silent' });
  const overrides = { masterKey: TEST_MASTER_KEY, signerKey: TEST_SIGNER_KEY, resolver: fakeResolver };
  const failingAt = (config: Partial<Config>) =>
    testConfig({ ...config, settlement: { ...testConfig().settlement, maxBlockRange: 0.5 } });

  test('with a SQLite file of its own: every connection to it is closed, the request log thread’s too', async () => {
    // SQLite deletes a file's write-ahead log when its last connection closes: the WAL is gone only once the store
    // and the request log's writer thread (a connection of its own) are both closed.
    const dir = mkdtempSync(join(tmpdir(), 'patron-failed-start-'));
    const file = join(dir, 'patron.sqlite');
    const opened = { storage: { kind: 'sqlite', file } } as const;
    try {
      // The control: a start that succeeds holds the file open (its WAL exists) until close.
      const deps = await createDeps(testConfig(opened), logger, { ...overrides, servedChainIds: [31337] });
      assert.ok(existsSync(`${file}-wal`), 'the store is open');
      await deps.close();
      assert.equal(existsSync(`${file}-wal`), false, 'closed');

      await assert.rejects(
        createDeps(failingAt(opened), logger, { ...overrides, servedChainIds: [31337] }),
        RangeError,
      );
      assert.ok(existsSync(file));
      assert.equal(existsSync(`${file}-wal`), false, 'every connection to the file was closed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('with a store the caller handed over: it is closed, once', async () => {
    const { store, schema } = await openTestStore();
    let closes = 0;
    const observed = {
      ...store,
      async close() {
        closes++;
        await store.close();
      },
    };
    try {
      await assert.rejects(
        createDeps(failingAt({}), logger, { ...overrides, store: observed, servedChainIds: [31337] }),
        RangeError,
      );
      assert.equal(closes, 1);
    } finally {
      await dropTestSchema(schema);
    }
  });
});
