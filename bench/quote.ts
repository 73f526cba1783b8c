import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Address, hexToBytes, keccak256, parseAbi, parseEther, stringToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { createApp } from '../src/app.js';
import { type ChainRuntime, eip1193ChainRuntime } from '../src/chain/chainRegistry.js';
import { deployDevToken, startDevChain } from '../src/chain/embeddedChain.js';
import type { TokenSetting } from '../src/config/chainSettings.js';
import { loadConfig } from '../src/config/config.js';
import { NO_DAPP_LIMITS } from '../src/dappSettings/dappLimits.js';
import { createDeps, type Deps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import { biconomyQuotesResult } from '../src/rpc/wire/biconomyQuotes.js';
import { parseUserOperationAndModeFast } from '../src/rpc/wire/modeObject.js';
import { parseTokenInfo } from '../src/rpc/wire/tokenInfo.js';
import type { ChainTokenSettings } from '../src/tokens/tokenCatalog.js';
import { BENCH_RATE_LIMITS } from './benchRateLimits.js';
import { closedLoad } from './closedLoad.js';
import { benchRuntime, compileForBench, serverExecArgv } from './compiled.js';
import { ask, childCpuMicros, quietMachine } from './machine.js';
import { type IpcOp, opFromIpc, opToIpc, rpcBodyTemplate, simpleAccountOp } from './sampleOp.js';
import { serveBenchIpc } from './serveBenchIpc.js';

/**
 * Benchmark of the token quote, `pm_getFeeQuoteOrData` with `mode: "ERC20"` and `calculateGasLimits: false`:
 * the op carries its gas limits, so the quote reads prices from the token catalog's in-memory snapshot and does
 * no I/O (docs/guides/token-mode.md, "Token mode"). At 50 connections:
 *   a. a chain with 1 fee token configured, `tokenList: []` (every token: 1 quote);
 *   b. a chain with 10 fee tokens configured, `tokenList: []` (10 quotes);
 *   c. the chain of (b), `tokenList: [preferredToken]` (1 quote out of 10 configured; what @biconomy/account sends);
 *   f. the floor: a bare node:http server in the same process that reads the request and answers a fixed body;
 * then (a) and (b) at a fixed 10,000 req/s (the target: p99 under 5 ms there; ≤ 60 µs CPU per request).
 * Last, a micro-benchmark inside the server process: CPU µs per call of each step of the quote path without
 * HTTP (the fast params parser, tokenInfo's zod schema, the service's `quote`, the result's JSON).
 *
 * The server is this same file run with `--server` in a child process (tsc's output by default, as
 * bench/sponsor.ts does; BENCH_RUNTIME=tsx runs the source): two embedded dev chains (31337: the dev chain's USDC
 * only; 31338: USDC, PDT and 8 more DevTokens), fixed prices, one dApp serving both. CPU per request is the
 * server's process.cpuUsage() delta over IPC divided by the requests answered. See bench/README.md for what to
 * trust on a small VM.
 *
 * Usage: `npm run bench:quote [-- seconds]` (default 10 per scenario, in BENCH_ROUNDS interleaved rounds,
 * default 2). LOG_LEVEL sets the service's log level (default info); BENCH_SCENARIOS=a,b,a@rate picks a subset;
 * BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server there.
 */

interface QuoteServerReady {
  readonly url: string;
  readonly apiKey: string;
  /** The bare node:http server of the floor scenario. */
  readonly floorUrl: string;
  readonly logLevel: string;
  readonly cryptoBackend: string;
  /** chain id → configured tokens (addresses, in order) */
  readonly chains: Record<string, Address[]>;
  readonly op: IpcOp;
}

const ONE_TOKEN_CHAIN = 31337;
const TEN_TOKEN_CHAIN = 31338;
const SMART_ACCOUNT_INFO = { name: 'BICONOMY', version: '2.0.0' };

// ---------------------------------------------------------------------------------------------- the server

/** A dev chain with `count` fee tokens configured at fixed prices (ETH 3000 USD, premium 10 %). */
async function tokenChain(chainId: number, count: number, signer: Address) {
  const dev = await startDevChain({
    chainId,
    signerAddress: signer,
    ownerPrivateKey: keccak256(stringToBytes(`patron bench owner ${chainId}`)),
    depositWei: parseEther('10'),
  });
  const tokens = [...dev.tokens];
  for (let i = tokens.length; i < count; i++) {
    tokens.push(
      await deployDevToken({
        client: dev.client,
        name: `Bench ${i}`,
        symbol: `BT${i}`,
        decimals: [6, 8, 18][i % 3] ?? 18,
      }),
    );
  }
  const runtime: ChainRuntime = eip1193ChainRuntime({
    chainId,
    request: dev.chain.request,
    entryPoint: dev.entryPoint,
    paymaster: dev.paymaster,
    simpleAccountFactory: dev.simpleAccountFactory,
  });
  const settings: TokenSetting[] = tokens.slice(0, count).map((t, i) => ({
    address: t.address,
    logoUrl: '',
    premiumPercentage: '10',
    price: { type: 'fixed', usd: (0.25 * (i + 1)).toString() },
    permit: t.permit,
  }));
  const tokenSettings: ChainTokenSettings = {
    chainId,
    client: runtime.client,
    nativeUsd: { type: 'fixed', usd: '3000' },
    tokens: settings,
  };
  return { dev, runtime, tokenSettings };
}

/** CPU µs per call of each step of the quote path, in this process, on the parsed body of a request. */
async function microBenchmark(deps: Deps, chainId: number, body: string, n: number): Promise<Record<string, number>> {
  const chain = deps.chains.get(chainId);
  const parsed = parseUserOperationAndModeFast((JSON.parse(body) as { params: unknown }).params);
  if (chain === undefined || parsed === undefined) throw new Error('micro-benchmark: no chain or unparsable body');
  const [userOp, mode] = parsed;
  const params = (JSON.parse(body) as { params: unknown }).params;
  const info = parseTokenInfo(mode.tokenInfo);
  const request = {
    call: {
      dappId: 'bench',
      chain,
      bounds: deps.bounds(NO_DAPP_LIMITS, chainId),
      spend: deps.limits.dappSpend({ dappId: 'bench', override: undefined, ip: '127.0.0.1' }),
      report: undefined,
      grant: undefined,
    },
    userOp,
    tokens: { preferredToken: info.preferredToken, tokenList: info.tokenList },
    calculateGasLimits: mode.calculateGasLimits,
    expiryDuration: mode.expiryDuration,
  };
  const quoted = await deps.tokenPaymaster.quote(request);
  const steps: Record<string, () => unknown> = {
    'parse [userOp, mode] (fast path)': () => parseUserOperationAndModeFast(params),
    'parseTokenInfo (zod)': () => parseTokenInfo(mode.tokenInfo),
    'tokenPaymaster.quote': () => deps.tokenPaymaster.quote(request),
    'JSON of the result': () => JSON.stringify({ jsonrpc: '2.0', id: 1, result: biconomyQuotesResult(quoted) }),
  };
  const out: Record<string, number> = {};
  for (const [name, step] of Object.entries(steps)) {
    for (let i = 0; i < n / 4; i++) await step(); // warm-up
    const before = process.cpuUsage();
    for (let i = 0; i < n; i++) await step();
    const used = process.cpuUsage(before);
    out[name] = (used.user + used.system) / n;
  }
  return out;
}

async function serve(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-bench-quote-'));
  const logLevel = process.env.LOG_LEVEL ?? 'info';
  const config = loadConfig({
    ...process.env,
    PATRON_RATE_LIMITS: BENCH_RATE_LIMITS,
    PATRON_DATA_DIR: dataDir,
    LOG_LEVEL: logLevel,
    PORT: '0',
    PATRON_DEV_CHAIN: 'false',
    PATRON_DEMO: 'false',
  });
  const signerKey = keccak256(stringToBytes('patron bench signer'));
  const signer = privateKeyToAddress(signerKey);
  const one = await tokenChain(ONE_TOKEN_CHAIN, 1, signer);
  const ten = await tokenChain(TEN_TOKEN_CHAIN, 10, signer);
  const deps = await createDeps(config, createLogger({ level: config.logLevel }), {
    chains: [one.runtime, ten.runtime],
    tokenChains: [one.tokenSettings, ten.tokenSettings],
    signerKey: hexToBytes(signerKey),
  });
  const account = await deps.accounts.createAccount({ email: `bench-${Date.now()}@example.com` });
  const dapp = await deps.accounts.createDapp({
    accountId: account.id,
    name: 'bench quotes',
    chainIds: [ONE_TOKEN_CHAIN, TEN_TOKEN_CHAIN],
  });
  const owner = privateKeyToAddress(`0x${'11'.repeat(32)}`);
  const sender = await one.dev.client.readContract({
    address: one.dev.simpleAccountFactory,
    abi: parseAbi(['function getAddress(address owner, uint256 salt) view returns (address)']),
    functionName: 'getAddress',
    args: [owner, 0n],
  });
  const op = simpleAccountOp({ factory: one.dev.simpleAccountFactory, owner, salt: 0n, sender, target: owner });
  const app = createApp(deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  // The floor: node:http reading the same request and answering a fixed quote-sized body, nothing else.
  const floorBody = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { mode: 'ERC20', pad: 'x'.repeat(400) } });
  const floor = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(floorBody));
  });
  await new Promise<void>((resolve) => floor.listen(0, '127.0.0.1', resolve));

  serveBenchIpc({
    dataDir,
    close: async () => {
      floor.close();
      await app.close();
      await deps.close();
      await one.dev.close();
      await ten.dev.close();
    },
    onOther: (msg) => {
      if (typeof msg === 'object' && msg !== null && 'micro' in msg) {
        const m = (msg as { micro: { chainId: number; body: string; n: number } }).micro;
        void microBenchmark(deps, m.chainId, m.body, m.n).then((steps) => process.send?.({ steps }));
      }
    },
  });
  const ready: QuoteServerReady = {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    apiKey: dapp.apiKey,
    floorUrl: `http://127.0.0.1:${(floor.address() as AddressInfo).port}`,
    logLevel,
    cryptoBackend: deps.crypto.backend.name,
    chains: Object.fromEntries(
      [one, ten].map((c) => [String(c.runtime.chainId), c.tokenSettings.tokens.map((t) => t.address)]),
    ),
    op: opToIpc(op),
  };
  process.send?.(ready);
}

