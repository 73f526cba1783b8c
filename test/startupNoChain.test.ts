import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

/**
 * Production with no chain configured would listen, look healthy and answer every paymaster call "chain not
 * served": the real process (`src/main.ts`) refuses to start instead, saying what to set.
 */
test('production mode with no chain refuses to start, exit 1, naming PATRON_CHAINS', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-nochain-'));
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: 'production',
    PATRON_MASTER_KEY: 'ab'.repeat(32),
    PATRON_SIGNER_PRIVATE_KEY: 'cd'.repeat(32),
    PATRON_DATA_DIR: dataDir,
    PORT: '0',
  };
  delete env.PATRON_CHAINS;
  delete env.PATRON_DEV_CHAIN;
  delete env.PATRON_PRODUCTION;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const timer = setTimeout(() => child.kill('SIGTERM'), 30_000);
  try {
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 1, out);
    assert.match(out, /Invalid configuration:\n {2}- Production mode serves no chain: set PATRON_CHAINS, e\.g\. /);
    assert.match(out, /or PATRON_DEV_CHAIN=true to run the in-process dev chain/);
    assert.doesNotMatch(out, /Patron is listening/);
  } finally {
    clearTimeout(timer);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
