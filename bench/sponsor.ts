import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mintBenchTokens } from './backendTokens.js';
import { boundChecksMicros } from './boundChecks.js';
import { closedLoad } from './closedLoad.js';
import { benchRuntime, compileForBench, serverExecArgv } from './compiled.js';
import { ask, childCpu, childCpuMicros, cpuTimes, quietMachine, stealShare, stealText } from './machine.js';
import type { PacedRun } from './pacedClient.js';
import type { PacedResult } from './pacedLoad.js';
import {
  type BodyParts,
  bodyFromParts,
  erc7677BodyParts,
  nonceOf,
  opFromIpc,
  type PaymasterFieldsWire,
  rpcBodyParts,
  withStubFields,
} from './sampleOp.js';
import type { BenchVersionV07, SponsorServerReady } from './sponsorServer.js';

/**
 * Benchmark of the sponsorship hot path, `pm_getFeeQuoteOrData` in SPONSORED mode on chain 31337, at 50
 * connections:
 *   a. calculateGasLimits: false (the caller gives every limit), no webhook;
 *   b. the same for a dApp with one active webhook (a local node:http receiver in its own process);
 *   c. calculateGasLimits: true: two simulateHandleOp calls on the embedded dev chain (EDR, in-process);
 *   d. the ceiling: a bare node:http server that only parses the body and hashes + signs the op with the same
 *      signing code;
 *   e. (diagnostic) the ceiling's handler served by Fastify configured as Patron's app: the framework's share;
 *   u. a for a dApp requiring backend sponsorship tokens (an RS256 JWT per request in webhookData, its jti spent)
 *      with a per-user USD cap: what binding sponsorship to the dApp's backend and to people costs;
 *   p. a for a dApp with a realistic sponsorship policy (dApp-wide and per-sender USD caps, each request's worst
 *      case reserved in the spend ledger at signing; a contract allowlist checked on the decoded callData);
 *   s. a spread uniformly over BENCH_SPREAD_DAPPS dApps' API keys (only when set): the cost of many tenants,
 *      nearly every request the first for its key (a cold lookup);
 *   w. the same over as many other dApps whose keys the server looked up once at start: the steady state of a
 *      server that has seen its tenants (their lookups cached until something changes, cachePolicy.ts);
 *   g. a on a second Patron without its guards (BENCH_GUARDS=off, guardsOff.ts): a / g is what the signing
 *      bounds and rate limits cost; the bound comparisons that still run in g are timed apart (`micro`);
 *   h, i. a's hot path on EntryPoint v0.7 (h) and v0.8 (i): the same SimpleAccount op on that version (factory +
 *      factoryData, hex quantities, the stub's paymaster fields), sent as ERC-7677 `pm_getPaymasterData` to
 *      /api/v2 with every limit given (no simulation, no webhook);
 *   j, k. their ceilings: d's bare server with PatronPaymasterV07's codec (sponsoredHashV07 over exact caps), one
 *      process per version (the EntryPoint in the digest differs); h / j and i / k are read beside a / d;
 * then (a), (b) and the ceiling again at a fixed 1,000 req/s (autocannon overallRate), for their p99.
 *
 * Each request carries a fresh nonce (see sampleOp.ts). Prints req/s, p50, p99, the server's CPU µs per
 * request (process.cpuUsage over IPC, so the load generator's CPU is not counted), the log bytes it wrote per
 * request, and the failures (non-2xx, errors and timeouts: must be 0).
 *
 * Method. The servers run tsc's output with plain node, as `npm start` does (see compiled.ts; BENCH_RUNTIME=tsx
 * runs the sources through tsx instead). On a small VM, CPU time per request drifts with whatever else the
 * host runs, so the saturated runs are interleaved: BENCH_ROUNDS rounds (default 2) of a, b, c, d, e, each
 * slice `seconds / rounds` long; CPU µs/req and req/s are totals over a scenario's slices, p50 is the median
 * and p99 the worst of its slices. Before each slice the machine must be quiet (see machine.ts, quietMachine).
 *
 * Usage: `npm run bench:sponsor [-- seconds]` (default 10 per scenario). LOG_LEVEL sets the service's log
 * level (default info, the service's default); BENCH_SCENARIOS=a,d,a@rate picks a subset.
 */
