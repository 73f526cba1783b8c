import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { bytesToHex, keccak256, stringToHex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { runCli } from '../src/cli/main.js';
import { jsCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { loadSignerKey } from '../src/paymaster/signer/paymasterSigner.js';
import { createTestContext, TEST_MASTER_KEY, type TestContext, testConfig } from './helpers/testContext.js';

/** The operator commands against a real JSON-RPC endpoint: the dev chain served over HTTP by Patron itself. */
let ctx: TestContext;
let rpcUrl: string;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-cli-pm-'));
const deployerKey = keccak256(stringToHex('patron-test-deployer'));
const signerKey = keccak256(stringToHex('patron-test-cli-signer'));
const env = {
  PATRON_DATA_DIR: dir,
  PATRON_DEV_CHAIN: 'false',
  PATRON_DEPLOYER_PRIVATE_KEY: deployerKey,
  PATRON_SIGNER_PRIVATE_KEY: signerKey,
};

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
      params: [privateKeyToAddress(deployerKey), '0x56BC75E2D63100000'],
    }),
  });
});
after(async () => {
  await ctx.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function cli(argv: string[], extraEnv: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv: [...argv, '--json'],
    env: { ...env, ...extraEnv },
    io: { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) },
    store: ctx.deps.store,
    masterKey: TEST_MASTER_KEY,
  });
  return { code, json: JSON.parse(stdout) as Record<string, unknown>, stderr };
}

test('deploy, deposit and info on a chain reached over HTTP', async () => {
  const deployed = await cli(['paymaster', 'deploy', '--rpc', rpcUrl]);
  assert.equal(deployed.code, 0, JSON.stringify(deployed.json));
  const paymaster = String(deployed.json.paymaster);
  assert.match(paymaster, /^0x[0-9a-fA-F]{40}$/);
  assert.equal(deployed.json.signer, privateKeyToAddress(signerKey), 'defaults to the configured signer');
  assert.equal(deployed.json.owner, privateKeyToAddress(deployerKey), 'defaults to the deployer');

  const deposited = await cli(['paymaster', 'deposit', '--rpc', rpcUrl, '--paymaster', paymaster, '--amount', '1.5']);
  assert.equal(deposited.code, 0, JSON.stringify(deposited.json));
  assert.equal(deposited.json.deposit, '1500000000000000000');

  const info = await cli(['paymaster', 'info', '--rpc', rpcUrl, '--paymaster', paymaster]);
  assert.equal(info.code, 0, JSON.stringify(info.json));
  assert.deepEqual(
    { ...info.json },
    {
      chainId: 31337,
      paymaster,
      entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789',
      owner: privateKeyToAddress(deployerKey),
      signers: [privateKeyToAddress(signerKey)],
      // The owner receives token-mode charges until it names another receiver.
      feeReceiver: privateKeyToAddress(deployerKey),
      deposit: '1500000000000000000',
      stake: '0',
      staked: false,
      unstakeDelaySec: 0,
    },
  );
});

test('each EntryPoint version: deploy, fund and read PatronPaymasterV07 for v0.7, v0.8 and v0.9', async () => {
  const canonical = {
    '0.7': '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
    '0.8': '0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108',
    '0.9': '0x433709009B8330FDa32311DF1C2AFA402eD8D009',
  } as const;
  for (const version of ['0.7', '0.8', '0.9'] as const) {
    const deployed = await cli(['paymaster', 'deploy', '--rpc', rpcUrl, '--entry-point-version', version]);
    assert.equal(deployed.code, 0, JSON.stringify(deployed.json));
    assert.equal(deployed.json.contract, 'PatronPaymasterV07');
    assert.equal(deployed.json.entryPointVersion, version);
    assert.equal(deployed.json.entryPoint, canonical[version]);
    const paymaster = String(deployed.json.paymaster);
    const deposited = await cli([
      'paymaster',
      'deposit',
      '--rpc',
      rpcUrl,
      '--paymaster',
      paymaster,
      '--amount',
      '0.25',
    ]);
    assert.equal(deposited.json.deposit, '250000000000000000', JSON.stringify(deposited.json));
    const info = await cli(['paymaster', 'info', '--rpc', rpcUrl, '--paymaster', paymaster]);
    assert.equal(info.json.entryPoint, canonical[version]);
    assert.deepEqual(info.json.signers, [privateKeyToAddress(signerKey)]);
    assert.equal(info.json.deposit, '250000000000000000');
  }
  const bad = await cli(['paymaster', 'deploy', '--rpc', rpcUrl, '--entry-point-version', '0.5']);
  assert.deepEqual(bad.json, { error: { message: '--entry-point-version must be 0.6, 0.7, 0.8 or 0.9' } });
});