// ------------------------------------------------------------------------------------------- the load side

interface Slice {
  readonly requests: number;
  readonly seconds: number;
  readonly cpu: number;
  readonly p50: number;
  readonly p99: number;
  /** The measured 99th percentile, without autocannon's coordinated-omission correction. */
  readonly rawP99: number;
  readonly failed: number;
}

interface Target {
  readonly name: string;
  readonly url: string;
  readonly body: (i: number) => string;
  /** Fee quotes the answer must hold (-1: none, the floor). */
  readonly quotes: number;
}

const quiet = quietMachine();

async function slice(
  server: ChildProcess,
  t: Target,
  opts: { duration: number; overallRate?: number },
): Promise<Slice> {
  await quiet.wait();
  const cpu = () => childCpuMicros(server);
  const cpuBefore = await cpu();
  const started = performance.now();
  let nonce = 1;
  const { result, rawP99, failed } = await closedLoad({
    url: t.url,
    connections: 50,
    duration: opts.duration,
    ...(opts.overallRate === undefined ? {} : { overallRate: opts.overallRate }),
    body: () => t.body(nonce++),
  });
  return {
    requests: result.requests.total,
    seconds: (performance.now() - started) / 1000,
    cpu: (await cpu()) - cpuBefore,
    p50: result.latency.p50,
    p99: result.latency.p99,
    rawP99,
    failed,
  };
}