const seconds = Number(process.argv[2] ?? 10);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const connections = 50;
const fixedRate = 1000;
/** The paced runs' unmeasured start (see pacedLoad.ts). */
const PACED_WARMUP_SECONDS = 3;
const only = new Set(
  (process.env.BENCH_SCENARIOS ?? 'a,b,c,d,e,g,h,i,j,k,p,s,w,micro,a@rate,b@rate,d@rate').split(','),
);
const runtime = benchRuntime();
const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));

const ENTRIES = [
  'bench/sponsorServer.ts',
  'bench/ceilingServer.ts',
  'bench/webhookReceiver.ts',
  'bench/pacedClient.ts',
] as const;
if (runtime === 'tsc') process.stdout.write('# compiling src/ and the bench servers with tsc… ');
const compiled = runtime === 'tsc' ? compileForBench(ENTRIES) : undefined;
if (runtime === 'tsc') process.stdout.write('done\n');

function forkChild(
  entry: (typeof ENTRIES)[number],
  args: string[] = [],
  pipeStdout = false,
  env: NodeJS.ProcessEnv = process.env,
): ChildProcess {
  const file = compiled?.[ENTRIES.indexOf(entry)] ?? path.join(root, entry);
  const execArgv =
    entry === 'bench/sponsorServer.ts'
      ? serverExecArgv(compiled !== undefined)
      : compiled === undefined
        ? ['--import', 'tsx']
        : [];
  return fork(file, args, {
    execArgv,
    stdio: ['ignore', pipeStdout ? 'pipe' : 'inherit', 'inherit', 'ipc'],
    env,
  });
}

const quiet = quietMachine();

// The service, with its log drained the way a log shipper reads a container's stdout.
const patron = forkChild('bench/sponsorServer.ts', [], true);
let logBytes = 0;
patron.stdout?.on('data', (chunk: Buffer) => {
  logBytes += chunk.length;
});
const [ready] = (await once(patron, 'message')) as [SponsorServerReady];
// The guard-less reference (g): the same service, its log drained and not counted.
const bare = only.has('g')
  ? forkChild('bench/sponsorServer.ts', [], true, { ...process.env, BENCH_GUARDS: 'off' })
  : undefined;
bare?.stdout?.resume();
const bareReady = bare === undefined ? undefined : ((await once(bare, 'message')) as [SponsorServerReady])[0];

const receiver = forkChild('bench/webhookReceiver.ts');
const [{ url: webhookUrl }] = (await once(receiver, 'message')) as [{ url: string }];
const ceiling = forkChild('bench/ceilingServer.ts', [String(ready.chainId), ready.paymaster, 'http']);
const [ceilingReady] = (await once(ceiling, 'message')) as [{ url: string }];
// Its log goes nowhere: it writes none (request lines are off), as Patron's paymaster route.
const framework = forkChild('bench/ceilingServer.ts', [String(ready.chainId), ready.paymaster, 'fastify'], true);
framework.stdout?.resume();
// The v0.7/v0.8 ceilings (j, k), only when asked for: each is a process of its own, bound to that version's paymaster.
const ceilingV07 = async (version: BenchVersionV07, k: 'j' | 'k') => {
  if (!only.has(k)) return undefined;
  const child = forkChild('bench/ceilingServer.ts', [
    String(ready.chainId),
    ready.v07[version].paymaster,
    'http',
    version,
  ]);
  const [{ url }] = (await once(child, 'message')) as [{ url: string }];
  return { child, url };
};
const ceilingV07s = { '0.7': await ceilingV07('0.7', 'j'), '0.8': await ceilingV07('0.8', 'k') };
// The paced load generator, in a process of its own (see pacedClient.ts).
const pacer = forkChild('bench/pacedClient.ts');
await once(pacer, 'message');
const [frameworkReady] = (await once(framework, 'message')) as [{ url: string }];

// The webhook is registered through the webhook API, as a dApp would.
const created = await fetch(`${ready.url}/api/v2/public/sdk/webhookParameters`, {
  method: 'POST',
  headers: { authToken: ready.authToken, apiKey: ready.hookedApiKey, 'content-type': 'application/json' },
  body: JSON.stringify({ webhookUrl, requestType: 'POST' }),
});
if (created.status !== 200) throw new Error(`webhook registration failed: ${created.status} ${await created.text()}`);

