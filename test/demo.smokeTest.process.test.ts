import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type Address, getAddress, parseEther } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import { patronPaymasterV07Abi } from '../src/chain/deployPatronPaymasterV07.js';
import { waitForSuccess } from '../src/chain/devClient.js';
import { runCli } from '../src/cli/main.js';
import { type AltoBundler, startAlto } from './helpers/altoBundler.js';
import { type ChainHttpServer, serveChainOverHttp } from './helpers/chainHttpServer.js';
import { KEYS, type PatronFixture, startPatronFixture, testKey } from './helpers/patronPaymasterV06.js';
import { type ServiceProcess, spawnService } from './helpers/serviceProcess.js';
import { TEST_RATE_LIMITS } from './helpers/testContext.js';

/**
 * `patron demo --api-key …`, the smoke test of a deployed Patron, against the real service (`src/main.ts`, its own
 * process) configured with PATRON_DEV_CHAIN=false and a PATRON_CHAINS entry for a separate chain: an in-process EVM
 * served over HTTP on 127.0.0.1 with EntryPoints v0.6 and v0.7 and Patron's paymasters (the owner's key stays in
 * the test, as on a real chain). The CLI runs as an operator would run it: no storage, only URLs and the API key.
 */
let fx: PatronFixture;
let chainServer: ChainHttpServer;
let service: ServiceProcess;
let base: string;
let apiKey: string;
let dataDir: string;
const signer = privateKeyToAccount(KEYS.signer).address;

before(async () => {
  fx = await startPatronFixture();
  chainServer = await serveChainOverHttp(fx.chain);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-smoke-'));
  service = spawnService({
    PATRON_DEV_CHAIN: 'false',
    // The demo dApp serves chain 31337, which is this configured chain: its API key is printed once.
    PATRON_DEMO: 'true',
    PATRON_DATA_DIR: dataDir,
    PATRON_SIGNER_PRIVATE_KEY: KEYS.signer,
    PATRON_RATE_LIMITS: TEST_RATE_LIMITS,
    // The solvency guard reads the deposits at start and then not within the test: the drained paymaster below
    // is still signed for, as on a chain whose deposit dropped between two of the guard's reads.
    PATRON_SOLVENCY_INTERVAL_SECONDS: '3600',
    // The signer watch reads every 200 ms: the rotated-key test waits a second, not PATRON_SIGNER_CHECK_MS's default.
    PATRON_SIGNER_CHECK_MS: '200',
    PATRON_CHAINS: JSON.stringify([
      {
        chainId: fx.chain.chainId,
        rpcUrl: chainServer.url,
        paymaster: fx.paymaster,
        entryPoint: fx.entryPoint,
        paymasters: { '0.7': fx.paymasters['0.7'], '0.8': fx.paymasters['0.8'] },
      },
    ]),
  });
  base = await service.baseUrl();
  const deadline = Date.now() + 20_000;
  while (!/apiKey {6}pk\./.test(service.output())) {
    assert.ok(Date.now() < deadline, `no demo API key printed:\n${service.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  apiKey = /apiKey {6}(pk\.[A-Za-z0-9.]+)/.exec(service.output())?.[1] ?? '';
});
after(async () => {
  await service?.stop();
  await chainServer?.close();
  await fx?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function smoke(extra: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv: ['demo', '--url', base, '--chain', String(fx.chain.chainId), '--rpc', chainServer.url, ...extra],
    // Nothing of a local Patron: the smoke test reads no configuration and opens no storage.
    env: { PATRON_DATA_DIR: '/nonexistent-patron-smoke', ...env },
    io: { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) },
  });
  return { code, stdout, stderr };
}

const deposit = (entryPoint: Address, paymaster: Address) =>
  fx.client.readContract({ address: entryPoint, abi: entryPoint06Abi, functionName: 'balanceOf', args: [paymaster] });

test('EntryPoint v0.7: sponsorship verified by simulation with the canonical SimpleAccountFactory, nothing spent', {
  timeout: 60_000,
}, async () => {
  const [ep, pm] = [fx.entryPoints['0.7'], fx.paymasters['0.7']];
  const before = await deposit(ep, pm);
  const { code, stdout, stderr } = await smoke(['--api-key', apiKey, '--entry-point-version', '0.7']);
  assert.equal(code, 0, stdout + stderr);
  assert.match(stdout, new RegExp(`1\\. Patron at ${base} answers: .*EntryPoint v0\\.7 ${ep}, paymaster ${pm}`));
  assert.match(
    stdout,
    new RegExp(
      `2\\. .*factory 0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985 have code; .*signers include Patron's signer ${signer}`,
    ),
  );
  const sender = /3\. SimpleAccount v0\.7 (0x[0-9a-fA-F]{40}) .*a throwaway key\), nonce 0, not deployed/.exec(
    stdout,
  )?.[1];
  assert.ok(sender !== undefined, stdout);
  assert.match(stdout, new RegExp(`4\\. pm_getPaymasterStubData → paymaster ${pm}`));
  assert.match(stdout, /5\. pm_getPaymasterData \(calculateGasLimits\) → paymaster .* callGasLimit [1-9]\d*/);
  assert.match(stdout, /7\. eth_call handleOps\(\[op\], 0x[0-9a-fA-F]{40}\) from that empty address passed/);
  assert.match(stdout, /OK: sponsorship verified by simulation; nothing was sent and nothing spent/);
  // Simulated only: the account was not deployed, the deposit did not move.
  assert.equal(await fx.client.getCode({ address: getAddress(sender) }), undefined);
  assert.equal(await deposit(ep, pm), before);
});

