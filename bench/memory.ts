import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { closedLoad } from './closedLoad.js';
import { benchRuntime, compileForBench, serverExecArgv } from './compiled.js';
import { ask } from './machine.js';
import { bodyFromParts, opFromIpc, rpcBodyParts } from './sampleOp.js';
import type { SponsorServerReady } from './sponsorServer.js';

/**
 * Memory under sustained load: the sponsorship benchmark's server (sponsorServer.ts: the whole service, embedded dev
 * chain, SQLite, LOG_LEVEL=info, every guard on) takes sponsored requests at saturation (50 connections, scenario a
 * of sponsor.ts: limits given, no webhook, a fresh nonce per request, every one signed) until BENCH_MEMORY_REQUESTS
 * (default 1,000,000). Prints the server's RSS idle after start, after the first 10,000 requests and at checkpoints
 * to the end, with the V8 heap beside it, and the ratio of the last RSS to the 10,000th's (issue 21: at most 1.3).
 *
 * Every signature stays a liability until its window closes (300 s by default), so at ~3,000 signed/s a run of 1M
 * spans about one window: what the solvency guard holds per signature is what this measures. Each op's worst case
 * is 0.0027 ETH (× 1.5 margin), so the server's deposit is topped up first (BENCH_DEPOSIT_ETH) and any failure
 * is counted and printed: a refused request is not a measured one.
 *
 * Usage: `npm run bench:memory [-- requests]`.
 */
const total = Number(process.argv[2] ?? process.env.BENCH_MEMORY_REQUESTS ?? 1_000_000);
const FIRST = 10_000;
const connections = 50;
const runtime = benchRuntime();
const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));

if (runtime === 'tsc') process.stdout.write('# compiling src/ and the bench server with tsc… ');
const compiled = runtime === 'tsc' ? compileForBench(['bench/sponsorServer.ts']) : undefined;
if (runtime === 'tsc') process.stdout.write('done\n');

const server: ChildProcess = fork(compiled?.[0] ?? path.join(root, 'bench/sponsorServer.ts'), [], {
  execArgv: serverExecArgv(compiled !== undefined),
  stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  // Deposit enough that the solvency guard never holds signing: every request must be signed to the end.
  env: { ...process.env, BENCH_DEPOSIT_ETH: String(Math.ceil((total * 0.0041) / 1000) * 1000 + 1000) },
});
// The service's log drained as a log shipper would.
server.stdout?.resume();
const [ready] = (await once(server, 'message')) as [SponsorServerReady];

const MiB = 1024 * 1024;
const mib = (bytes: number) => (bytes / MiB).toFixed(0).padStart(4);
const memory = async () => (await ask<{ memory: NodeJS.MemoryUsage }>(server, 'memory')).memory;
const show = (label: string, m: NodeJS.MemoryUsage, extra = '') =>
  console.log(
    `${label.padEnd(28)} RSS ${mib(m.rss)} MiB  heap ${mib(m.heapUsed)} used of ${mib(m.heapTotal)} MiB  ` +
      `external ${mib(m.external)} MiB${extra}`,
  );

console.log(
  `# memory of the sponsored path: ${total.toLocaleString('en')} requests at ${connections} connections; storage ${ready.storage}, ` +
    `crypto ${ready.cryptoBackend}, log level ${ready.logLevel}, ${runtime === 'tsc' ? 'tsc output' : 'tsx'}, node ${process.version}`,
);
await new Promise((r) => setTimeout(r, 3000));
show('idle after start', await memory());

const body = bodyFromParts(
  rpcBodyParts({
    op: opFromIpc(ready.op),
    method: 'pm_getFeeQuoteOrData',
    modeObject: { mode: 'SPONSORED', calculateGasLimits: false, sponsorshipInfo: { webhookData: {} } },
    withGas: true,
  }),
);
let nonce = 1;
let done = 0;
let failed = 0;
let seconds = 0;
const url = `${ready.url}/api/v1/${ready.chainId}/${ready.plainApiKey}`;
const run = async (amount: number) => {
  const started = performance.now();
  const r = await closedLoad({ url, connections, duration: 0, amount, body: () => body(nonce++) });
  seconds += (performance.now() - started) / 1000;
  done += r.result.requests.total;
  failed += r.failed;
};

await run(FIRST);
const first = await memory();
show(`after ${done.toLocaleString('en')}`, first);
// Checkpoints at 10 % steps of the rest.
const step = Math.max(FIRST, Math.ceil((total - FIRST) / 10));
let last = first;
while (done < total) {
  await run(Math.min(step, total - done));
  last = await memory();
  show(`after ${done.toLocaleString('en')}`, last, `  (${Math.round(done / seconds)} req/s so far, ${failed} failed)`);
}
await new Promise((r) => setTimeout(r, 3000));
show('idle 3 s after the load', await memory());
console.log(
  `RSS after ${done.toLocaleString('en')} requests = ${(last.rss / first.rss).toFixed(2)}× its value after ${FIRST.toLocaleString('en')} ` +
    `(${(last.rss / MiB).toFixed(0)} / ${(first.rss / MiB).toFixed(0)} MiB); ${failed} failed`,
);
server.send('stop');
await once(server, 'exit');