const op = opFromIpc(ready.op);
const method = 'pm_getFeeQuoteOrData';
const givenLimits = rpcBodyParts({
  op,
  method,
  modeObject: { mode: 'SPONSORED', calculateGasLimits: false, sponsorshipInfo: { webhookData: {} } },
  withGas: true,
});
// Scenario u: a's body with webhookData { sponsorshipToken } (the carrier @biconomy/account can use), one RS256
// token per request (each signing call spends its jti), minted before any measurement (backendTokens.ts): enough
// for u's slices and warm-up at 8,000 req/s.
const TOKEN_MARKER = 'TOKEN_MARKER';
const tokenBodyOf = await (async () => {
  if (!only.has('u')) return undefined;
  const parts = rpcBodyParts({
    op,
    method,
    modeObject: {
      mode: 'SPONSORED',
      calculateGasLimits: false,
      sponsorshipInfo: { webhookData: { sponsorshipToken: TOKEN_MARKER } },
    },
    withGas: true,
  });
  const [mid, tail] = parts.tail.split(TOKEN_MARKER) as [string, string];
  const count = Math.ceil(8000 * (seconds + 4)) + 10;
  const started = performance.now();
  const tokens = await mintBenchTokens({ dapp: ready.tokenDapp, count });
  console.log(`# u: ${tokens.length} RS256 tokens minted in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  let next = 0;
  return (i: number) => {
    const token = tokens[next++];
    if (token === undefined) throw new Error(`scenario u ran out of its ${tokens.length} tokens`);
    return `${parts.head}0x${nonceOf(i).toString(16)}${mid}${token}${tail}`;
  };
})();
const computedLimits = rpcBodyParts({
  op,
  method,
  modeObject: { mode: 'SPONSORED', calculateGasLimits: true, sponsorshipInfo: { webhookData: {} } },
  withGas: false,
});

/**
 * The v0.7/v0.8 data call as a wallet makes it: first the stub (pm_getPaymasterStubData, once, not measured) for
 * the paymaster fields the wallet estimates with and then sends back, then pm_getPaymasterData with the final
 * limits and an empty context (SPONSORED, limits not computed: no simulation).
 */
const v2Url = `${ready.url}/api/v2/${ready.chainId}/${ready.plainApiKey}`;
async function dataCallBody(version: BenchVersionV07): Promise<BodyParts> {
  const { entryPoint, op: wire } = ready.v07[version];
  const stubBody = erc7677BodyParts({
    op: wire,
    method: 'pm_getPaymasterStubData',
    entryPoint,
    chainId: ready.chainId,
    context: {},
  });
  const res = await fetch(v2Url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: bodyFromParts(stubBody)(0),
  });
  const text = await res.text();
  const stub = (JSON.parse(text) as { result?: PaymasterFieldsWire }).result;
  if (res.status !== 200 || stub?.paymaster !== ready.v07[version].paymaster) {
    throw new Error(`v${version} stub: unexpected answer ${res.status} ${text}`);
  }
  return erc7677BodyParts({
    op: withStubFields(wire, stub),
    method: 'pm_getPaymasterData',
    entryPoint,
    chainId: ready.chainId,
    context: {},
  });
}
const dataCallBodies = { '0.7': await dataCallBody('0.7'), '0.8': await dataCallBody('0.8') };

interface Target {
  readonly name: string;
  readonly server: ChildProcess;
  readonly url: string;
  readonly body: BodyParts;
  /** Log bytes are counted for the service only. */
  readonly logged: boolean;
  /** Per-request path, when the URL changes per request (s: a random one of many API keys). */
  readonly path?: () => string;
  /** For ERC-7677 v0.7+ answers: the paymaster the answer must name (absent: a v0.6 paymasterAndData). */
  readonly paymasterV07?: string;
  /** Each request's body, when it carries more than a fresh nonce (u: a fresh backend token too). */
  readonly bodyOf?: (i: number) => string;
}

const spread = ready.spreadApiKeys;
const warm = ready.warmApiKeys;
type Scenario = 'a' | 'b' | 'c' | 'd' | 'e' | 'g' | 'h' | 'i' | 'j' | 'k' | 'p' | 's' | 'u' | 'w';
const patronV07 = (version: BenchVersionV07, name: string): Target => ({
  name,
  server: patron,
  url: v2Url,
  body: dataCallBodies[version],
  logged: true,
  paymasterV07: ready.v07[version].paymaster,
});
const ceilingV07Target = (version: BenchVersionV07, name: string): Partial<Record<Scenario, Target>> => {
  const c = ceilingV07s[version];
  if (c === undefined) return {};
  const target: Target = {
    name,
    server: c.child,
    url: c.url,
    body: dataCallBodies[version],
    logged: false,
    paymasterV07: ready.v07[version].paymaster,
  };
  return { [version === '0.7' ? 'j' : 'k']: target };
};
const targets: Partial<Record<Scenario, Target>> = {
  a: {
    name: 'a. SPONSORED, limits given, no webhook',
    server: patron,
    url: `${ready.url}/api/v1/${ready.chainId}/${ready.plainApiKey}`,
    body: givenLimits,
    logged: true,
  },
  b: {
    name: 'b. SPONSORED, limits given, 1 webhook',
    server: patron,
    url: `${ready.url}/api/v1/${ready.chainId}/${ready.hookedApiKey}`,
    body: givenLimits,
    logged: true,
  },
  c: {
    name: 'c. SPONSORED, calculateGasLimits (dev chain)',
    server: patron,
    url: `${ready.url}/api/v1/${ready.chainId}/${ready.plainApiKey}`,
    body: computedLimits,
    logged: true,
  },
  p: {
    name: 'p. a under a policy (USD caps, allowlist)',
    server: patron,
    url: `${ready.url}/api/v1/${ready.chainId}/${ready.policedApiKey}`,
    body: givenLimits,
    logged: true,
  },
  ...(tokenBodyOf === undefined
    ? {}
    : {
        u: {
          name: 'u. a with a backend token and a user cap',
          server: patron,
          url: `${ready.url}/api/v1/${ready.chainId}/${ready.tokenDapp.apiKey}`,
          body: givenLimits,
          bodyOf: tokenBodyOf,
          logged: true,
        },
      }),
  d: {
    name: 'd. ceiling: node:http + parse + hash + sign',
    server: ceiling,
    url: ceilingReady.url,
    body: givenLimits,
    logged: false,
  },
  e: {
    name: "e. (diagnostic) d's handler in Fastify",
    server: framework,
    url: frameworkReady.url,
    body: givenLimits,
    logged: false,
  },
  h: patronV07('0.7', 'h. v0.7 pm_getPaymasterData, limits given'),
  ...ceilingV07Target('0.7', 'j. v0.7 ceiling: node:http + hash + sign'),
  i: patronV07('0.8', 'i. v0.8 pm_getPaymasterData, limits given'),
  ...ceilingV07Target('0.8', 'k. v0.8 ceiling: node:http + hash + sign'),
  ...(spread.length === 0
    ? {}
    : {
        s: {
          name: `s. a, spread over ${spread.length} dApps' keys`,
          server: patron,
          url: `${ready.url}/api/v1/${ready.chainId}/${ready.plainApiKey}`,
          path: () => `/api/v1/${ready.chainId}/${spread[Math.floor(Math.random() * spread.length)]}`,
          body: givenLimits,
          logged: true,
        },
        w: {
          name: `w. a, spread over ${warm.length} dApps seen before`,
          server: patron,
          url: `${ready.url}/api/v1/${ready.chainId}/${ready.plainApiKey}`,
          path: () => `/api/v1/${ready.chainId}/${warm[Math.floor(Math.random() * warm.length)]}`,
          body: givenLimits,
          logged: true,
        },
      }),
  ...(bare === undefined || bareReady === undefined
    ? {}
    : {
        g: {
          name: 'g. a without its guards (bounds, rate limits)',
          server: bare,
          url: `${bareReady.url}/api/v1/${bareReady.chainId}/${bareReady.plainApiKey}`,
          body: rpcBodyParts({
            op: opFromIpc(bareReady.op),
            method,
            modeObject: { mode: 'SPONSORED', calculateGasLimits: false, sponsorshipInfo: { webhookData: {} } },
            withGas: true,
          }),
          logged: false,
        },
      }),
};
type Key = keyof typeof targets;
/** A scenario's target; only g may be absent (when not selected), and keys come from the object itself. */
function target(k: Key): Target {
  const t = targets[k];
  if (t === undefined) throw new Error(`no target ${k}`);
  return t;
}

