import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Address, createPublicClient, http, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { adminClient } from './adminClient.js';
import { type BenchChild, freePort, startChild } from './benchProcesses.js';
import { BENCH_RATE_LIMITS } from './benchRateLimits.js';
import { checkLedger, report } from './capChecks.js';
import { classifiedLoad } from './classifiedLoad.js';
import { benchRuntime, compileForBench, serverExecArgv } from './compiled.js';
import { cpuTimes, quietMachine, stealShare, stealText } from './machine.js';
import { bodyFromParts, rpcBodyParts, simpleAccountOp } from './sampleOp.js';
import { startThrowawayPostgres } from './throwawayPostgres.js';

/**
 * Policy caps on a cluster (`npm run bench:policy-cluster`): Patron with PATRON_WORKERS=2 on PostgreSQL, loaded
 * with `pm_getFeeQuoteOrData` SPONSORED (limits given, a fresh nonce per request) at 50 connections until well
 * past a cap, to show the cap holds across processes and what a signature costs under it:
 *   1. a dApp-wide cap of N ops (with dApp-wide and per-sender USD caps far above N ops' cost, and a contract
 *      allowlist the op passes), one sender, OVERSHOOT × N requests: exactly N signed, every other answer a
 *      -32012 `cap` denial, the ledger holding N reservations;
 *   2. a per-sender cap of M ops for K senders (SimpleAccounts of one owner with salts 1..K), requests spread
 *      evenly: exactly M × K signed, M per sender in the ledger.
 * Phase 0 is the reference: the same load for a dApp without policies (nothing written to the ledger).
 * Prints signed sponsorships per second up to the cap's last signature, p50/p99 of signed answers and of
 * denials, totals, and "cap held" or FAIL (exit code 1).
 *
 * Processes: PostgreSQL (DATABASE_URL, else a throwaway server, throwawayPostgres.ts); a Patron on SQLite with
 * the embedded dev chain, only to serve that chain at /chain/31337 (its paymaster's verifying signer is the
 * cluster's key: both get the same PATRON_SIGNER_PRIVATE_KEY); the cluster (src/main.ts, tsc's output as
 * `npm start` runs it, see compiled.ts). The account and its auth token come from the CLI, the dApps and
 * policies from the admin API. Every process and temporary directory is removed at the end, also on failure.
 *
 * Knobs: BENCH_CAP_OPS (N, 3000), BENCH_SENDER_CAP_OPS (M, 200), BENCH_SENDERS (K, 10), BENCH_OVERSHOOT (2.5),
 * BENCH_BASELINE_REQUESTS (3000), BENCH_INSTANCES (1: a PATRON_WORKERS=2 cluster; 2: two separate instances on the
 * database, PATRON_WORKERS=1 each, every phase's connections and requests split evenly between them),
 * BENCH_RUNTIME=tsx, BENCH_PG_OPTIONS (settings for the throwaway server, e.g. `-c synchronous_commit=off`).
 */
const N = Number(process.env.BENCH_CAP_OPS ?? 3000);
const M = Number(process.env.BENCH_SENDER_CAP_OPS ?? 200);
const K = Number(process.env.BENCH_SENDERS ?? 10);
const OVERSHOOT = Number(process.env.BENCH_OVERSHOOT ?? 2.5);
const CONNECTIONS = 50;
const WARMUP_REQUESTS = 1000;
const BASELINE_REQUESTS = Number(process.env.BENCH_BASELINE_REQUESTS ?? 3000);
/** 1: one PATRON_WORKERS=2 cluster; 2 or more: that many separate instances (PATRON_WORKERS=1), the load split evenly. */
const INSTANCES = Math.max(1, Number(process.env.BENCH_INSTANCES ?? 1));
const CHAIN_ID = 31337;
/** The dev chain's ETH price (src/tokens/devChainTokens.ts), configured as a fixed price on the cluster. */
const NATIVE_USD = '3000';
const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const runtime = benchRuntime();