test('EntryPoint v0.6 (the chain’s first): with the canonical factory or the chain’s own it passes (--json); a chain without the canonical one is told to pass --factory', {
  timeout: 90_000,
}, async () => {
  // The dev chain has permissionless's default v0.6 factory; a chain without it (its code removed here) is named.
  const canonical = '0x9406Cc6185a346906296840746125a0E44976454';
  const canonicalCode = await fx.client.getCode({ address: canonical });
  assert.ok(canonicalCode !== undefined, 'the dev chain has the canonical v0.6 factory');
  const withCanonical = await smoke(['--api-key', apiKey]);
  assert.equal(withCanonical.code, 0, withCanonical.stdout + withCanonical.stderr);
  await fx.client.setCode({ address: canonical, bytecode: '0x' });
  const missing = await smoke(['--api-key', apiKey]).finally(() =>
    fx.client.setCode({ address: canonical, bytecode: canonicalCode }),
  );
  assert.equal(missing.code, 1);
  assert.equal(
    missing.stderr,
    `patron: no SimpleAccountFactory at ${canonical} on chain ${fx.chain.chainId}: pass --factory with this chain's SimpleAccountFactory for EntryPoint v0.6\n`,
  );
  const ok = await smoke(['--api-key', apiKey, '--factory', fx.simpleAccountFactory, '--json']);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  const result = JSON.parse(ok.stdout) as { smokeTest: { passed: boolean; sent: boolean; steps: string[] } };
  assert.equal(result.smokeTest.passed, true);
  assert.equal(result.smokeTest.sent, false);
  const steps = result.smokeTest.steps.join('\n');
  assert.match(steps, new RegExp(`EntryPoint v0\\.6 ${fx.entryPoint}, paymaster ${fx.paymaster}`));
  assert.match(steps, new RegExp(`pm_getPaymasterStubData → paymasterAndData ${fx.paymaster.toLowerCase()}`));
  assert.match(steps, /7\. eth_call handleOps.* passed/);
});

test('the first failure stops the run with a specific message: wrong API key, chain not served, wrong node', {
  timeout: 60_000,
}, async () => {
  const badKey = await smoke(['--api-key', 'pk.not-a-key', '--entry-point-version', '0.7']);
  assert.equal(badKey.code, 1);
  assert.match(badKey.stdout, /^1\. .*\n2\. .*\n3\. /, 'the steps before the failure are printed');
  assert.doesNotMatch(badKey.stdout, /4\. /);
  assert.equal(
    badKey.stderr,
    "patron: pm_getPaymasterStubData refused: error -32001: Invalid API key: check the paymaster URL (check --api-key, the dApp's key in its paymaster URL)\n",
  );
  const badChain = await smoke(['--api-key', apiKey, '--chain', '1']);
  assert.equal(badChain.code, 1);
  assert.equal(
    badChain.stderr,
    `patron: chain 1 is not served by ${base} (it serves ${fx.chain.chainId}): check --chain and PATRON_CHAINS\n`,
  );
  // The node is the Patron's own URL: not a JSON-RPC node at all.
  const badNode = await smoke(['--api-key', apiKey, '--rpc', `${base}/nothing`, '--entry-point-version', '0.7']);
  assert.equal(badNode.code, 1);
  assert.equal(
    badNode.stderr,
    `patron: the node at --rpc ${base}/nothing is not reachable (HTTP request failed. HTTP 404: Not Found)\n`,
  );
  const unreachable = await smoke(['--api-key', apiKey, '--url', 'http://127.0.0.1:9']);
  assert.equal(unreachable.code, 1);
  assert.match(
    unreachable.stderr,
    /^patron: the Patron at http:\/\/127\.0\.0\.1:9 is not reachable \(.*\): check --url\n$/,
  );
});

test('a paymaster that no longer accepts the service’s key: Patron refuses (-32043), explained', {
  timeout: 60_000,
}, async () => {
  // The owner swaps the key on chain after the service started (its start-up check passed): the service's signer
  // watch notices within PATRON_SIGNER_CHECK_MS and refuses, where it would otherwise sign data that fails AA34.
  const stranger = privateKeyToAccount(KEYS.stranger).address;
  const owner = async (functionName: 'addSigner' | 'removeSigner', who: Address) =>
    waitForSuccess(
      fx.client,
      await fx.client.writeContract({ address: fx.paymaster, abi: patronPaymasterAbi, functionName, args: [who] }),
      functionName,
    );
  await owner('addSigner', stranger);
  await owner('removeSigner', signer);
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const { code, stdout, stderr } = await smoke(['--api-key', apiKey, '--factory', fx.simpleAccountFactory]);
    assert.equal(code, 1, stdout);
    assert.match(stdout, new RegExp(`signers ${stranger} do not include Patron's signer ${signer}: expect a refusal`));
    assert.match(stderr, /-32043/);
    assert.match(stderr, /does not accept Patron's signing key/);
    assert.match(stderr, /its owner adds it \(`patron paymaster add-signer`\)/);
  } finally {
    await owner('addSigner', signer);
    await owner('removeSigner', stranger);
  }
});