let nonce = 1;

/** One request through fetch: the answer must be a sponsored result, else the benchmark is meaningless. */
async function smokeTest(t: Target): Promise<void> {
  const res = await fetch(t.path === undefined ? t.url : new URL(t.path(), t.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: (t.bodyOf ?? bodyFromParts(t.body))(nonce++),
  });
  const text = await res.text();
  const json = JSON.parse(text) as { result?: { paymasterAndData?: string } & Partial<PaymasterFieldsWire> };
  // v0.6: 98 bytes of paymasterAndData; v0.7+: the 154-byte sponsored paymasterAndData less its first 52 bytes.
  const sponsored =
    t.paymasterV07 === undefined
      ? json.result?.paymasterAndData?.length === 2 + 98 * 2
      : json.result?.paymaster === t.paymasterV07 && json.result.paymasterData?.length === 2 + (154 - 52) * 2;
  if (res.status !== 200 || !sponsored) {
    throw new Error(`${t.name}: unexpected answer ${res.status} ${text}`);
  }
}

interface Slice {
  /** The 99th percentile of the measured response times, without autocannon's coordinated-omission correction. */
  readonly rawP99: number;
  readonly requests: number;
  readonly seconds: number;
  readonly cpu: number;
  /** The main thread's share of `cpu` (undefined where /proc is not read). */
  readonly loop: number | undefined;
  readonly logBytes: number;
  readonly p50: number;
  readonly p99: number;
  readonly failed: number;
  readonly steal: number | undefined;
}