function row(name: string, slices: readonly Slice[], extra = ''): string {
  const requests = slices.reduce((n, s) => n + s.requests, 0);
  const rps = requests / slices.reduce((n, s) => n + s.seconds, 0);
  const cpu = slices.reduce((n, s) => n + s.cpu, 0) / Math.max(1, requests);
  const p50s = slices.map((s) => s.p50).sort((x, y) => x - y);
  const failed = slices.reduce((n, s) => n + s.failed, 0);
  return [
    name.padEnd(44),
    `${Math.round(rps)}`.padStart(6),
    ' req/s  p50 ',
    `${p50s[Math.floor((p50s.length - 1) / 2)] ?? 0}`.padStart(3),
    ' ms  p99 ',
    `${Math.max(...slices.map((s) => s.p99))}`.padStart(3),
    ' ms  CPU ',
    `${cpu.toFixed(0)}`.padStart(4),
    ` µs/req  (${requests} requests, ${failed} failed)`,
    extra,
  ].join('');
}

/** One request: the answer must hold `quotes` fee quotes, else the benchmark measures an error path. */
async function smokeTest(t: Target): Promise<void> {
  const res = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: t.body(0) });
  const text = await res.text();
  const n = (JSON.parse(text) as { result?: { feeQuotes?: unknown[] } }).result?.feeQuotes?.length ?? -1;
  if (res.status !== 200 || n !== t.quotes) throw new Error(`${t.name}: unexpected answer ${res.status} ${text}`);
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 10);
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
  const fixedRate = 10_000;
  const only = new Set((process.env.BENCH_SCENARIOS ?? 'a,b,c,f,a@rate,b@rate,f@rate,micro').split(','));
  const runtime = benchRuntime();
  const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
  if (runtime === 'tsc') process.stdout.write('# compiling src/ and bench/quote.ts with tsc… ');
  const compiled = runtime === 'tsc' ? compileForBench(['bench/quote.ts'])[0] : undefined;
  if (runtime === 'tsc') process.stdout.write('done\n');
  const server = fork(compiled ?? path.join(root, 'bench/quote.ts'), ['--server'], {
    execArgv: serverExecArgv(compiled !== undefined),
    // The service's log is drained as a log shipper would read it (request lines are off on this route).
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  server.stdout?.resume();
  const [ready] = (await once(server, 'message')) as [QuoteServerReady];
  const op = opFromIpc(ready.op);
  // The mode object as @biconomy/account sends it for quotes.
  const body = (tokenInfo: Record<string, unknown>) =>
    rpcBodyTemplate({
      op,
      method: 'pm_getFeeQuoteOrData',
      modeObject: {
        mode: 'ERC20',
        calculateGasLimits: false,
        tokenInfo,
        sponsorshipInfo: { smartAccountInfo: SMART_ACCOUNT_INFO },
      },
      withGas: true,
    });
  const url = (chainId: number) => `${ready.url}/api/v1/${chainId}/${ready.apiKey}`;
  const preferred = ready.chains[String(TEN_TOKEN_CHAIN)]?.[4] ?? '';
  const targets = {
    a: { name: 'a. 1 token configured, 1 quote', url: url(ONE_TOKEN_CHAIN), body: body({ tokenList: [] }), quotes: 1 },
    b: {
      name: 'b. 10 tokens configured, 10 quotes',
      url: url(TEN_TOKEN_CHAIN),
      body: body({ tokenList: [] }),
      quotes: 10,
    },
    c: {
      name: 'c. 10 configured, tokenList [preferred]: 1 quote',
      url: url(TEN_TOKEN_CHAIN),
      body: body({ tokenList: [preferred], preferredToken: preferred }),
      quotes: 1,
    },
    f: {
      name: 'f. floor: bare node:http, fixed answer',
      url: ready.floorUrl,
      body: body({ tokenList: [] }),
      quotes: -1,
    },
  } satisfies Record<string, Target>;
  type Key = keyof typeof targets;

  console.log(
    `# pm_getFeeQuoteOrData ERC20, calculateGasLimits false, 50 connections, ${seconds} s per scenario in ${rounds} ` +
      `interleaved rounds; log level ${ready.logLevel}, crypto ${ready.cryptoBackend}, ` +
      `${runtime === 'tsc' ? 'tsc output' : 'tsx'}, node ${process.version}, ${os.cpus().length} CPUs`,
  );
  const keys = (Object.keys(targets) as Key[]).filter((k) => only.has(k));
  const rated = (['a', 'b', 'f'] as const).filter((k) => only.has(`${k}@rate`));
  for (const k of new Set<Key>([...keys, ...rated])) {
    await smokeTest(targets[k]);
    await slice(server, targets[k], { duration: 2 }); // warm-up (JIT, caches), not reported
  }
  const slices = new Map<Key, Slice[]>(keys.map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (const k of keys) slices.get(k)?.push(await slice(server, targets[k], { duration: seconds / rounds }));
  }
  for (const k of keys) console.log(row(targets[k].name, slices.get(k) ?? []));

  if (rated.length > 0) {
    console.log(
      `# fixed rate: ${fixedRate} req/s asked (autocannon overallRate), 50 connections, ${seconds} s; p99 as ` +
        'autocannon reports it (coordinated-omission corrected), raw p99 as measured',
    );
  }
  for (const k of rated) {
    const s = await slice(server, targets[k], { duration: seconds, overallRate: fixedRate });
    console.log(row(`${targets[k].name} @ ${fixedRate}/s`, [s], `  raw p99 ${s.rawP99.toFixed(1)} ms`));
  }
  if (only.has('micro')) {
    console.log('# in-process CPU µs per call of the quote path (no HTTP, no framework), 20,000 calls each');
    for (const k of ['a', 'b'] as const) {
      const chainId = k === 'a' ? ONE_TOKEN_CHAIN : TEN_TOKEN_CHAIN;
      const { steps } = await ask<{ steps: Record<string, number> }>(server, {
        micro: { chainId, body: targets[k].body(1), n: 20_000 },
      });
      const text = Object.entries(steps).map(([name, us]) => `${name} ${us.toFixed(1)}`);
      console.log(`${targets[k].name}: ${text.join(', ')}`);
    }
  }
  if (quiet.warnings > 0)
    console.log(`! ${quiet.warnings} slice(s) started on a busy machine: CPU µs/req may be inflated`);
  server.send('stop');
  await once(server, 'exit');
}

if (process.argv[2] === '--server') await serve();
else await main();
