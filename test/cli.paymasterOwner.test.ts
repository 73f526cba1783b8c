import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Address, createPublicClient, createWalletClient, http, keccak256, stringToHex } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import { privateKeyToAccount, privateKeyToAddress } from 'viem/accounts';
import { devTokenAbi, loadDevContractArtifact, patronPaymasterAbi } from '../src/chain/artifacts.js';
import { runCli } from '../src/cli/main.js';
import { jsCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { encryptKeystore } from '../src/paymaster/signer/keystore.js';
import { createTestContext, TEST_MASTER_KEY, type TestContext, testConfig } from './helpers/testContext.js';

/**
 * The paymaster owner's operations (issue 22) through the CLI against the dev chain served over HTTP: each
 * changes the chain as it says, --dry-run changes nothing, and a key that is not the owner gets one decoded line.
 */
let ctx: TestContext;
let rpcUrl: string;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-cli-owner-'));
const ownerKey = keccak256(stringToHex('patron-test-owner'));
const strangerKey = keccak256(stringToHex('patron-test-stranger'));
const owner = privateKeyToAddress(ownerKey);
const stranger = privateKeyToAddress(strangerKey);
const recipient = privateKeyToAddress(keccak256(stringToHex('patron-test-recipient')));
const env = {
  PATRON_DATA_DIR: dir,
  PATRON_DEV_CHAIN: 'false',
  PATRON_DEPLOYER_PRIVATE_KEY: ownerKey,
  PATRON_SIGNER_PRIVATE_KEY: keccak256(stringToHex('patron-test-cli-signer')),
};
const NOT_OWNER = `the key ${stranger} is not the paymaster's owner (owner is ${owner})`;

async function rpc(method: string, params: unknown[]) {
  const res = await fetch(rpcUrl, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await res.json()) as { result: unknown }).result;
}