const cleanups: (() => Promise<void> | void)[] = [];
async function cleanUp(): Promise<void> {
  for (let f = cleanups.pop(); f !== undefined; f = cleanups.pop()) {
    try {
      await f();
    } catch (err) {
      process.stderr.write(`cleanup: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
}

function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `node <entry>` for src/main.ts or the CLI: tsc's output, or the source through tsx. */
function nodeCommand(entry: 'src/main.ts' | 'src/cli/bin.ts', compiled: readonly string[] | undefined): string[] {
  const file = compiled?.[entry === 'src/main.ts' ? 0 : 1] ?? path.join(root, entry);
  const flags = entry === 'src/main.ts' ? serverExecArgv(compiled !== undefined) : compiled ? [] : ['--import', 'tsx'];
  return [...flags, file];
}

function start(name: string, args: string[], env: NodeJS.ProcessEnv): BenchChild {
  const child = startChild({ name, command: process.execPath, args, env });
  cleanups.push(() => child.stop());
  return child;
}

async function waitForHttp(url: string, child: BenchChild, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.child.exitCode !== null) throw new Error(`${child.name} exited:\n${child.tail()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${child.name}: ${url} did not answer within ${timeoutMs} ms\n${child.tail()}`);
}

/** The bench cluster's master key (see clusterEnv below). */
const BENCH_MASTER_KEY = 'b3'.repeat(32);

interface DevChainInfo {
  readonly entryPoint: Address;
  readonly paymaster: Address;
  readonly simpleAccountFactory: Address;
  readonly feeTokens: readonly { readonly address: Address; readonly symbol?: string }[];
}

async function run(): Promise<boolean> {
  if (runtime === 'tsc') process.stdout.write('# compiling src/ with tsc… ');
  const compiled = runtime === 'tsc' ? compileForBench(['src/main.ts', 'src/cli/bin.ts']) : undefined;
  if (runtime === 'tsc') process.stdout.write('done\n');
  const { DATABASE_URL: givenUrl, ...baseEnv } = process.env;
  let databaseUrl = givenUrl ?? '';
  let storage = 'PostgreSQL from DATABASE_URL';
  if (databaseUrl === '') {
    const extraOptions = process.env.BENCH_PG_OPTIONS ?? '';
    const server = startThrowawayPostgres({ port: await freePort(), extraOptions });
    cleanups.push(() => server.stop());
    databaseUrl = server.url;
    storage = `PostgreSQL, a throwaway local server${extraOptions === '' ? '' : ` (${extraOptions})`}`;
  }
  const signerKey = generatePrivateKey();
  const common = {
    ...baseEnv,
    HOST: '127.0.0.1',
    PATRON_SIGNER_PRIVATE_KEY: signerKey,
    PATRON_RATE_LIMITS: BENCH_RATE_LIMITS,
    PATRON_DEMO: 'false',
  };

  // The chain: a Patron with the embedded dev chain, on SQLite, served at /chain/31337.
  const chainPort = await freePort();
  const chainBase = `http://127.0.0.1:${chainPort}`;
  const chainPatron = start('dev-chain Patron', nodeCommand('src/main.ts', compiled), {
    ...common,
    PORT: String(chainPort),
    PATRON_DATA_DIR: tempDir('patron-bench-chain-'),
    PATRON_DEV_CHAIN: 'true',
    PATRON_WORKERS: '1',
    LOG_LEVEL: 'warn',
  });
  await waitForHttp(`${chainBase}/api/chains`, chainPatron, 120_000);
  const chains = (await (await fetch(`${chainBase}/api/chains`)).json()) as {
    chains: (DevChainInfo & { chainId: number })[];
  };
  const dev = chains.chains.find((c) => c.chainId === CHAIN_ID);
  const usdc = dev?.feeTokens.find((t) => t.symbol === 'USDC')?.address;
  if (dev === undefined || usdc === undefined) throw new Error(`no dev chain or no USDC in ${JSON.stringify(chains)}`);
  const rpcUrl = `${chainBase}/chain/${CHAIN_ID}`;

  // The cluster's environment; the CLI runs with it too (same database and master key).
  const clusterPort = await freePort();
  const clusterBase = `http://127.0.0.1:${clusterPort}`;
  // Separate instances: the first on clusterPort, the others on ports of their own, each its own data directory.
  const instancePorts = [clusterPort];
  for (let i = 1; i < INSTANCES; i++) instancePorts.push(await freePort());
  const bases = instancePorts.map((port) => `http://127.0.0.1:${port}`);
  const clusterEnv = {
    ...common,
    DATABASE_URL: databaseUrl,
    PORT: String(clusterPort),
    PATRON_DATA_DIR: tempDir('patron-bench-cluster-'),
    // Fixed, not random: the service refuses a master key that is not the database's, and a DATABASE_URL given to
    // the bench may hold a previous run's secrets. The data is throwaway, so a public key is fine here.
    PATRON_MASTER_KEY: BENCH_MASTER_KEY,
    PATRON_WORKERS: INSTANCES === 1 ? '2' : '1',
    PATRON_DEV_CHAIN: 'false',
    // A chain with a fee token has a native USD price (the token catalog's), which the USD caps need; a fixed
    // price needs nothing off this machine. The token is the dev chain's USDC, never used here.
    PATRON_CHAINS: JSON.stringify([
      {
        chainId: CHAIN_ID,
        rpcUrl,
        entryPoint: dev.entryPoint,
        paymaster: dev.paymaster,
        nativeUsd: { type: 'fixed', usd: NATIVE_USD },
        tokens: [{ address: usdc, price: { type: 'fixed', usd: '1' } }],
        // The dev chain's SimpleAccount factory is not a canonical one: listed, so the allowlist can read the calls
        // of the (undeployed) senders it creates, as an operator lists its own factories.
        accounts: { simpleAccountV06: { factories: [dev.simpleAccountFactory] } },
      },
    ]),
    // The service's default, and the level at which each worker says it is listening.
    LOG_LEVEL: 'info',
  };
  // The CLI first: it applies the migrations before two workers start on an empty database.
  const cli = async (args: string[]) => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [...nodeCommand('src/cli/bin.ts', compiled), ...args, '--json'],
      {
        env: clusterEnv,
      },
    );
    return JSON.parse(stdout) as Record<string, { authToken?: string; accountId?: string }>;
  };
  const email = `bench-${Date.now()}@example.com`;
  await cli(['account', 'create', '--email', email]);
  const authToken = (await cli(['token', 'create', '--account', email])).token?.authToken;
  if (authToken === undefined) throw new Error('the CLI printed no auth token');

  if (INSTANCES === 1) {
    const cluster = start('cluster', nodeCommand('src/main.ts', compiled), clusterEnv);
    await cluster.waitForLines(/Patron is listening/, 2, 120_000);
  } else {
    await Promise.all(
      instancePorts.map(async (port, i) => {
        const env = { ...clusterEnv, PORT: String(port), PATRON_DATA_DIR: tempDir(`patron-bench-instance-${i}-`) };
        await start(`instance ${i + 1}`, nodeCommand('src/main.ts', compiled), env).waitForLines(
          /Patron is listening/,
          1,
          120_000,
        );
      }),
    );
  }
  const admin = adminClient({ baseUrl: clusterBase, authToken });

  // Ops: SimpleAccounts of one owner (salt 0 for the warm-up and phase 1, 1..K for phase 2) calling the owner.
  const owner = privateKeyToAddress(`0x${'22'.repeat(32)}`);
  const client = createPublicClient({ transport: http(rpcUrl) });
  const bodyOf = async (salt: bigint) => {
    const sender = await client.readContract({
      address: dev.simpleAccountFactory,
      abi: parseAbi(['function getAddress(address owner, uint256 salt) view returns (address)']),
      functionName: 'getAddress',
      args: [owner, salt],
    });
    const op = simpleAccountOp({ factory: dev.simpleAccountFactory, owner, salt, sender, target: owner });
    const parts = rpcBodyParts({
      op,
      method: 'pm_getFeeQuoteOrData',
      modeObject: { mode: 'SPONSORED', calculateGasLimits: false, sponsorshipInfo: { webhookData: {} } },
      withGas: true,
    });
    return { sender, body: bodyFromParts(parts) };
  };
  const allowlist = [{ address: owner }];
  const roomyUsd = [
    { scope: 'dapp', unit: 'usd', limit: '100000000' },
    { scope: 'sender', unit: 'usd', limit: '10000000' },
  ];
  const dappWithPolicy = async (name: string, caps: readonly unknown[]) => {
    const dapp = await admin.createDapp(name, [CHAIN_ID]);
    const { policyId } = await admin.createPolicy(dapp.dappId, `${name} policy`, { contracts: allowlist, caps });
    return { ...dapp, policyId, url: bases.map((b) => `${b}/api/v1/${CHAIN_ID}/${dapp.apiKey}`) };
  };
  const warm = await dappWithPolicy('bench warm-up', roomyUsd);
  const free = await admin.createDapp('bench no policy', [CHAIN_ID]);
  const capped = await dappWithPolicy('bench dApp-wide ops cap', [
    { scope: 'dapp', unit: 'ops', limit: String(N) },
    ...roomyUsd,
  ]);
  const perSender = await dappWithPolicy('bench per-sender ops cap', [
    { scope: 'sender', unit: 'ops', limit: String(M) },
    ...roomyUsd,
  ]);
  const one = await bodyOf(0n);
  const many = await Promise.all(Array.from({ length: K }, (_, i) => bodyOf(BigInt(i + 1))));

  console.log(
    `# pm_getFeeQuoteOrData SPONSORED on ${INSTANCES === 1 ? 'a PATRON_WORKERS=2 cluster' : `${INSTANCES} separate instances`}, ${storage}; ${CONNECTIONS} connections; ` +
      `${runtime === 'tsc' ? 'tsc output' : 'tsx'}, node ${process.version}, ${os.cpus().length} CPUs`,
  );
  const quiet = quietMachine();
  let nonce = 1;
  const load = async (url: string | readonly string[], amount: number, markSigned: number, body: () => string) => {
    await quiet.wait();
    const before = cpuTimes();
    const r = await classifiedLoad({ url, connections: CONNECTIONS, amount, markSigned, body });
    return { r, steal: stealShare(before, cpuTimes()) };
  };

  const w = await load(warm.url, WARMUP_REQUESTS, WARMUP_REQUESTS, () => one.body(nonce++));
  let ok = w.r.signed === WARMUP_REQUESTS;
  console.log(`warm-up: ${w.r.signed} of ${WARMUP_REQUESTS} signed under a USD-capped policy (not measured)`);

  // The reference: the same cluster and op for a dApp without policies (no ledger write per request).
  const p0 = await load(
    bases.map((b) => `${b}/api/v1/${CHAIN_ID}/${free.apiKey}`),
    BASELINE_REQUESTS,
    BASELINE_REQUESTS,
    () => one.body(nonce++),
  );
  console.log(`0. a dApp without policies, ${BASELINE_REQUESTS} requests${stealText(p0.steal)}`);
  ok = report(p0.r, BASELINE_REQUESTS) && ok;

  const p1 = await load(capped.url, Math.round(N * OVERSHOOT), N, () => one.body(nonce++));
  console.log(
    `1. dApp-wide cap of ${N} ops (+ dApp-wide and per-sender USD caps far above, allowlist), 1 sender, ` +
      `${Math.round(N * OVERSHOOT)} requests${stealText(p1.steal)}`,
  );
  ok = report(p1.r, N) && ok;
  ok = (await checkLedger({ admin, databaseUrl, dapp: capped, senders: [one.sender], expectDapp: N })) && ok;

  const p2 = await load(perSender.url, Math.round(M * K * OVERSHOOT), M * K, () => {
    const i = nonce++;
    return (many[i % K] ?? one).body(i);
  });
  console.log(
    `2. per-sender cap of ${M} ops, ${K} senders (requests spread evenly), ${Math.round(M * K * OVERSHOOT)} ` +
      `requests${stealText(p2.steal)}`,
  );
  ok = report(p2.r, M * K) && ok;
  ok =
    (await checkLedger({
      admin,
      databaseUrl,
      dapp: perSender,
      senders: many.map((s) => s.sender),
      expectDapp: M * K,
      expectSender: M,
    })) && ok;
  console.log(ok ? 'PASS' : 'FAIL');
  return ok;
}

let passed = false;
try {
  passed = await run();
} catch (err) {
  console.error(`FAIL: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
} finally {
  await cleanUp();
}
process.exitCode = passed ? 0 : 1;
