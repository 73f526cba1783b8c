import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Address, decodeFunctionData, erc20Abi, getAddress, keccak256, stringToHex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { runCli } from '../src/cli/main.js';
import { jsCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { encryptKeystore } from '../src/paymaster/signer/keystore.js';
import { tankTokenFixture } from './helpers/tankToken.js';
import {
  BACKEND,
  createTenant,
  createTestContext,
  TEST_MASTER_KEY,
  type Tenant,
  type TestContext,
  testConfig,
} from './helpers/testContext.js';

/**
 * `patron tank …` (src/cli/tankCommands.ts) against the dev chain served over HTTP: a tank created from a keystore
 * reference (its owner read from the key, its token's decimals from the chain; the address given, as the dev chain
 * has no Nexus factory), listed, shown with its balance, funded by a transfer (or the transfer printed without a key),
 * its alert set, retired; and every refusal: an unserved chain, a token without code, no address where the factory
 * is missing, a bad signer reference, a key that does not open, an address another dApp's tank has.
 */
let ctx: TestContext;
let rpcUrl: string;
let a: Tenant;
let b: Tenant;
let token: Address;
let mint: (to: Address, amount: bigint) => Promise<unknown>;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-cli-tanks-'));
const ownerKey = keccak256(stringToHex('patron-test-tank-owner'));
const owner = privateKeyToAddress(ownerKey);
const funderKey = keccak256(stringToHex('patron-test-tank-funder'));
const funder = privateKeyToAddress(funderKey);
const keystoreFile = path.join(dir, 'tank.json');
const passwordFile = path.join(dir, 'tank.pass');
const signer = JSON.stringify({ kind: 'keystore', path: keystoreFile, password: { file: passwordFile } });
const TANK = '0x00000000000000000000000000000000000a11ce';
const env = { PATRON_DATA_DIR: dir, LOG_LEVEL: 'silent' };

before(async () => {
  const base = testConfig();
  ctx = await createTestContext({ config: { paymaster: { ...base.paymaster, devChain: true } } });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  rpcUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}/chain/31337`;
  a = await createTenant(ctx.deps);
  b = await createTenant(ctx.deps);
  const fx = await tankTokenFixture(ctx.deps, 'cli');
  token = fx.token;
  mint = fx.mint;
  await fx.dev.setBalance({ address: funder, value: 10n ** 20n });
  await mint(funder, 1_000_000_000n);
  const keystore = encryptKeystore({
    privateKey: Buffer.from(ownerKey.slice(2), 'hex'),
    password: 'tank password',
    address: owner,
    crypto: jsCryptoBackend,
    scryptN: 2 ** 12,
  });
  fs.writeFileSync(keystoreFile, JSON.stringify(keystore));
  fs.writeFileSync(passwordFile, 'tank password\n');
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
  return { code, json: JSON.parse(stdout || stderr) as Record<string, unknown> };
}
const ok = async (argv: string[], extraEnv: Record<string, string> = {}) => {
  const r = await cli(argv, extraEnv);
  assert.equal(r.code, 0, JSON.stringify(r.json));
  return r.json;
};
const refused = async (argv: string[], message: RegExp) => {
  const r = await cli(argv);
  assert.notEqual(r.code, 0, JSON.stringify(r.json));
  assert.match((r.json.error as { message: string }).message, message);
};
const create = (over: Record<string, string> = {}) => {
  const o = { dapp: a.dappId, chain: '31337', token, signer, address: TANK, rpc: rpcUrl, ...over };
  return Object.entries(o).flatMap(([k, v]) => (v === '' ? [] : [`--${k}`, v]));
};

describe(`patron tank (${BACKEND})`, () => {
  let id: string;

  test('create: owner from the keystore, decimals from the chain, the given address recorded as given', async () => {
    const t = await ok(['tank', 'create', ...create({ 'mee-version': '2.2.1', 'low-balance': '10.5' })]);
    id = String(t.id);
    assert.match(id, /^tank_[0-9a-f]{24}$/);
    assert.equal(t.owner, owner.toLowerCase());
    assert.equal(t.address, TANK);
    assert.equal(t.token, token.toLowerCase());
    assert.equal(t.tokenDecimals, 6);
    assert.equal(t.meeVersion, '2.2.1');
    assert.equal(t.lowBalance, '10500000');
    assert.equal(t.addressComputed, false);
    assert.equal(t.signerKind, 'keystore');
    const stored = await ctx.deps.store.meeTanks.get(id);
    assert.deepEqual(stored?.signer, { kind: 'keystore', path: keystoreFile, password: { file: passwordFile } });
    const row = JSON.stringify(stored, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    assert.equal(row.includes('tank password'), false, 'no secret is stored');
  });

  test('list and show: the balance read on chain, below the alert until funded', async () => {
    const all = (await ok(['tank', 'list'])).tanks as { id: string }[];
    assert.ok(all.some((t) => t.id === id));
    assert.deepEqual(((await ok(['tank', 'list', '--dapp', b.dappId])).tanks as unknown[]).length, 0);
    const shown = await ok(['tank', 'show', '--id', id, '--rpc', rpcUrl]);
    assert.deepEqual([shown.balance, shown.belowLowBalance], ['0', true]);
  });

  test('fund without a key prints the transfer; with one it sends it and the balance moves', async () => {
    const printed = await ok(['tank', 'fund', '--id', id, '--amount', '12.25', '--rpc', rpcUrl]);
    assert.equal(printed.sent, false);
    const transfer = printed.transfer as { to: string; data: `0x${string}` };
    assert.equal(transfer.to, token.toLowerCase());
    assert.deepEqual(decodeFunctionData({ abi: erc20Abi, data: transfer.data }).args, [getAddress(TANK), 12_250_000n]);

    const sent = await ok(['tank', 'fund', '--id', id, '--amount', '12.25', '--rpc', rpcUrl], {
      PATRON_DEPLOYER_PRIVATE_KEY: funderKey,
    });
    assert.deepEqual([sent.sent, sent.from, sent.balance], [true, funder, '12250000']);
    const shown = await ok(['tank', 'show', '--id', id, '--rpc', rpcUrl]);
    assert.deepEqual([shown.balance, shown.belowLowBalance], ['12250000', false]);
    await refused(['tank', 'fund', '--id', id, '--amount', '1.0000001', '--rpc', rpcUrl], /at most 6 decimals/);
  });

  test('alert sets and clears the threshold in whole tokens', async () => {
    assert.equal((await ok(['tank', 'alert', '--id', id, '--low-balance', '100'])).lowBalance, '100000000');
    assert.equal((await ok(['tank', 'alert', '--id', id, '--clear'])).lowBalance, null);
    await refused(['tank', 'alert', '--id', id], /give --low-balance AMOUNT or --clear/);
  });

  test('refusals, each naming what is wrong; nothing is stored', async () => {
    const before = (await ctx.deps.store.meeTanks.list()).length;
    const cases: [Record<string, string>, RegExp][] = [
      [{ chain: '5' }, /chain 5 is not served by this Patron/],
      [{ token: '0x00000000000000000000000000000000000000e7' }, /has no code on chain 31337: not an ERC-20/],
      [{ address: '' }, /Nexus factory has no code on chain 31337.*give it \(--address\)/],
      [{ signer: '{"kind":"raw","privateKey":"0x01"}' }, /--signer: signer must be/],
      [
        { signer: JSON.stringify({ kind: 'keystore', path: 'tank.json', password: { file: passwordFile } }) },
        /must be an absolute path/,
      ],
      [
        {
          signer: JSON.stringify({ kind: 'keystore', path: keystoreFile, password: { file: path.join(dir, 'none') } }),
        },
        /cannot read the keystore password file .*ENOENT/,
      ],
      [{ 'mee-version': '1.0.0' }, /MEE version 1.0.0 is not one a gas tank can use/],
      [{ dapp: 'no-such-dapp' }, /No dApp no-such-dapp/],
      [
        { 'low-balance': '0.0000001' },
        /--low-balance must be an amount of the token \(e\.g\. 12\.5\), at most 6 decimals/,
      ],
    ];
    for (const [over, message] of cases) await refused(['tank', 'create', ...create(over)], message);
    fs.writeFileSync(path.join(dir, 'wrong.pass'), 'not the password');
    await refused(
      [
        'tank',
        'create',
        ...create({
          signer: JSON.stringify({
            kind: 'keystore',
            path: keystoreFile,
            password: { file: path.join(dir, 'wrong.pass') },
          }),
        }),
      ],
      /keystore signer cannot be opened: .*tank\.json: wrong keystore password \(MAC mismatch\)$/,
    );
    assert.equal((await ctx.deps.store.meeTanks.list()).length, before);
  });

  test('another dApp cannot register a tank address already registered, whatever its case', async () => {
    await refused(
      ['tank', 'create', ...create({ dapp: b.dappId, address: TANK.toUpperCase().replace('0X', '0x') })],
      /a gas tank at 0x0+a11ce on chain 31337 is already registered/,
    );
    assert.equal((await ctx.deps.store.meeTanks.listForDapp(b.dappId)).length, 0);
  });

  test('retire: the tank stays listed as retired and can no longer be funded', async () => {
    const r = await ok(['tank', 'retire', '--id', id]);
    assert.equal(r.status, 'retired');
    await refused(['tank', 'fund', '--id', id, '--amount', '1', '--rpc', rpcUrl], /is retired/);
    await refused(['tank', 'show', '--id', 'tank_nope'], /No gas tank tank_nope/);
  });
});