before(async () => {
  const base = testConfig();
  ctx = await createTestContext({ config: { paymaster: { ...base.paymaster, devChain: true } } });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  rpcUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}/chain/31337`;
  for (const a of [owner, stranger]) await rpc('hardhat_setBalance', [a, '0x56BC75E2D63100000']);
});
after(async () => {
  await ctx.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function cli(argv: string[], extraEnv: Record<string, string> = {}) {
  let stdout = '';
  const code = await runCli({
    argv: [...argv, '--json'],
    env: { ...env, ...extraEnv },
    io: { stdout: (t) => (stdout += t), stderr: () => {} },
    store: ctx.deps.store,
    masterKey: TEST_MASTER_KEY,
  });
  return { code, json: JSON.parse(stdout) as Record<string, unknown> };
}

const ok = async (argv: string[], extraEnv: Record<string, string> = {}) => {
  const r = await cli(argv, extraEnv);
  assert.equal(r.code, 0, JSON.stringify(r.json));
  return r.json;
};
const failure = async (argv: string[], extraEnv: Record<string, string> = {}) => {
  const r = await cli(argv, extraEnv);
  assert.equal(r.code, 1, JSON.stringify(r.json));
  return String((r.json.error as { message: string }).message);
};

const client = () => createPublicClient({ transport: http(rpcUrl) });

async function onChain(paymaster: Address) {
  const c = client();
  const read = <F extends 'signers' | 'feeReceiver' | 'entryPoint'>(functionName: F) =>
    c.readContract({ address: paymaster, abi: patronPaymasterAbi, functionName });
  const info = await c.readContract({
    address: (await read('entryPoint')) as Address,
    abi: entryPoint06Abi,
    functionName: 'getDepositInfo',
    args: [paymaster],
  });
  return {
    ...info,
    signers: (await read('signers')) as readonly Address[],
    feeReceiver: (await read('feeReceiver')) as Address,
  };
}

async function deploy(version: string): Promise<Address> {
  const deployed = await ok(['paymaster', 'deploy', '--rpc', rpcUrl, '--entry-point-version', version]);
  const paymaster = deployed.paymaster as Address;
  await ok(['paymaster', 'deposit', '--rpc', rpcUrl, '--paymaster', paymaster, '--amount', '2']);
  return paymaster;
}

const asStranger = { PATRON_DEPLOYER_PRIVATE_KEY: strangerKey };

for (const version of ['0.6', '0.7', '0.9']) {
  describe(`EntryPoint v${version}`, () => {
    let paymaster: Address;
    let on: (command: string, ...rest: string[]) => string[];
    before(async () => {
      paymaster = await deploy(version);
      on = (command, ...rest) => ['paymaster', command, '--rpc', rpcUrl, '--paymaster', paymaster, ...rest];
    });

    test('a key that is not the owner gets the decoded OwnableUnauthorizedAccount, with or without --dry-run', async () => {
      const token = `0x${'3'.repeat(40)}`;
      const commands = [
        on('withdraw', '--amount', '1'),
        on('stake', '--amount', '0.1', '--unstake-delay', '60'),
        on('unlock-stake'),
        on('withdraw-stake'),
        on('add-signer', '--signer', recipient),
        on('remove-signer', '--signer', recipient),
        on('set-fee-receiver', '--receiver', recipient),
      ];
      for (const argv of commands) {
        for (const dry of [[], ['--dry-run']]) {
          const message = await failure([...argv, ...dry], asStranger);
          assert.ok(message.endsWith(`reverts: ${NOT_OWNER}`), `${argv[1]} ${dry.join('')}: ${message}`);
        }
      }
      // A token that is no ERC-20 is refused before any call.
      assert.match(await failure(on('withdraw-tokens', '--token', token, '--amount', '1')), /is not an ERC-20/);
      const state = await onChain(paymaster);
      assert.equal(state.deposit, 2n * 10n ** 18n);
      assert.equal(state.stake, 0n);
      assert.equal(state.feeReceiver, owner);
    });

    test('withdraw: --dry-run predicts, the real run moves the deposit to --to', async () => {
      const balance = () => client().getBalance({ address: recipient });
      const start = await balance();
      const dry = await ok(on('withdraw', '--amount', '0.5', '--to', recipient, '--dry-run'));
      assert.equal(dry.dryRun, true);
      assert.equal(dry.function, 'withdrawTo');
      assert.equal(dry.entryPointVersion, version);
      assert.equal(dry.from, owner);
      assert.deepEqual(dry.before, { deposit: '2000000000000000000', toBalance: start.toString() });
      assert.deepEqual(dry.after, { deposit: '1500000000000000000', toBalance: (start + 5n * 10n ** 17n).toString() });
      assert.equal((await onChain(paymaster)).deposit, 2n * 10n ** 18n, 'a dry run sends nothing');
      assert.equal(await balance(), start);

      const done = await ok(on('withdraw', '--amount', '0.5', '--to', recipient));
      assert.match(String(done.txHash), /^0x[0-9a-f]{64}$/);
      assert.deepEqual(done.after, dry.after);
      assert.equal((await onChain(paymaster)).deposit, 15n * 10n ** 17n);
      assert.equal(await balance(), start + 5n * 10n ** 17n);

      const tooMuch = await failure(on('withdraw', '--amount', '9'));
      assert.match(
        tooMuch,
        version === '0.9'
          ? /withdrawTo on 0x[0-9a-fA-F]{40} reverts: the deposit is 1\.5 ETH, less than the 9 ETH asked$/
          : /reverts: the EntryPoint refused: "Withdraw amount too large" \(the deposit is smaller than --amount/,
      );
    });

    test('stake, unlock-stake, withdraw-stake: dry runs, the EntryPoint refusals decoded, the stake back', async () => {
      const dry = await ok(on('stake', '--amount', '0.3', '--unstake-delay', '100', '--dry-run'));
      assert.deepEqual(dry.after, { stake: '300000000000000000', staked: true, unstakeDelay: 100 });
      assert.equal((await onChain(paymaster)).staked, false, 'a dry run sends nothing');
      assert.match(await failure(on('stake', '--amount', '0.3')), /--unstake-delay SECONDS is required/);

      const staked = await ok(on('stake', '--amount', '0.3', '--unstake-delay', '100'));
      assert.deepEqual(staked.after, { stake: '300000000000000000', staked: true, unstakeDelay: 100 });
      let state = await onChain(paymaster);
      assert.deepEqual([state.stake, state.staked, state.unstakeDelaySec], [3n * 10n ** 17n, true, 100]);

      const early = await failure(on('withdraw-stake', '--to', recipient));
      assert.match(
        early,
        version === '0.9'
          ? /reverts: the stake is still locked: run `patron paymaster unlock-stake` first/
          : /reverts: the EntryPoint refused: "must call unlockStake\(\) first" \(run `patron paymaster unlock-stake`/,
      );
      await ok(on('unlock-stake', '--dry-run'));
      assert.equal((await onChain(paymaster)).staked, true, 'a dry run sends nothing');
      const unlocked = await ok(on('unlock-stake'));
      state = await onChain(paymaster);
      assert.equal(state.staked, false);
      assert.deepEqual(unlocked.after, { staked: false, withdrawTime: state.withdrawTime });
      const notDue = await failure(on('withdraw-stake', '--to', recipient));
      assert.match(
        notDue,
        version === '0.9'
          ? /reverts: the stake can be withdrawn from \d{4}-\d\d-\d\dT.* on \(the chain's time is /
          : /reverts: the EntryPoint refused: "Stake withdrawal is not due"/,
      );

      await rpc('evm_increaseTime', [101]);
      await rpc('evm_mine', []);
      const start = await client().getBalance({ address: recipient });
      const dryOut = await ok(on('withdraw-stake', '--to', recipient, '--dry-run'));
      assert.deepEqual(dryOut.after, { stake: '0', toBalance: (start + 3n * 10n ** 17n).toString() });
      assert.equal((await onChain(paymaster)).stake, 3n * 10n ** 17n, 'a dry run sends nothing');
      await ok(on('withdraw-stake', '--to', recipient));
      assert.equal((await onChain(paymaster)).stake, 0n);
      assert.equal(await client().getBalance({ address: recipient }), start + 3n * 10n ** 17n);
    });

    test('add-signer, remove-signer and set-fee-receiver: dry run, then the new value on chain; reverts decoded', async () => {
      const [serviceSigner] = (await onChain(paymaster)).signers;
      assert.ok(serviceSigner !== undefined);
      const dry = await ok(on('add-signer', '--signer', recipient, '--dry-run'));
      assert.deepEqual(dry.before, { accepted: false, signers: 1 });
      assert.deepEqual(dry.after, { accepted: true, signers: 2 });
      assert.deepEqual((await onChain(paymaster)).signers, [serviceSigner], 'a dry run sends nothing');
      await ok(on('add-signer', '--signer', recipient));
      assert.deepEqual((await onChain(paymaster)).signers, [serviceSigner, recipient]);
      assert.match(
        await failure(on('add-signer', '--signer', recipient)),
        /reverts: 0x[0-9a-fA-F]{40} is already one of the paymaster's signers/,
      );
      const info = await ok(['paymaster', 'info', '--rpc', rpcUrl, '--paymaster', paymaster]);
      assert.deepEqual(info.signers, [serviceSigner, recipient]);

      await ok(on('remove-signer', '--signer', serviceSigner));
      assert.deepEqual((await onChain(paymaster)).signers, [recipient]);
      assert.match(
        await failure(on('remove-signer', '--signer', serviceSigner)),
        /reverts: 0x[0-9a-fA-F]{40} is not one of the paymaster's signers/,
      );
      // The last key only on purpose: without it the paymaster refuses every sponsorship.
      assert.match(
        await failure(on('remove-signer', '--signer', recipient)),
        /is the paymaster's only signer: removing it stops every sponsorship; .*--emergency-stop/,
      );
      assert.deepEqual((await onChain(paymaster)).signers, [recipient]);
      await ok(on('remove-signer', '--signer', recipient, '--emergency-stop'));
      assert.deepEqual((await onChain(paymaster)).signers, []);

      await ok(on('set-fee-receiver', '--receiver', recipient, '--dry-run'));
      assert.equal((await onChain(paymaster)).feeReceiver, owner, 'a dry run sends nothing');
      const done = await ok(on('set-fee-receiver', '--receiver', recipient));
      assert.deepEqual(done.after, { feeReceiver: recipient });
      assert.equal((await onChain(paymaster)).feeReceiver, recipient);

      const zero = await failure(on('set-fee-receiver', '--receiver', `0x${'0'.repeat(40)}`));
      assert.match(zero, /^setFeeReceiver on 0x[0-9a-fA-F]{40} reverts: an address argument is the zero address/);
    });

    test('withdraw-tokens: the tokens the paymaster holds, in the token unit', async () => {
      const wallet = createWalletClient({ account: privateKeyToAccount(ownerKey), transport: http(rpcUrl) });
      const hash = await wallet.deployContract({
        abi: devTokenAbi,
        bytecode: loadDevContractArtifact('DevToken').bytecode,
        args: ['Dev USD', 'DUSD', 6],
        chain: null,
      });
      const token = (await client().waitForTransactionReceipt({ hash })).contractAddress as Address;
      await client().waitForTransactionReceipt({
        hash: await wallet.writeContract({
          address: token,
          abi: devTokenAbi,
          functionName: 'mint',
          args: [paymaster, 5_000_000n],
          chain: null,
        }),
      });
      const balance = (a: Address) =>
        client().readContract({ address: token, abi: devTokenAbi, functionName: 'balanceOf', args: [a] });
      const dry = await ok(on('withdraw-tokens', '--token', token, '--amount', '1.25', '--to', recipient, '--dry-run'));
      assert.deepEqual(dry.after, { paymasterBalance: '3750000', toBalance: '1250000' });
      assert.equal(await balance(paymaster), 5_000_000n, 'a dry run sends nothing');
      const message = await failure(on('withdraw-tokens', '--token', token, '--amount', '1'), asStranger);
      assert.ok(message.endsWith(NOT_OWNER), message);
      await ok(on('withdraw-tokens', '--token', token, '--amount', '1.25', '--to', recipient));
      assert.equal(await balance(recipient), 1_250_000n);
      const all = await ok(on('withdraw-tokens', '--token', token, '--amount', 'all'));
      assert.deepEqual(all.after, { paymasterBalance: '0', toBalance: '3750000' });
      assert.equal(await balance(owner), 3_750_000n);
      const tooMuch = await failure(on('withdraw-tokens', '--token', token, '--amount', '1'));
      assert.match(tooMuch, /reverts: the paymaster holds 0 of the token, less than the 1000000 asked/);
    });

    test("a dry run prints the owner's transaction; sent as printed from the owner's own wallet, it does what was predicted", async () => {
      const extra = privateKeyToAddress(keccak256(stringToHex(`patron-test-extra-signer-${version}`)));
      const dry = await ok(on('add-signer', '--signer', extra, '--dry-run'));
      const tx = dry.transaction as { to: Address; value: string; data: `0x${string}` };
      assert.equal(tx.to, paymaster);
      assert.equal(tx.value, '0');
      // The owner is a key here, not a contract: no Safe batch.
      assert.equal(dry.safeTransactionBuilder, undefined);
      assert.ok(!(await onChain(paymaster)).signers.includes(extra), 'the dry run sent nothing');
      // Signed elsewhere (a hardware wallet, a multisig's proposer): the bytes are the whole transaction.
      const wallet = createWalletClient({ account: privateKeyToAccount(ownerKey), transport: http(rpcUrl) });
      const hash = await wallet.sendTransaction({ to: tx.to, data: tx.data, value: BigInt(tx.value), chain: null });
      assert.equal((await client().waitForTransactionReceipt({ hash })).status, 'success');
      assert.ok((await onChain(paymaster)).signers.includes(extra));

      // An owner with code (a Safe): the dry run adds the batch file Safe{Wallet}'s Transaction Builder imports.
      await rpc('hardhat_setCode', [owner, '0x00']);
      try {
        const proposed = await ok(on('set-fee-receiver', '--receiver', extra, '--dry-run'));
        const batch = proposed.safeTransactionBuilder as {
          version: string;
          chainId: string;
          transactions: { to: string; value: string; data: string }[];
        };
        assert.equal(batch.version, '1.0');
        assert.equal(batch.chainId, '31337');
        assert.equal(batch.transactions.length, 1);
        const [only] = batch.transactions;
        assert.deepEqual({ to: only?.to, value: only?.value, data: only?.data }, proposed.transaction);
      } finally {
        await rpc('hardhat_setCode', [owner, '0x']);
      }
    });
  });
}

test('the key from an encrypted keystore (--keystore, password in PATRON_KEYSTORE_PASSWORD); a dry run without a key', async () => {
  const paymaster = await deploy('0.6');
  const file = path.join(dir, 'owner.keystore.json');
  const keystore = encryptKeystore({
    privateKey: Buffer.from(ownerKey.slice(2), 'hex'),
    password: 'owner password',
    address: owner,
    crypto: jsCryptoBackend,
    scryptN: 2 ** 10,
  });
  fs.writeFileSync(file, JSON.stringify(keystore));
  const argv = ['paymaster', 'set-fee-receiver', '--rpc', rpcUrl, '--paymaster', paymaster, '--receiver', recipient];
  const noKey = { PATRON_DEPLOYER_PRIVATE_KEY: '' };

  const wrong = await failure([...argv, '--keystore', file], { ...noKey, PATRON_KEYSTORE_PASSWORD: 'not it' });
  assert.equal(wrong, `keystore ${file}: wrong keystore password (MAC mismatch)`);
  const both = await failure([...argv, '--keystore', file], { PATRON_KEYSTORE_PASSWORD: 'owner password' });
  assert.equal(both, 'give one key: --keystore, --pkcs11-key, --kms-key or PATRON_DEPLOYER_PRIVATE_KEY, not several');
  assert.match(
    await failure(argv, noKey),
    /^PATRON_DEPLOYER_PRIVATE_KEY \(a funded key, 64 hex characters\), --keystore FILE .*, --pkcs11-key LABEL or --kms-key KEY_ID is required$/,
  );

  // Without a key a dry run simulates as the owner: planning before the key is at hand.
  const planned = await ok([...argv, '--dry-run'], noKey);
  assert.equal(planned.from, owner);

  const done = await ok([...argv, '--keystore', file], { ...noKey, PATRON_KEYSTORE_PASSWORD: 'owner password' });
  assert.equal(done.from, owner);
  assert.equal((await onChain(paymaster)).feeReceiver, recipient);
});

test('clear errors: no contract at --paymaster, a version that does not match, a bad amount', async () => {
  const paymaster = await deploy('0.7');
  const nothing = `0x${'4'.repeat(40)}`;
  assert.match(
    await failure(['paymaster', 'unlock-stake', '--rpc', rpcUrl, '--paymaster', nothing]),
    /^No contract at --paymaster 0x4{40} on chain 31337$/,
  );
  const base = ['--rpc', rpcUrl, '--paymaster', paymaster];
  assert.match(
    await failure(['paymaster', 'unlock-stake', ...base, '--entry-point-version', '0.6']),
    /^--entry-point-version 0\.6 does not match the paymaster's EntryPoint 0x0000000071727De22E5E9d8BAf0edAc6f37da032 \(v0\.7\)$/,
  );
  assert.equal(await failure(['paymaster', 'withdraw', ...base, '--amount', 'lots']), '--amount is in ether, e.g. 0.5');
  assert.match(
    await failure(['paymaster', 'stake', ...base, '--amount', '1000', '--unstake-delay', '60']),
    /^0x[0-9a-fA-F]{40} holds [\d.]+ ETH, less than the 1000 ETH addStake sends \(plus gas\)$/,
  );
  const plain = await runCli({
    argv: ['paymaster', 'withdraw', ...base, '--amount', '1', '--to', recipient, '--dry-run'],
    env,
    io: {
      stdout: (t) => assert.match(t, /^Dry run, nothing sent: withdraw 1 ETH of the EntryPoint deposit to /),
      stderr: () => {},
    },
    store: ctx.deps.store,
    masterKey: TEST_MASTER_KEY,
  });
  assert.equal(plain, 0);
});
