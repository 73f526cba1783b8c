import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Address, keccak256, stringToHex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { z } from 'zod';
import { checkedMasterKey } from '../src/accounts/masterKey.js';
import { runCli } from '../src/cli/main.js';
import { openStore } from '../src/store/store.js';
import { createTestContext, type TestContext, testConfig } from './helpers/testContext.js';

/**
 * Issue 33, "Owner operations without the service's secrets": the real `patron` process, started in an empty
 * directory with an environment of its own (nothing of this run's), against the dev chain served over HTTP. The
 * paymaster owner's commands run in production mode with an RPC URL and the owner's key alone (or no key, to read and
 * to plan); `dapp list` runs on the service's database without the signer; and no command leaves anything in the
 * directory it ran in.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const TSX = import.meta.resolve('tsx');
const KEY_HEX = 'a1'.repeat(32);
const ownerKey = keccak256(stringToHex('patron-test-issue-33-owner'));
const owner = privateKeyToAddress(ownerKey);
/** Production mode, and nothing else of the service's: no PATRON_MASTER_KEY, no signer, no database. */
const PRODUCTION = { PATRON_PRODUCTION: 'true' };

let ctx: TestContext;
let rpcUrl: string;
let paymaster: Address;
const dirs: string[] = [];
function tempDir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** What the command left in the directory it ran in. */
  readonly left: string[];
}

