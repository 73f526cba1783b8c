import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { spawnService } from './helpers/serviceProcess.js';

/**
 * Production with no chain configured would listen, look healthy and answer every paymaster call "chain not
 * served": the real process (`src/main.ts`) refuses to start instead, saying what to set.
 */
test('production mode with no chain refuses to start, exit 1, naming PATRON_CHAINS', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-nochain-'));
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base.PATRON_CHAINS;
  delete base.PATRON_DEV_CHAIN;
  delete base.PATRON_PRODUCTION;
  const service = spawnService(
    {
      NODE_ENV: 'production',
      PATRON_MASTER_KEY: 'ab'.repeat(32),
      PATRON_SIGNER_PRIVATE_KEY: 'cd'.repeat(32),
      PATRON_DATA_DIR: dataDir,
    },
    { baseEnv: base },
  );
  try {
    const code = await service.exitCode(30_000);
    const out = service.output();
    assert.equal(code, 78, out);
    assert.match(out, /Invalid configuration:\n {2}- Production mode serves no chain: set PATRON_CHAINS, e\.g\. /);
    assert.match(out, /or PATRON_DEV_CHAIN=true to run the in-process dev chain/);
    assert.doesNotMatch(out, /Patron is listening/);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