async function slice(t: Target, opts: { duration: number; overallRate?: number }): Promise<Slice> {
  await quiet.wait();
  const cpuBefore = await childCpu(t.server);
  const logBefore = logBytes;
  const started = performance.now();
  const cpuTimesBefore = cpuTimes();
  const body = t.bodyOf ?? bodyFromParts(t.body);
  const { result, rawP99, failed } = await closedLoad({
    url: t.url,
    connections,
    duration: opts.duration,
    ...(opts.overallRate === undefined ? {} : { overallRate: opts.overallRate }),
    body: () => body(nonce++),
    ...(t.path === undefined ? {} : { path: t.path }),
  });
  return {
    rawP99,
    requests: result.requests.total,
    seconds: (performance.now() - started) / 1000,
    ...(await childCpu(t.server).then((after) => ({
      cpu: after.all - cpuBefore.all,
      loop: after.loop === undefined || cpuBefore.loop === undefined ? undefined : after.loop - cpuBefore.loop,
    }))),
    logBytes: t.logged ? logBytes - logBefore : 0,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed,
    steal: stealShare(cpuTimesBefore, cpuTimes()),
  };
}

function row(
  name: string,
  slices: readonly Slice[],
  extra = '',
): { rps: number; cpu: number; loop: number | undefined; text: string } {
  const requests = slices.reduce((n, s) => n + s.requests, 0);
  const rps = requests / slices.reduce((n, s) => n + s.seconds, 0);
  const cpu = slices.reduce((n, s) => n + s.cpu, 0) / Math.max(1, requests);
  const log = slices.reduce((n, s) => n + s.logBytes, 0) / Math.max(1, requests);
  const loop = slices.some((s) => s.loop === undefined)
    ? undefined
    : slices.reduce((n, s) => n + (s.loop ?? 0), 0) / Math.max(1, requests);
  const p50s = slices.map((s) => s.p50).sort((x, y) => x - y);
  const p50 = p50s[Math.floor((p50s.length - 1) / 2)] ?? 0;
  const p99 = Math.max(...slices.map((s) => s.p99));
  const failed = slices.reduce((n, s) => n + s.failed, 0);
  const steals = slices.map((s) => s.steal).filter((x) => x !== undefined);
  const steal = steals.length === 0 ? undefined : Math.max(...steals);
  const text = [
    name.padEnd(46),
    `${Math.round(rps)}`.padStart(6),
    ' req/s  p50 ',
    `${p50}`.padStart(4),
    ' ms  p99 ',
    `${p99}`.padStart(4),
    ' ms  CPU ',
    `${cpu.toFixed(0)}`.padStart(5),
    ' µs/req',
    loop === undefined ? '' : ` (loop ${loop.toFixed(0).padStart(3)})`,
    '  log ',
    `${log.toFixed(0)}`.padStart(4),
    ` B/req  (${requests} requests, ${failed} failed)`,
    stealText(steal),
    extra,
  ].join('');
  return { rps, cpu, loop, text };
}