test('clear errors: no deployer key, a bad amount, no EntryPoint at the address', async () => {
  const noKey = await cli(['paymaster', 'deploy', '--rpc', rpcUrl], { PATRON_DEPLOYER_PRIVATE_KEY: '' });
  assert.equal(noKey.code, 1);
  assert.deepEqual(noKey.json, {
    error: {
      message:
        'PATRON_DEPLOYER_PRIVATE_KEY (a funded key, 64 hex characters), --keystore FILE (password in PATRON_KEYSTORE_PASSWORD), --pkcs11-key LABEL or --kms-key KEY_ID is required',
    },
  });
  const amount = await cli([
    'paymaster',
    'deposit',
    '--rpc',
    rpcUrl,
    '--paymaster',
    `0x${'1'.repeat(40)}`,
    '--amount',
    'lots',
  ]);
  assert.deepEqual(amount.json, { error: { message: '--amount is in ether, e.g. 0.5' } });
  const noEp = await cli(['paymaster', 'deploy', '--rpc', rpcUrl, '--entry-point', `0x${'2'.repeat(40)}`]);
  assert.match(String((noEp.json.error as { message: string }).message), /^No contract at the EntryPoint address/);
});

test('signer address and an encrypted keystore that decrypts to the same key', async () => {
  const address = await cli(['signer', 'address']);
  assert.deepEqual(address.json, { signer: privateKeyToAddress(signerKey), source: 'privateKey' });
  const out = path.join(dir, 'signer.keystore.json');
  const short = await cli(['signer', 'keystore', '--out', out], { PATRON_KEYSTORE_PASSWORD: 'short' });
  assert.equal(short.code, 1);
  const made = await cli(['signer', 'keystore', '--out', out], { PATRON_KEYSTORE_PASSWORD: 'a long password' });
  assert.equal(made.code, 0, JSON.stringify(made.json));
  assert.equal(fs.statSync(out).mode & 0o777, 0o600);
  const key = loadSignerKey({ kind: 'keystore', file: out, password: 'a long password' }, jsCryptoBackend);
  assert.equal(bytesToHex(key), signerKey);
  const again = await cli(['signer', 'keystore', '--out', out], { PATRON_KEYSTORE_PASSWORD: 'a long password' });
  assert.equal(again.code, 1, 'never overwrites a key file');
});

test('production: `signer keystore --generate` writes only an encrypted keystore, before any config or database', async () => {
  const prodDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-cli-prod-'));
  try {
    const out = path.join(prodDir, 'signer.keystore.json');
    let stdout = '';
    // No PATRON_MASTER_KEY, no signer, no database: production config would refuse all three.
    const code = await runCli({
      argv: ['signer', 'keystore', '--generate', '--out', out, '--json'],
      env: { PATRON_PRODUCTION: 'true', PATRON_DATA_DIR: prodDir, PATRON_KEYSTORE_PASSWORD: 'a long password' },
      io: { stdout: (t) => (stdout += t), stderr: (t) => (stdout += t) },
    });
    assert.equal(code, 0, stdout);
    const made = JSON.parse(stdout) as { keystore: string; signer: string };
    assert.deepEqual(fs.readdirSync(prodDir), ['signer.keystore.json'], 'nothing else written: no signer.key');
    assert.equal(fs.statSync(out).mode & 0o777, 0o600);
    const key = loadSignerKey({ kind: 'keystore', file: out, password: 'a long password' }, jsCryptoBackend);
    assert.equal(privateKeyToAddress(bytesToHex(key)), made.signer);
    assert.ok(!fs.readFileSync(out, 'utf8').includes(bytesToHex(key).slice(2)), 'the key is not in the file in clear');
    const again = await runCli({
      argv: ['signer', 'keystore', '--generate', '--out', out],
      env: { PATRON_PRODUCTION: 'true', PATRON_KEYSTORE_PASSWORD: 'a long password' },
      io: { stdout: () => undefined, stderr: (t) => (stdout = t) },
    });
    assert.equal(again, 1);
    assert.match(stdout, /exists: a key file is never overwritten/);
  } finally {
    fs.rmSync(prodDir, { recursive: true, force: true });
  }
});