test('--bundler (alto): the op is sent, included and executed; the paymaster’s deposit pays its actualGasCost', {
  timeout: 120_000,
}, async () => {
  const [ep, pm] = [fx.entryPoints['0.7'], fx.paymasters['0.7']];
  await fx.client.setBalance({ address: privateKeyToAccount(KEYS.alto).address, value: parseEther('100') });
  let alto: AltoBundler | undefined;
  try {
    alto = await startAlto({ rpcUrl: chainServer.url, entryPoints: [ep], executorKey: KEYS.alto });
    const before = await deposit(ep, pm);
    // A given owner key (from the environment, never argv), so the same account can be tested again below.
    const ownerEnv = { PATRON_DEMO_OWNER_KEY: testKey('smoke-owner') };
    const v07 = ['--api-key', apiKey, '--entry-point-version', '0.7'];
    const { code, stdout, stderr } = await smoke([...v07, '--bundler', alto.url], ownerEnv);
    assert.equal(code, 0, `${stdout}${stderr}\n${alto.output()}`);
    assert.match(stdout, new RegExp(`bundler at ${alto.url}: chain ${fx.chain.chainId}, serves EntryPoint ${ep}`));
    assert.match(stdout, /eth_estimateUserOperationGas → callGasLimit \d+/);
    const sender = /3\. SimpleAccount v0\.7 (0x[0-9a-fA-F]{40})/.exec(stdout)?.[1];
    const cost =
      /8\. eth_sendUserOperation → included in tx 0x[0-9a-f]{64} .*success true, actualGasCost (\d+) wei/.exec(
        stdout,
      )?.[1];
    assert.ok(sender !== undefined && cost !== undefined, stdout);
    assert.match(stdout, /OK: sponsored op executed on chain/);
    assert.notEqual(await fx.client.getCode({ address: getAddress(sender) }), undefined, 'the account was deployed');
    assert.equal(await deposit(ep, pm), before - BigInt(cost), 'the deposit paid exactly actualGasCost');
    assert.match(stdout, /from PATRON_DEMO_OWNER_KEY\), nonce 0, not deployed/);

    // The same owner again, simulated: the account exists now, its op carries no factory and the next nonce.
    const again = await smoke(v07, ownerEnv);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, new RegExp(`3\\. SimpleAccount v0\\.7 ${sender} .*nonce 1, already deployed`));
    assert.match(again.stdout, /7\. .* passed: the account accepts its owner's signature/);
  } finally {
    await alto?.close();
  }
});

test('EntryPoint v0.8 passes; once its paymaster’s deposit is drained, Patron’s own simulation answers AA31, explained', {
  timeout: 60_000,
}, async () => {
  const [ep, pm] = [fx.entryPoints['0.8'], fx.paymasters['0.8']];
  const ok = await smoke(['--api-key', apiKey, '--entry-point-version', '0.8']);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, new RegExp(`EntryPoint v0\\.8 ${ep}, paymaster ${pm}`));
  assert.match(ok.stdout, /factory 0x13E9ed32155810FDbd067D4522C492D6f68E5944 have code/);
  assert.match(ok.stdout, /7\. eth_call handleOps.* passed/);

  // The owner withdraws all but 1 wei of the deposit.
  await waitForSuccess(
    fx.client,
    await fx.client.writeContract({
      address: pm,
      abi: patronPaymasterV07Abi,
      functionName: 'withdrawTo',
      args: [fx.client.account.address, (await deposit(ep, pm)) - 1n],
    }),
    'withdrawTo',
  );
  const { code, stdout, stderr } = await smoke(['--api-key', apiKey, '--entry-point-version', '0.8']);
  assert.equal(code, 1, stdout);
  assert.match(stdout, /paymaster deposit 0\.000000000000000001 ETH/);
  // Patron simulates the op itself when it computes the gas limits, so the EntryPoint's reason comes back in its
  // -32020 at pm_getPaymasterData, explained the same way.
  assert.match(stdout, /4\. pm_getPaymasterStubData/);
  assert.doesNotMatch(stdout, /5\. /);
  assert.equal(
    stderr,
    `patron: pm_getPaymasterData refused: error -32020: Simulation failed: AA31 paymaster deposit too low: the paymaster ${pm} has 0.000000000000000001 ETH deposited in the EntryPoint: top it up with \`patron paymaster deposit\`\n`,
  );
});