console.log(
  `# ${method} SPONSORED${only.has('h') || only.has('i') ? ' (h, i: pm_getPaymasterData on /api/v2)' : ''}, ${connections} connections, ${seconds} s per scenario in ${rounds} interleaved rounds; ` +
    `storage ${ready.storage}, crypto ${ready.cryptoBackend}, log level ${ready.logLevel}, ${runtime === 'tsc' ? 'tsc output' : 'tsx'}, node ${process.version}`,
);
const keys = (Object.keys(targets) as Key[]).filter((k) => only.has(k));
const rated = (['a', 'b', 'd'] as const).filter((k) => only.has(`${k}@rate`));
for (const k of new Set<Key>([...keys, ...rated])) {
  await smokeTest(target(k));
  await slice(target(k), { duration: 2 }); // warm-up (JIT, pools, caches), not reported
}
const slices = new Map<Key, Slice[]>(keys.map((k) => [k, []]));
let webhookCalls = 0;
for (let r = 0; r < rounds; r++) {
  for (const k of keys) {
    const before = k === 'b' ? (await ask<{ calls: number }>(receiver, 'count')).calls : 0;
    slices.get(k)?.push(await slice(target(k), { duration: seconds / rounds }));
    if (k === 'b') webhookCalls += (await ask<{ calls: number }>(receiver, 'count')).calls - before;
  }
}
const totals = new Map<Key, { rps: number; cpu: number; loop: number | undefined }>();
for (const k of keys) {
  const r = row(target(k).name, slices.get(k) ?? [], k === 'b' ? `  webhook calls ${webhookCalls}` : '');
  totals.set(k, r);
  console.log(r.text);
}
const a = totals.get('a');
const d = totals.get('d');
if (a !== undefined && d !== undefined) {
  // When the load generator, not the server, is the bottleneck, both reach the same req/s; the CPU ratio is
  // then what says how far apart they are (it is the throughput ratio once the server is the bottleneck).
  console.log(
    `(a) reaches ${((100 * a.rps) / d.rps).toFixed(0)} % of the ceiling's throughput; ` +
      `its CPU per request is ${(a.cpu / d.cpu).toFixed(2)}× the ceiling's (${((100 * d.cpu) / a.cpu).toFixed(0)} % when CPU-bound)`,
  );
}

// Each version against its own ceiling (same machine, same rounds): what Patron adds to bare signing, per version.
for (const [k, c, what] of [
  ['a', 'd', 'v0.6'],
  ['h', 'j', 'v0.7'],
  ['i', 'k', 'v0.8'],
] as const) {
  const x = totals.get(k);
  const ceilingTotals = totals.get(c);
  if (x === undefined || ceilingTotals === undefined) continue;
  const vsA = a === undefined || k === 'a' ? '' : `; ${(x.cpu / a.cpu).toFixed(2)}× (a)'s CPU`;
  const loops =
    x.loop === undefined || ceilingTotals.loop === undefined
      ? ''
      : `; serving loop ${x.loop.toFixed(0)} µs/req = ${(x.loop / ceilingTotals.loop).toFixed(2)}× its ceiling's`;
  console.log(
    `(${k}) ${what}: CPU ${x.cpu.toFixed(0)} µs/req = ${(x.cpu / ceilingTotals.cpu).toFixed(2)}× its ceiling (${c}, ` +
      `${ceilingTotals.cpu.toFixed(0)} µs/req); ${((100 * x.rps) / ceilingTotals.rps).toFixed(0)} % of its throughput${vsA}${loops}`,
  );
}

const g = totals.get('g');
if (a !== undefined && g !== undefined) {
  const checks = only.has('micro') ? boundChecksMicros() : undefined;
  const extra = a.cpu - g.cpu + (checks ?? 0);
  console.log(
    `(a) costs ${(a.cpu / g.cpu).toFixed(3)}× the guard-less (g): ${(a.cpu - g.cpu).toFixed(1)} µs/req` +
      (checks === undefined
        ? ''
        : `; with the bound comparisons that g still runs (${checks.toFixed(2)} µs/req, micro), the guards add ` +
          `${extra.toFixed(1)} µs/req = ${((100 * extra) / g.cpu).toFixed(1)} % of g`),
  );
}

