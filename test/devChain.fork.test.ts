import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Address, type Hex, keccak256, parseEther, parseEventLogs } from 'viem';
import { entryPoint07Abi, toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { SIMPLE_ACCOUNT_ADDRESSES } from '../src/chain/accountFactories.js';
import { devTokenAbi } from '../src/chain/artifacts.js';
import { BICONOMY_SMART_ACCOUNT_V2 } from '../src/chain/biconomySmartAccountV2.js';
import { buildChains } from '../src/chain/buildChains.js';
import { waitForSuccess } from '../src/chain/devClient.js';
import { type DevChain, startDevChain } from '../src/chain/embeddedChain.js';
import { ENTRY_POINT_ADDRESSES } from '../src/chain/entryPoints.js';
import { ForkEndpointError, readForkOrigin } from '../src/chain/forkOrigin.js';
import { loadConfig } from '../src/config/config.js';
import { StartRefusedError } from '../src/errors/StartRefusedError.js';
import { type ChainHttpServer, serveChainOverHttp } from './helpers/chainHttpServer.js';
import { runCliOnStore } from './helpers/cliRun.js';
import { COUNTER_ADDRESS, counterValue, startPatronFixture, testKey } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { hexWire, newSimpleAccountOp, quantity } from './helpers/rpcV07.js';
import { openTestStore } from './helpers/testContext.js';

/**
 * Fork mode (docs/guides/fork-mode.md) without a network: the "remote" chain is another embedded chain served over
 * HTTP on 127.0.0.1, with its own EntryPoints, an operator's paymaster and its deposit, a token balance and a marker
 * contract where Patron would otherwise install one. The fork is taken at a pinned block, then the remote moves on.
 */
const REMOTE_CHAIN_ID = 4242;
/** A runtime no compiler would emit (INVALID then data): where the dev chain installs Simple7702Account v0.9. */
const MARKER_CODE: Hex = '0xfe00c0ffee00f0f0';
const holder: Address = '0x00000000000000000000000000000000000000a1';

let remote: DevChain;
let served: ChainHttpServer;
let cacheDir: string;
let pinned: bigint;
let app: RpcFixture;

const depositOf = (chain: DevChain, paymaster: Address) =>
  chain.client.readContract({
    address: ENTRY_POINT_ADDRESSES['0.7'],
    abi: entryPoint07Abi,
    functionName: 'balanceOf',
    args: [paymaster],
  });
const tokenBalance = (chain: DevChain, token: Address) =>
  chain.client.readContract({ address: token, abi: devTokenAbi, functionName: 'balanceOf', args: [holder] });

async function mint(amount: bigint): Promise<void> {
  const token = remote.tokens[0]?.address;
  assert.ok(token);
  const hash = await remote.client.writeContract({
    address: token,
    abi: devTokenAbi,
    functionName: 'mint',
    args: [holder, amount],
  });
  await waitForSuccess(remote.client, hash, 'mint on the remote');
}

before(async () => {
  cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-fork-cache-'));
  // The remote: a whole dev chain of another operator (its own owner, signer, paymasters), chain 4242.
  remote = await startDevChain({
    chainId: REMOTE_CHAIN_ID,
    signerAddress: privateKeyToAccount(testKey('remote-signer')).address,
    ownerPrivateKey: testKey('remote-owner'),
    depositWei: parseEther('1'),
  });
  await remote.client.setCode({ address: SIMPLE_ACCOUNT_ADDRESSES.simple7702V09, bytecode: MARKER_CODE });
  // Part of Biconomy's set without its factory: the set must be left alone, not completed over the marker.
  await remote.client.setCode({ address: BICONOMY_SMART_ACCOUNT_V2.factory, bytecode: '0x' });
  await remote.client.setCode({ address: BICONOMY_SMART_ACCOUNT_V2.ecdsaOwnershipModule, bytecode: MARKER_CODE });
  await mint(7n);
  pinned = await remote.client.getBlockNumber();
  // After the pinned block: what the fork must not see.
  await mint(9n);
  const hash = await remote.client.writeContract({
    address: ENTRY_POINT_ADDRESSES['0.7'],
    abi: entryPoint07Abi,
    functionName: 'depositTo',
    args: [remote.paymasters['0.7']],
    value: parseEther('5'),
  });
  await waitForSuccess(remote.client, hash, 'deposit on the remote');
  served = await serveChainOverHttp(remote.chain);
  const fx = await startPatronFixture({ fork: { url: served.url, blockNumber: pinned, httpHeaders: {}, cacheDir } });
  app = await startRpcFixture({ fixture: fx });
});

after(async () => {
  await app?.close();
  await served?.close();
  await remote?.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

describe('a fork of a locally served chain', () => {
  test("has the remote's chain id and its state at the pinned block, not later blocks", async () => {
    const fork = app.fx;
    assert.equal(fork.chain.chainId, REMOTE_CHAIN_ID);
    assert.equal(await fork.client.getChainId(), REMOTE_CHAIN_ID);
    assert.equal(fork.fork?.blockNumber, pinned);
    const token = remote.tokens[0]?.address;
    assert.ok(token);
    assert.equal(await tokenBalance(remote, token), 16n, 'the remote moved on');
    assert.equal(await tokenBalance(fork, token), 7n, 'the fork shows the pinned block');
    assert.equal(await depositOf(remote, remote.paymasters['0.7']), parseEther('6'));
    assert.equal(await depositOf(fork, remote.paymasters['0.7']), parseEther('1'), "the operator's deposit then");
  });

  test("keeps the remote's contracts: its EntryPoints' code, and what stands where Patron would install its own", async () => {
    const fork = app.fx;
    const codeHash = async (chain: DevChain, address: Address) => {
      const code = await chain.client.getCode({ address });
      assert.ok(code !== undefined && code !== '0x', `code at ${address}`);
      return keccak256(code);
    };
    for (const version of ['0.6', '0.7', '0.8', '0.9'] as const) {
      const address = ENTRY_POINT_ADDRESSES[version];
      assert.equal(await codeHash(fork, address), await codeHash(remote, address), `EntryPoint v${version}`);
    }
    assert.equal(await fork.client.getCode({ address: SIMPLE_ACCOUNT_ADDRESSES.simple7702V09 }), MARKER_CODE);
    const module = BICONOMY_SMART_ACCOUNT_V2.ecdsaOwnershipModule;
    assert.equal(await fork.client.getCode({ address: module }), MARKER_CODE, "Biconomy's partial set");
    assert.equal(await fork.client.getCode({ address: BICONOMY_SMART_ACCOUNT_V2.factory }), undefined);
  });

  test("deploys Patron's own paymasters beside the remote's, deposited and staked, and funds the dev accounts", async () => {
    const fork = app.fx;
    for (const version of ['0.6', '0.7', '0.8', '0.9'] as const) {
      const ours = fork.paymasters[version];
      assert.notEqual(ours, remote.paymasters[version], `v${version}: not the remote operator's`);
      assert.ok(await fork.client.getCode({ address: ours }), `v${version} deployed on the fork`);
    }
    assert.equal(await remote.client.getCode({ address: fork.paymasters['0.7'] }), undefined, 'only on the fork');
    assert.equal(await depositOf(fork, fork.paymasters['0.7']), parseEther('10'));
    const owner = fork.client.account.address;
    assert.ok((await fork.client.getBalance({ address: owner })) > parseEther('1000'), 'the owner is funded');
    assert.equal(await remote.client.getBalance({ address: owner }), 0n, 'by the fork alone');
  });

  test("runs on the wall clock from the start, whatever the forked block's time", async () => {
    const block = await app.fx.client.getBlock();
    assert.ok(block.number > pinned);
    assert.ok(Math.abs(Number(block.timestamp) - Date.now() / 1000) < 30, `${block.timestamp} is now`);
  });

  test('an op sponsored by Patron (v0.7) is included by handleOps on the fork, paid by its paymaster', async () => {
    const fx = app.fx;
    const { account, op } = await newSimpleAccountOp(fx, '0.7', [{ to: COUNTER_ADDRESS, data: '0x01' }]);
    const res = await app.ctx.app.inject({
      method: 'POST',
      url: `/api/v2/${fx.chain.chainId}/${app.tenant.apiKey}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'pm_sponsorUserOperation',
        params: [hexWire(op), ENTRY_POINT_ADDRESSES['0.7'], { validForSeconds: 120 }],
      }),
    });
    assert.equal(res.statusCode, 200, res.body);
    const p = (res.json() as { result?: Record<string, unknown> }).result ?? {};
    const sponsored = {
      ...op,
      callGasLimit: quantity(p.callGasLimit),
      verificationGasLimit: quantity(p.verificationGasLimit),
      preVerificationGas: quantity(p.preVerificationGas),
      paymaster: p.paymaster as Address,
      paymasterVerificationGasLimit: quantity(p.paymasterVerificationGasLimit),
      paymasterPostOpGasLimit: quantity(p.paymasterPostOpGasLimit),
      paymasterData: p.paymasterData as Hex,
    } as UserOperation<'0.7'>;
    assert.equal(sponsored.paymaster, fx.paymasters['0.7']);
    const signed = {
      ...sponsored,
      signature: await account.signUserOperation({ ...sponsored, chainId: fx.chain.chainId }),
    };
    const counter = await counterValue(fx);
    const hash = await fx.bundler.writeContract({
      address: ENTRY_POINT_ADDRESSES['0.7'],
      abi: entryPoint07Abi,
      functionName: 'handleOps',
      args: [[toPackedUserOperation(signed)], fx.bundler.account.address],
      gas: 5_000_000n,
    });
    const receipt = await fx.client.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, 'success');
    const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
    assert.equal(event?.args.success, true);
    assert.equal(event?.args.paymaster, fx.paymasters['0.7']);
    assert.equal(await counterValue(fx), counter + 1n);
  });
});

test("a fork of an old block is moved to the wall clock: its blocks are not the forked block's time", async () => {
  // A day after the remote's blocks, as for a fork pinned yesterday: EDR alone would carry on from the forked block.
  const dayLater = Date.now() + 86_400_000;
  const fork = await startDevChain({
    signerAddress: privateKeyToAccount(testKey('fork-signer')).address,
    ownerPrivateKey: testKey('fork-owner'),
    depositWei: 0n,
    fork: { url: served.url, blockNumber: pinned, httpHeaders: {}, cacheDir },
    now: () => dayLater,
  });
  try {
    const first = await fork.client.getBlock();
    assert.ok(Math.abs(Number(first.timestamp) - dayLater / 1000) < 30, `${first.timestamp} is the given now`);
    await fork.client.mine({ blocks: 1 });
    assert.ok((await fork.client.getBlock()).timestamp >= first.timestamp, 'later blocks follow it');
  } finally {
    await fork.close();
  }
});

test('a fork whose chain id is also in PATRON_CHAINS is refused at start: one id, two chains', async () => {
  const config = loadConfig({
    PATRON_DATA_DIR: cacheDir,
    PATRON_DEV_CHAIN_FORK_URL: served.url,
    PATRON_CHAINS: JSON.stringify([
      { chainId: REMOTE_CHAIN_ID, rpcUrl: served.url, paymaster: remote.paymasters['0.6'] },
    ]),
  });
  await assert.rejects(
    buildChains({
      config,
      signer: { address: privateKeyToAccount(testKey('fork-signer')).address },
      logger: { info: () => {}, warn: () => {} },
      now: Date.now,
    }),
    (err: unknown) =>
      err instanceof StartRefusedError &&
      err.message ===
        `PATRON_CHAINS[0].chainId: ${REMOTE_CHAIN_ID} is the id of the chain the dev chain forks (PATRON_DEV_CHAIN_FORK_URL); serve one or the other`,
  );
});

test("the CLI takes the fork's chain id for a dApp (asked of the endpoint), and no longer 31337", async () => {
  const { store } = await openTestStore();
  try {
    const cli = (argv: readonly string[]) =>
      runCliOnStore({ store, argv, env: { PATRON_DEV_CHAIN_FORK_URL: served.url } });
    assert.equal((await cli(['account', 'create', '--email', 'fork@example.com'])).code, 0);
    const dapp = (chain: number) =>
      cli(['dapp', 'create', '--name', `on ${chain}`, '--chain', String(chain), '--account', 'fork@example.com']);
    const created = await dapp(REMOTE_CHAIN_ID);
    assert.equal(created.code, 0, created.stderr);
    const refused = await dapp(31337);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /chain 31337 is not served by this deployment; it serves 4242/);
  } finally {
    await store.close();
  }
});

test('PATRON_DEV_CHAIN_FORK_HEADERS reach the endpoint, from Patron and from EDR alike', async () => {
  // A gate in front of the remote that answers 401 without the key, as a provider taking its key in a header does.
  const gate = createServer((req, res) => {
    if (req.headers['x-api-key'] !== 'k') {
      res.statusCode = 401;
      res.end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void fetch(served.url, { method: 'POST', body: Buffer.concat(chunks) })
        .then(async (r) => res.setHeader('content-type', 'application/json').end(await r.text()))
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(gate.address() as AddressInfo).port}`;
  try {
    await assert.rejects(
      readForkOrigin({ url, blockNumber: pinned, httpHeaders: {} }),
      /did not answer eth_chainId: HTTP 401/,
    );
    const fork = await startDevChain({
      signerAddress: privateKeyToAccount(testKey('fork-signer')).address,
      ownerPrivateKey: testKey('fork-owner'),
      depositWei: 0n,
      fork: { url, blockNumber: pinned, httpHeaders: { 'x-api-key': 'k' }, cacheDir },
    });
    try {
      const token = remote.tokens[0]?.address;
      assert.ok(token);
      assert.equal(await tokenBalance(fork, token), 7n, 'state read by EDR through the gate');
    } finally {
      await fork.close();
    }
  } finally {
    gate.closeAllConnections();
    await new Promise<void>((resolve) => gate.close(() => resolve()));
  }
});

describe('a fork endpoint that cannot be forked', () => {
  test('an endpoint that does not answer is a start failure naming it, without its path', async () => {
    await assert.rejects(
      readForkOrigin({ url: 'http://127.0.0.1:9/secret-key', blockNumber: undefined, httpHeaders: {} }),
      (err: unknown) =>
        err instanceof ForkEndpointError &&
        /^the fork endpoint http:\/\/127\.0\.0\.1:9\/… \(PATRON_DEV_CHAIN_FORK_URL\) did not answer eth_chainId: /.test(
          err.message,
        ) &&
        !err.message.includes('secret-key'),
    );
  });

  test("a block beyond the endpoint's latest is refused, naming PATRON_DEV_CHAIN_FORK_BLOCK", async () => {
    const head = await remote.client.getBlockNumber();
    await assert.rejects(
      readForkOrigin({ url: served.url, blockNumber: head + 1000n, httpHeaders: {} }),
      (err: unknown) =>
        err instanceof StartRefusedError &&
        err.message ===
          `PATRON_DEV_CHAIN_FORK_BLOCK=${head + 1000n} is beyond the fork endpoint's latest block, ${head}`,
    );
  });

  test('without a block the fork is taken at the latest one, and the origin says which', async () => {
    const origin = await readForkOrigin({ url: served.url, blockNumber: undefined, httpHeaders: {} });
    assert.equal(origin.chainId, REMOTE_CHAIN_ID);
    assert.equal(origin.blockNumber, await remote.client.getBlockNumber());
    assert.equal(origin.opStack, false);
  });
});
