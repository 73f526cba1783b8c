import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { createPublicClient, defineChain, http, parseEther } from 'viem';
import { createBundlerClient, createPaymasterClient, entryPoint07Address } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type DevChain, type EmbeddedChainType, startDevChain } from '../src/chain/embeddedChain.js';
import { type ChainHttpServer, serveChainOverHttp } from './helpers/chainHttpServer.js';
import { testKey } from './helpers/patronPaymasterV06.js';
import { type ServiceProcess, spawnService } from './helpers/serviceProcess.js';

/**
 * Fork mode at process level (docs/guides/fork-mode.md): the real service (`src/main.ts`) with
 * PATRON_DEV_CHAIN_FORK_URL set to a chain this test serves on 127.0.0.1 starts its dev chain as a fork of it,
 * runs alto against the fork, and an SDK op goes through that bundler with Patron as its ERC-7677 paymaster. Fork
 * settings that cannot work stop the start with one clear line and the exit code of their kind, never a stack.
 */
const REMOTE_CHAIN_ID = 4343;
const dirs: string[] = [];
const services: ServiceProcess[] = [];
const remotes: { chain: DevChain; served: ChainHttpServer }[] = [];
let served: ChainHttpServer;

/** Another operator's dev chain (its own keys and paymasters), served over HTTP on 127.0.0.1. */
async function serveRemote(chainType: EmbeddedChainType): Promise<{ chain: DevChain; served: ChainHttpServer }> {
  const chain = await startDevChain({
    chainId: REMOTE_CHAIN_ID,
    chainType,
    signerAddress: privateKeyToAccount(testKey('remote-signer')).address,
    ownerPrivateKey: testKey('remote-owner'),
    depositWei: parseEther('1'),
  });
  const r = { chain, served: await serveChainOverHttp(chain.chain) };
  remotes.push(r);
  return r;
}

before(async () => {
  ({ served } = await serveRemote('l1'));
});

