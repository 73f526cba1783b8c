import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Address, hexToBytes } from 'viem';
import { fixtureChainRuntime, KEYS, type PatronFixture, startPatronFixture } from './helpers/patronPaymasterV06.js';
import { createTestContext, type TestContext } from './helpers/testContext.js';

/**
 * The service refuses to start when a configured chain is not what PATRON_CHAINS says: the real process
 * (`src/main.ts`), its chain an in-process EVM served over HTTP on 127.0.0.1 (another app's /chain/31337).
 */
let fx: PatronFixture;
let host: TestContext;
let rpcUrl: string;
before(async () => {
  fx = await startPatronFixture();
  host = await createTestContext({ chains: [fixtureChainRuntime(fx)], signerKey: hexToBytes(KEYS.signer) });
  await host.app.listen({ port: 0, host: '127.0.0.1' });
  rpcUrl = `http://127.0.0.1:${(host.app.server.address() as AddressInfo).port}/chain/${fx.chain.chainId}`;
});
after(async () => {
  await host.close();
  await fx.close();
});

const OTHER_SIGNER = `0x${'5a'.repeat(32)}`;

/** Starts the service; resolves with its exit code and output, or 'listening' once it serves (then stops it). */
async function start(
  chain: { chainId: number; paymaster?: Address; entryPoint?: Address },
  signer: string = KEYS.signer,
  env: Readonly<Record<string, string>> = {},
) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-startup-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      PATRON_DEV_CHAIN: 'false',
      PATRON_DEMO: 'false',
      PATRON_DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'info',
      PATRON_SIGNER_PRIVATE_KEY: signer,
      PATRON_CHAINS: JSON.stringify([
        {
          chainId: chain.chainId,
          rpcUrl,
          paymaster: chain.paymaster ?? fx.paymaster,
          entryPoint: chain.entryPoint ?? fx.entryPoint,
        },
      ]),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  try {
    const deadline = Date.now() + 40_000;
    while (child.exitCode === null && !out.includes('"msg":"Patron is listening"')) {
      assert.ok(Date.now() < deadline, `neither started nor refused:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    if (child.exitCode === null) return { outcome: 'listening' as const, out };
    return { outcome: child.exitCode, out };
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('start-up chain checks (the real process)', { timeout: 180_000 }, () => {
  test('the right chain, contracts and signer: it starts', async () => {
    const r = await start({ chainId: fx.chain.chainId });
    assert.equal(r.outcome, 'listening', r.out);
  });

  test('the operator alert URL on 127.0.0.1: resolved at start, allowed, and said to be internal', async () => {
    const r = await start({ chainId: fx.chain.chainId }, KEYS.signer, {
      PATRON_ALERT_WEBHOOK_URL: 'http://127.0.0.1:9/alerts',
      PATRON_ALERT_WEBHOOK_SECRET: `whsec_${Buffer.alloc(24, 3).toString('base64')}`,
    });
    assert.equal(r.outcome, 'listening', r.out);
    assert.match(r.out, /"check":"alert_destination","host":"127.0.0.1","addresses":\["127.0.0.1"\],"internal":true/);
    assert.match(r.out, /operator alerts go to an internal address/);
  });

  test('a chain configured as id 1 whose RPC serves 31337: refused, exit 78 (a restart cannot fix it), naming both', async () => {
    const r = await start({ chainId: 1 });
    assert.equal(r.outcome, 78, r.out);
    assert.match(r.out, /Refusing to start/);
    assert.match(r.out, /chain 1: its RPC serves chain 31337, not 1/);
  });

  test('no contract at the paymaster address: refused', async () => {
    const r = await start({ chainId: fx.chain.chainId, paymaster: '0x000000000000000000000000000000000000dEaD' });
    assert.equal(r.outcome, 78, r.out);
    assert.match(r.out, /chain 31337: no contract at the paymaster 0x000000000000000000000000000000000000dEaD/);
  });

  test('a paymaster bound to another EntryPoint, and another signer on chain: refused, each named', async () => {
    const r = await start({ chainId: fx.chain.chainId, entryPoint: fx.paymaster }, OTHER_SIGNER);
    assert.equal(r.outcome, 78, r.out);
    assert.match(r.out, /the paymaster's EntryPoint is 0x[0-9a-fA-F]{40}, not the configured/);
    assert.match(
      r.out,
      /the paymaster 0x[0-9a-fA-F]{40} does not accept this service's signer 0x[0-9a-fA-F]{40} \(its signers: 0x[0-9a-fA-F]{40}\); the paymaster's owner adds it: patron paymaster add-signer --signer/,
    );
  });
});