/** `patron <argv>` as a process of its own, in a new empty directory, with only PATH and `env` set. */
async function patron(argv: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  const cwd = tempDir('patron-cwd-');
  const proc = spawn(process.execPath, ['--import', TSX, path.join(ROOT, 'src/cli/bin.ts'), ...argv], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  proc.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  // Asynchronous: the chain it calls is served by this process.
  const code = await new Promise<number>((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', (c) => resolve(c ?? -1));
  });
  return { code, stdout, stderr, left: fs.readdirSync(cwd, { recursive: true }).map(String) };
}

/** The setup's own commands, in this process (what is tested is the process above). */
async function setup(argv: readonly string[], env: Record<string, string>): Promise<unknown> {
  let out = '';
  const code = await runCli({
    argv: [...argv, '--json'],
    env: { LOG_LEVEL: 'silent', ...env },
    io: { stdout: (t) => (out += t), stderr: (t) => (out += t) },
  });
  assert.equal(code, 0, out);
  return JSON.parse(out);
}

before(async () => {
  const base = testConfig();
  ctx = await createTestContext({ config: { paymaster: { ...base.paymaster, devChain: true } } });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  rpcUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}/chain/31337`;
  await fetch(rpcUrl, {
    method: 'POST',
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'hardhat_setBalance',
      params: [owner, '0x56BC75E2D63100000'],
    }),
  });
  const keyOnly = { PATRON_DATA_DIR: tempDir('patron-unused-'), PATRON_DEPLOYER_PRIVATE_KEY: ownerKey };
  const deployed = z
    .object({ paymaster: z.string() })
    .parse(
      await setup(['paymaster', 'deploy', '--rpc', rpcUrl, '--entry-point-version', '0.7', '--signer', owner], keyOnly),
    );
  paymaster = deployed.paymaster as Address;
  await setup(['paymaster', 'deposit', '--rpc', rpcUrl, '--paymaster', paymaster, '--amount', '1'], keyOnly);
});
after(async () => {
  await ctx.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const on = (command: string, ...rest: string[]) => [
  'paymaster',
  command,
  '--rpc',
  rpcUrl,
  '--paymaster',
  paymaster,
  ...rest,
];

describe('production mode, with no PATRON_MASTER_KEY and no signer', () => {
  test('paymaster info reads the paymaster with an RPC URL alone', async () => {
    const r = await patron([...on('info'), '--json'], PRODUCTION);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const info = z
      .object({ paymaster: z.string(), owner: z.string(), deposit: z.string(), chainId: z.number() })
      .parse(JSON.parse(r.stdout));
    assert.deepEqual(
      [info.paymaster, info.owner, info.deposit, info.chainId],
      [paymaster, owner, String(10n ** 18n), 31337],
    );
    assert.deepEqual(r.left, []);
  });

  test('withdraw --dry-run needs no key at all: it prints the transaction to, value and data', async () => {
    const human = await patron(on('withdraw', '--amount', '0.25', '--dry-run'), PRODUCTION);
    assert.equal(human.code, 0, human.stdout + human.stderr);
    assert.match(human.stdout, new RegExp(`^ {2}to {4}${paymaster}$`, 'm'));
    assert.match(human.stdout, /^ {2}value 0 wei$/m);
    assert.match(human.stdout, /^ {2}data {2}0x205c2878[0-9a-f]+$/m, 'withdrawTo(address,uint256)');
    assert.deepEqual(human.left, []);
    const r = await patron([...on('withdraw', '--amount', '0.25', '--dry-run'), '--json'], PRODUCTION);
    assert.equal(r.code, 0, r.stderr);
    const out = z
      .object({
        dryRun: z.literal(true),
        from: z.string(),
        transaction: z.object({ to: z.string(), value: z.string(), data: z.string() }),
      })
      .parse(JSON.parse(r.stdout));
    assert.deepEqual(out.transaction, { to: paymaster, value: '0', data: out.transaction.data });
    assert.equal(out.from, owner, 'simulated as the owner');
  });

  test("a real withdraw needs only the owner's key", async () => {
    const r = await patron([...on('withdraw', '--amount', '0.25'), '--json'], {
      ...PRODUCTION,
      PATRON_DEPLOYER_PRIVATE_KEY: ownerKey,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const out = z
      .object({ dryRun: z.literal(false), txHash: z.string(), after: z.object({ deposit: z.string() }) })
      .parse(JSON.parse(r.stdout));
    assert.equal(out.after.deposit, String(75n * 10n ** 16n));
    assert.deepEqual(r.left, []);
  });

  test('a PATRON_* typo is still refused (78) with the nearest name, and nothing else is asked for', async () => {
    const r = await patron(on('info'), { ...PRODUCTION, PATRON_DEPLOYER_PRIVATE_KY: ownerKey });
    assert.equal(r.code, 78);
    assert.equal(
      r.stderr,
      'patron: Invalid configuration:\n  - PATRON_DEPLOYER_PRIVATE_KY is not a setting Patron knows (did you mean PATRON_DEPLOYER_PRIVATE_KEY?): remove it, or see docs/reference/configuration.md\n',
    );
  });

  test('a command that uses the signer says so, and which settings give it (78)', async () => {
    const r = await patron(['signer', 'address'], PRODUCTION);
    assert.equal(r.code, 78);
    assert.match(
      r.stderr,
      /^patron: Invalid configuration:\n {2}- signer address uses the paymaster signer: a signer is required in production mode: PATRON_SIGNER_KEYSTORE, /,
    );
    assert.doesNotMatch(r.stderr, /PATRON_MASTER_KEY/);
  });
});

describe("dapp list on the service's database", () => {
  test('in production with PATRON_MASTER_KEY (it shows API keys) and no signer', async () => {
    const dataDir = tempDir('patron-data-');
    // What the service's first start leaves: the database, its master key's check value.
    const store = await openStore({ storage: { kind: 'sqlite', file: path.join(dataDir, 'patron.sqlite') } });
    await checkedMasterKey({ config: { masterKeyHex: KEY_HEX, dataDir }, store, now: Date.now });
    await store.close();
    const dev = { PATRON_DATA_DIR: dataDir, PATRON_MASTER_KEY: KEY_HEX };
    await setup(['account', 'create', '--email', 'owner@example.com'], dev);
    const created = z
      .object({ dapp: z.object({ dappId: z.string(), apiKey: z.string() }) })
      .parse(await setup(['dapp', 'create', '--name', 'd', '--chain', '31337'], dev));
    const r = await patron(['dapp', 'list', '--json'], { ...PRODUCTION, ...dev });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const listed = z
      .object({ dapps: z.array(z.object({ dappId: z.string(), apiKey: z.string() })) })
      .parse(JSON.parse(r.stdout));
    assert.deepEqual(listed.dapps, [{ ...listed.dapps[0], ...created.dapp }]);
    assert.deepEqual(r.left, []);
  });
});

describe('run in an empty directory with no configuration, a command leaves it empty', () => {
  test('a storage command refuses (78) naming the database it looked for, and creates none', async () => {
    for (const argv of [
      ['dapp', 'list'],
      ['account', 'create', '--email', 'x@example.com'],
      ['keeper', 'history'],
      ['master-key', 'rotate'],
    ]) {
      const r = await patron(argv);
      assert.equal(r.code, 78, `${argv.join(' ')}: ${r.stderr}`);
      assert.match(
        r.stderr,
        /^patron: Invalid configuration:\n {2}- no database at \/\S+\/data\/patron\.sqlite \(PATRON_DATA_DIR/,
      );
      assert.deepEqual(r.left, [], argv.join(' '));
    }
  });

  test('the chain commands, and the signer commands without the signer key file', async () => {
    const key = { PATRON_DEPLOYER_PRIVATE_KEY: ownerKey };
    const runs: [readonly string[], Record<string, string>, number][] = [
      [on('info'), {}, 0],
      [on('withdraw', '--amount', '0.1', '--dry-run'), {}, 0],
      [on('withdraw', '--amount', '0.1'), key, 0],
      [['signer', 'address'], {}, 78],
      // The signer's address is what the contract is deployed with: the key file the service would make is not made here.
      [['paymaster', 'deploy', '--rpc', rpcUrl], key, 78],
    ];
    for (const [argv, env, code] of runs) {
      const r = await patron(argv, env);
      assert.equal(r.code, code, `${argv.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.deepEqual(r.left, [], argv.join(' '));
    }
    const r = await patron(['signer', 'address']);
    assert.match(r.stderr, /the development default \/\S+\/data\/signer\.key does not exist/);
  });
});