after(async () => {
  for (const s of services) await s.stop();
  for (const r of remotes) {
    await r.served.close();
    await r.chain.close();
  }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const dataDirs = new Map<ServiceProcess, string>();

function startPatron(env: Record<string, string>): ServiceProcess {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-fork-'));
  dirs.push(dataDir);
  const service = spawnService({ PATRON_DATA_DIR: dataDir, ...env });
  services.push(service);
  dataDirs.set(service, dataDir);
  return service;
}

/** `npm run demo` (src/cli/bin.ts demo) against `base`, on the service's data directory. */
function runDemo(args: { base: string; dataDir: string }): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', 'demo', '--url', args.base], {
      env: { ...process.env, PATRON_DATA_DIR: args.dataDir, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      output += c.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const dataDirOf = (service: ServiceProcess): string => dataDirs.get(service) ?? assert.fail('a service of this file');

/** The dev bundler's URL and alto's pid once the banner is out. */
async function bundlerReady(service: ServiceProcess, timeoutMs = 90_000): Promise<{ url: string; altoPid: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = /^\{.*"the dev bundler is ready".*\}$/m.exec(service.output())?.[0];
    if (line !== undefined && service.output().includes('Patron is running at')) {
      return JSON.parse(line) as { url: string; altoPid: number };
    }
    assert.equal(service.child.exitCode, null, `the service exited:\n${service.output()}`);
    assert.ok(Date.now() < deadline, `the bundler did not start:\n${service.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

for (const chainType of ['l1', 'opStack'] as const) {
  test(`npm start with PATRON_DEV_CHAIN_FORK_URL (${chainType} remote): the fork has the remote's id, alto runs against it and an op sponsored by Patron goes through it`, async () => {
    const { chain: remote, served } = chainType === 'l1' ? (remotes[0] ?? assert.fail()) : await serveRemote(chainType);
    const block = await remote.client.getBlockNumber();
    const service = startPatron({ PATRON_DEV_CHAIN_FORK_URL: `${served.url}/` });
    const base = await service.baseUrl(90_000);
    const { url: bundlerUrl, altoPid } = await bundlerReady(service);
    const out = service.output();
    assert.ok(out.includes(`"opStack":${chainType === 'opStack'}`), out);
    // On an OP-stack fork alto prices each op's L1 data, as Base's bundlers do.
    const altoArgs = fs.readFileSync(`/proc/${altoPid}/cmdline`, 'utf8').split('\0');
    assert.equal(altoArgs.includes('op-stack'), chainType === 'opStack', altoArgs.join(' '));
    assert.ok(
      out.includes(`  chain ${REMOTE_CHAIN_ID} (embedded dev chain, JSON-RPC at ${base}/chain/${REMOTE_CHAIN_ID})`),
      out,
    );
    assert.ok(out.includes(`    fork of          ${served.url} at block ${block}`), out);
    assert.ok(out.includes(`PATRON_DEV_CHAIN_FORK_BLOCK=${block} pins it`), out);
    assert.ok(out.includes(`(dApp "Demo dApp", chain ${REMOTE_CHAIN_ID})`), out);

    const apiKey = /apiKey {6}(pk\.\S+)/.exec(out)?.[1];
    assert.ok(apiKey !== undefined, out);
    const chain = defineChain({
      id: REMOTE_CHAIN_ID,
      name: 'fork',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [`${base}/chain/${REMOTE_CHAIN_ID}`] } },
    });
    const client = createPublicClient({ chain, transport: http() });
    assert.equal(await client.getChainId(), REMOTE_CHAIN_ID);
    const account = await toSimpleSmartAccount({
      client,
      owner: privateKeyToAccount(generatePrivateKey()),
      entryPoint: { address: entryPoint07Address, version: '0.7' },
    });
    const sponsored = createBundlerClient({
      account,
      client,
      transport: http(bundlerUrl),
      paymaster: createPaymasterClient({ transport: http(`${base}/api/v1/${REMOTE_CHAIN_ID}/${apiKey}`) }),
    });
    const hash = await sponsored.sendUserOperation({ calls: [{ to: account.address, data: '0x' }] });
    const receipt = await sponsored.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    assert.equal(receipt.success, true);
    const chains = (await (await fetch(`${base}/api/chains`)).json()) as {
      chains: { chainId: number; deployments: { entryPointVersion: string; paymaster: string }[] }[];
    };
    const fork = chains.chains.find((c) => c.chainId === REMOTE_CHAIN_ID);
    const v07 = fork?.deployments.find((d) => d.entryPointVersion === '0.7');
    assert.equal(receipt.paymaster?.toLowerCase(), v07?.paymaster.toLowerCase(), 'Patron paid for it');
    assert.notEqual(v07?.paymaster.toLowerCase(), remote.paymasters['0.7'].toLowerCase(), "Patron's own paymaster");
    // The op is on the fork only: the remote never saw the account.
    assert.equal(await remote.client.getCode({ address: account.address }), undefined);

    if (chainType === 'l1') {
      // `npm run demo` against the fork, as the quick start runs it (its EIP-7702 part needs type-4 transactions,
      // which EDR's OP chain type refuses: docs/guides/fork-mode.md, "Limits").
      // Not spawnSync: this process serves the remote chain the fork reads, and must keep answering meanwhile.
      const demo = await runDemo({ base, dataDir: dataDirOf(service) });
      assert.equal(demo.code, 0, demo.output);
      // Each of its three ops through the fork's bundler, the last the EIP-7702 one.
      assert.equal(
        demo.output.match(/eth_getUserOperationReceipt from the bundler: included in tx 0x[0-9a-f]{64}/g)?.length,
        3,
      );
      assert.match(demo.output, /USDC charged/);
    }
  });
}

const refusals: readonly { name: string; env: Record<string, string>; code: number; message: () => string }[] = [
  {
    name: 'a URL that is not http(s) is a configuration error (78)',
    env: { PATRON_DEV_CHAIN_FORK_URL: 'sepolia.base.org' },
    code: 78,
    message: () => 'PATRON_DEV_CHAIN_FORK_URL must be an http:// or https:// URL of a JSON-RPC endpoint',
  },
  {
    name: 'an endpoint that does not answer fails the start (1: it may answer at the next)',
    env: { PATRON_DEV_CHAIN_FORK_URL: 'http://127.0.0.1:9/key' },
    code: 1,
    message: () =>
      'Patron failed to start: the fork endpoint http://127.0.0.1:9/… (PATRON_DEV_CHAIN_FORK_URL) did not answer eth_chainId',
  },
  {
    name: "a block beyond the endpoint's latest is refused (78)",
    env: { PATRON_DEV_CHAIN_FORK_BLOCK: '999999' },
    code: 78,
    message: () => "PATRON_DEV_CHAIN_FORK_BLOCK=999999 is beyond the fork endpoint's latest block",
  },
];

for (const r of refusals) {
  test(`bad fork settings fail the start clearly: ${r.name}`, async () => {
    const service = startPatron({ PATRON_DEV_CHAIN_FORK_URL: served.url, ...r.env });
    assert.equal(await service.exitCode(60_000), r.code, service.output());
    assert.ok(service.errors().includes(r.message()), service.errors());
    assert.doesNotMatch(service.errors(), /\n\s+at /, 'no stack');
  });
}
