import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { loadConfig } from '../src/config/config.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import { openTestStore, TEST_DATABASE_URL, TEST_RATE_LIMITS } from './helpers/testContext.js';

/**
 * Issue 20, "Patron's own answers must be valid on chain": the embedded dev chain starts from genesis with every
 * process while the settlement cursor persists in the database. A restart is a new chain, not a reorg: the
 * second start logs no error (info at most) and follows the new chain from its head.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'patron-devchain-restart-'));
let schema: string | undefined;
after(() => rmSync(dataDir, { recursive: true, force: true }));

async function start(lines: { level: number; msg: string }[]) {
  const config = loadConfig({
    PATRON_DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    PATRON_DEV_CHAIN: 'true',
    PATRON_RATE_LIMITS: TEST_RATE_LIMITS,
    PATRON_SETTLEMENT_POLL_MS: '600000',
  });
  const logger = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    }),
  });
  if (TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '') return createDeps(config, logger);
  const opened = await openTestStore(schema === undefined ? {} : { schema });
  schema = opened.schema;
  return createDeps(config, logger, { store: opened.store });
}

test('a new embedded chain on a kept database: no error, the cursor starts afresh at its head', async () => {
  const first: { level: number; msg: string }[] = [];
  const one = await start(first);
  const chain = one.chains.list().find((c) => c.embedded);
  assert.ok(chain);
  // Blocks the next chain will not have at these hashes: the kept cursor is past its head or another block.
  await chain.request({ method: 'hardhat_mine', params: ['0x20'] });
  await one.settlement.runOnce();
  const [kept] = one.settlement.status();
  assert.ok(kept?.cursorBlock !== undefined && kept.cursorBlock >= 32n);
  await one.close();

  const second: { level: number; msg: string }[] = [];
  const two = await start(second);
  try {
    await two.settlement.runOnce();
    const errors = second.filter((l) => l.level >= 50).map((l) => l.msg);
    assert.deepEqual(errors, [], 'no error on a new dev chain');
    assert.ok(
      second.some((l) => l.level === 30 && /a new dev chain/.test(l.msg)),
      'said once, at info',
    );
    const head = BigInt(String(await two.chains.list()[0]?.request({ method: 'eth_blockNumber' })));
    const status = two.settlement.status();
    assert.ok(status.length > 0);
    for (const s of status) {
      assert.equal(s.reorgs, 0);
      assert.equal(s.cursorBlock, head, 'following from the new chain’s head');
      assert.equal(s.lastError, undefined);
    }
  } finally {
    await two.close();
  }
});