const u = totals.get('u');
if (a !== undefined && u !== undefined) {
  console.log(
    `(u) a backend token (RS256 JWT verified, its jti spent) and a per-user USD cap reserved at signing cost ` +
      `${(u.cpu / a.cpu).toFixed(2)}× (a): ${u.cpu.toFixed(0)} against ${a.cpu.toFixed(0)} µs/req (budget 1.15×)`,
  );
}

const p = totals.get('p');
if (a !== undefined && p !== undefined) {
  console.log(
    `(p) a policy (dApp-wide and per-sender USD caps reserved at signing, a contract allowlist) costs ` +
      `${(p.cpu / a.cpu).toFixed(2)}× (a): ${p.cpu.toFixed(0)} against ${a.cpu.toFixed(0)} µs/req`,
  );
}

for (const k of ['s', 'w'] as const) {
  const x = totals.get(k);
  if (a === undefined || x === undefined) continue;
  const what = k === 's' ? 'first sight of each key' : 'keys seen before';
  console.log(
    `(${k}) spread over ${spread.length} dApps (${what}) costs ${(x.cpu / a.cpu).toFixed(2)}× the one-key (a): ${x.cpu.toFixed(0)} against ${a.cpu.toFixed(0)} µs/req`,
  );
}

if (rated.length > 0) {
  console.log(
    `# fixed rate: ${fixedRate} req/s (autocannon overallRate), ${connections} connections, ${seconds} s; ` +
      'p99 as autocannon reports it, raw p99 without its coordinated-omission correction',
  );
}
for (const k of rated) {
  const t = target(k);
  const s = await slice(t, { duration: seconds, overallRate: fixedRate });
  console.log(row(`${t.name} @ ${fixedRate}/s`, [s], `  raw p99 ${s.rawP99.toFixed(1)} ms`).text);
}
if (rated.length > 0) {
  console.log(
    `# paced: ${fixedRate} req/s scheduled evenly (open loop, pacedLoad.ts in its own process), up to ${connections} connections, ` +
      `${seconds} s after ${PACED_WARMUP_SECONDS} s unmeasured; latency from each request's scheduled time`,
  );
}
for (const k of rated) {
  const t = target(k);
  await quiet.wait();
  const cpuBefore = await childCpuMicros(t.server);
  const cpuTimesBefore = cpuTimes();
  const run: PacedRun = {
    url: t.url,
    body: t.body,
    firstNonce: nonce,
    rate: fixedRate,
    seconds,
    connections,
    warmupSeconds: PACED_WARMUP_SECONDS,
  };
  const r = await ask<PacedResult>(pacer, run);
  nonce += r.warmup + r.sent;
  const cpu = ((await childCpuMicros(t.server)) - cpuBefore) / Math.max(1, r.warmup + r.sent);
  console.log(
    `${`${t.name} paced`.padEnd(48)} ${(r.sent / r.seconds).toFixed(0).padStart(5)} req/s  p50 ${r.p50.toFixed(1).padStart(5)} ms  ` +
      `p99 ${r.p99.toFixed(1).padStart(5)} ms  max ${r.max.toFixed(1)} ms  CPU ${cpu.toFixed(0).padStart(5)} µs/req  (${r.sent} requests, ${r.failed} failed)  ` +
      `sent late: p99 ${r.sendLagP99.toFixed(1)} ms, max ${r.sendLagMax.toFixed(1)} ms` +
      stealText(stealShare(cpuTimesBefore, cpuTimes())),
  );
}
if (quiet.warnings > 0) {
  console.log(
    `! ${quiet.warnings} slice(s) started on a busy machine (another process?): their CPU µs/req may be inflated`,
  );
}

const v07Ceilings = Object.values(ceilingV07s).flatMap((c) => (c === undefined ? [] : [c.child]));
for (const child of [
  patron,
  receiver,
  ceiling,
  framework,
  pacer,
  ...v07Ceilings,
  ...(bare === undefined ? [] : [bare]),
]) {
  child.send('stop');
  await once(child, 'exit');
}
