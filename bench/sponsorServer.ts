import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type Address, parseAbi, parseEther } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import { BENCH_TOKEN_LIFETIME_SECONDS, createTokenDapp, type TokenDapp } from './backendTokens.js';
import { BENCH_RATE_LIMITS } from './benchRateLimits.js';
import { guardsOff } from './guardsOff.js';
import { type IpcOp, opToIpc, simpleAccountOp, simpleAccountOpV07, type WireOpV07 } from './sampleOp.js';
import { serveBenchIpc } from './serveBenchIpc.js';

/**
 * Patron for the sponsorship benchmark, as a child process: the whole service (createDeps + createApp) with
 * the embedded dev chain (chain 31337, EntryPoints v0.6 to v0.9 and Patron's paymaster for each, deployed at
 * start), a fresh SQLite data directory (or PostgreSQL with DATABASE_URL), and the service's default log level (info; set
 * LOG_LEVEL to change it) writing to stdout, which the parent drains like a log shipper would. Two dApps are
 * created through the domain services: `plain` (no webhook) and `hooked` (the parent registers one). Speaks
 * over IPC: sends `Ready`; answers 'cpu' with process.cpuUsage(); exits on 'stop'. With `BENCH_GUARDS=off` it is
 * the guard-less reference (guardsOff.ts).
 */
export interface SponsorServerReady {
  readonly url: string;
  readonly storage: string;
  readonly cryptoBackend: string;
  readonly logLevel: string;
  readonly chainId: number;
  readonly paymaster: Address;
  readonly authToken: string;
  readonly plainApiKey: string;
  readonly hookedApiKey: string;
  /** A dApp with a realistic sponsorship policy (scenario p): dApp-wide and per-sender USD caps, a contract allowlist. */
  readonly policedApiKey: string;
  /** A dApp requiring backend tokens (RS256) with a per-user USD cap (scenario u), and its issuer's key. */
  readonly tokenDapp: TokenDapp;
  /** BENCH_SPREAD_DAPPS more dApps' API keys (none by default): traffic spread over many tenants. */
  readonly spreadApiKeys: readonly string[];
  /**
   * As many other dApps' keys, each looked up once at start (API key and active webhooks, as a request does):
   * a server that has served every tenant before, the steady state of a long-running process.
   */
  readonly warmApiKeys: readonly string[];
  /** The sample op with its real counterfactual sender; bigints as decimal strings (IPC is JSON). */
  readonly op: IpcOp;
  /** The same op for EntryPoint v0.7 and v0.8 (that version's SimpleAccount), and the deployments it goes to. */
  readonly v07: Readonly<Record<BenchVersionV07, { entryPoint: Address; paymaster: Address; op: WireOpV07 }>>;
}

/** The v0.7+ versions the benchmark sponsors (v0.9 differs from v0.8 only in where the signature goes). */
export type BenchVersionV07 = '0.7' | '0.8';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-bench-sponsor-'));
const logLevel = process.env.LOG_LEVEL ?? 'info';
const config = loadConfig({
  ...process.env,
  PATRON_RATE_LIMITS: BENCH_RATE_LIMITS,
  PATRON_DATA_DIR: dataDir,
  LOG_LEVEL: logLevel,
  PORT: '0',
  PATRON_DEV_CHAIN: 'true',
  PATRON_DEMO: 'false',
  // Scenario u's tokens are minted once before the run: they must outlive it.
  PATRON_SPONSORSHIP_TOKEN_MAX_LIFETIME_SECONDS: String(BENCH_TOKEN_LIFETIME_SECONDS),
});
const deps = await createDeps(
  config,
  createLogger({ level: config.logLevel }),
  process.env.BENCH_GUARDS === 'off' ? { guards: guardsOff() } : {},
);
const devChain = deps.devChain;
if (devChain === undefined) throw new Error('the dev chain did not start');

// BENCH_DEPOSIT_ETH: the v0.6 paymaster's deposit topped up to at least this (the memory benchmark signs a million
// ops inside one window, ~4,000 ETH of worst cases at its fees; the dev chain deposits 1,000), read by the guard now.
const depositEth = BigInt(process.env.BENCH_DEPOSIT_ETH ?? 0);
if (depositEth > 0n) {
  const value = parseEther(depositEth.toString());
  const funder = devChain.client.account.address;
  await devChain.client.setBalance({ address: funder, value: value + parseEther('1') });
  const hash = await devChain.client.writeContract({
    address: devChain.entryPoint,
    abi: parseAbi(['function depositTo(address account) payable']),
    functionName: 'depositTo',
    args: [devChain.paymaster],
    value,
  });
  await devChain.client.waitForTransactionReceipt({ hash });
  await deps.solvency.checkNow();
}

const account = await deps.accounts.createAccount({ email: `bench-${Date.now()}@example.com` });
const { secret } = await deps.accounts.createToken({ accountId: account.id });
const plain = await deps.accounts.createDapp({ accountId: account.id, name: 'bench plain', chainIds: [31337] });
const hooked = await deps.accounts.createDapp({ accountId: account.id, name: 'bench hooked', chainIds: [31337] });

// The counterfactual SimpleAccount of a throwaway owner, read from the deployed factory.
const owner = privateKeyToAddress(`0x${'11'.repeat(32)}`);
const salt = 0n;
const counterfactual = (factory: Address) =>
  devChain.client.readContract({
    address: factory,
    abi: parseAbi(['function getAddress(address owner, uint256 salt) view returns (address)']),
    functionName: 'getAddress',
    args: [owner, salt],
  });
const sender = await counterfactual(devChain.simpleAccountFactory);
const op = simpleAccountOp({ factory: devChain.simpleAccountFactory, owner, salt, sender, target: owner });
// The same account on EntryPoint v0.7 and v0.8: their SimpleAccountFactory (same createAccount/getAddress ABI).
const opV07 = async (version: BenchVersionV07) => {
  const factory = devChain.simpleAccountFactories[version];
  return {
    entryPoint: devChain.entryPoints[version],
    paymaster: devChain.paymasters[version],
    op: simpleAccountOpV07({ factory, owner, salt, sender: await counterfactual(factory), target: owner }),
  };
};
const v07 = { '0.7': await opV07('0.7'), '0.8': await opV07('0.8') };

// Caps far above what a run spends (every request is reserved and none settles): what they cost, not when they bind.
const policed = await deps.accounts.createDapp({ accountId: account.id, name: 'bench policed', chainIds: [31337] });
await deps.policies.create({
  dappId: policed.id,
  name: 'launch campaign',
  rules: {
    contracts: [{ address: owner }],
    caps: [
      { scope: 'dapp', unit: 'usd', limit: '100000000000', resets: 'daily' },
      { scope: 'sender', unit: 'usd', limit: '10000000000', resets: 'daily' },
    ],
  },
});

const tokenDapp = await createTokenDapp({ deps, accountId: account.id });

// Many tenants (BENCH_SPREAD_DAPPS), created through the domain service like any dApp.
const spreadApiKeys: string[] = [];
for (let i = 0; i < Number(process.env.BENCH_SPREAD_DAPPS ?? 0); i++) {
  spreadApiKeys.push(
    (await deps.accounts.createDapp({ accountId: account.id, name: `bench ${i}`, chainIds: [31337] })).apiKey,
  );
}

// As many again, seen once (the lookups a request makes), for the steady state (scenario w).
const warmApiKeys: string[] = [];
for (let i = 0; i < spreadApiKeys.length; i++) {
  const { apiKey } = await deps.accounts.createDapp({ accountId: account.id, name: `warm ${i}`, chainIds: [31337] });
  warmApiKeys.push(apiKey);
}
for (const key of warmApiKeys) {
  const dapp = await deps.accounts.resolveApiKey(key);
  if (dapp !== undefined) await deps.webhooks.activeWebhooks(dapp.id);
}

const app = createApp(deps);
await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address() as AddressInfo;

serveBenchIpc({
  dataDir,
  close: async () => {
    await app.close();
    await deps.close();
  },
});
const ready: SponsorServerReady = {
  url: `http://127.0.0.1:${port}`,
  storage: deps.store.kind,
  cryptoBackend: deps.crypto.backend.name,
  logLevel,
  chainId: devChain.chain.chainId,
  paymaster: devChain.paymaster,
  authToken: secret,
  plainApiKey: plain.apiKey,
  hookedApiKey: hooked.apiKey,
  policedApiKey: policed.apiKey,
  tokenDapp,
  spreadApiKeys,
  warmApiKeys,
  op: opToIpc(op),
  v07,
};
process.send?.(ready);
