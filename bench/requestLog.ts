import { z } from 'zod';
import { eip1193ChainRuntime } from '../src/chain/chainRegistry.js';
import { DEFAULT_SIGNING_BOUNDS } from '../src/config/boundsSettings.js';
import { NO_CALLER_RESTRICTIONS } from '../src/dappSettings/callerRestrictions.js';
import type { SponsorshipService } from '../src/paymaster/sponsored/sponsorshipService.js';
import type { TokenPaymasterService } from '../src/paymaster/token/tokenPaymasterService.js';
import { requestLogOnCall } from '../src/requestLog/requestLogOnCall.js';
import { createRequestLogRecorder, type RequestLogSink } from '../src/requestLog/requestLogRecorder.js';
import { inThreadWriter } from '../src/requestLog/requestLogWriter.js';
import { handleJsonRpc } from '../src/rpc/handleJsonRpc.js';
import { defineRpcMethod, type RegisteredMethod, type RpcContext } from '../src/rpc/rpcMethod.js';
import type { SponsorshipTokenGate } from '../src/sponsorshipTokens/sponsorshipTokenGate.js';
import { openStore } from '../src/store/store.js';

/**
 * What recording a paymaster call in the request log costs, in-process and without the network or the
 * signing (which would drown a few µs in ~200 µs of noise): one JSON-RPC request through handleJsonRpc to a
 * trivial method that fills the trace as the sponsorship service does, in three variants, interleaved:
 *   off       no request log (sink absent);
 *   hot path  a sink whose record() is the recorder's own append, never flushed: the request path's share;
 *   recorded  the real recorder on SQLite (in memory: the write CPU, not the disk): batches of 500 rows,
 *             flushed as they fill: the whole CPU cost, background writes included.
 * Every 100 requests the loop yields to the event loop, as a server does between requests, so flushes run.
 *
 * Usage: `npx tsx bench/requestLog.ts [requests per slice]` (default 100,000; 5 rounds).
 */
const perSlice = Number(process.argv[2] ?? 100_000);
const rounds = 5;

const method = defineRpcMethod({
  method: 'pm_bench',
  params: z.array(z.unknown()),
  fastParams: (p) => (Array.isArray(p) ? p : undefined),
  family: () => 'sponsorship',
  async handler(_params, call) {
    call.report?.({ kind: 'op', mode: 'SPONSORED', sender: '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01' });
    return { mode: 'SPONSORED', paymasterAndData: '0x00' };
  },
  outcome: () => 'signs',
});
const methods = new Map<string, RegisteredMethod>([['pm_bench', method]]);
const free = () => Promise.resolve();
const ctx: RpcContext = {
  spend: { call: free, simulation: free, webhookCalls: free },
  caller: { origin: undefined, ip: '127.0.0.1', authorization: undefined },
  dapp: {
    id: '7238fa04-f236-4db5-86f5-b557a495546b',
    accountId: '11111111-f236-4db5-86f5-b557a495546b',
    name: 'bench',
    chainIds: [31337],
    apiKeyPrefix: 'pk.x',
    apiKeyCiphertext: '',
    limits: {},
    restrictions: NO_CALLER_RESTRICTIONS,
    createdAt: 0,
    updatedAt: 0,
  },
  chain: eip1193ChainRuntime({
    chainId: 31337,
    request: async () => null,
    entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789',
    paymaster: '0x1111111111111111111111111111111111111111',
  }),
  bounds: DEFAULT_SIGNING_BOUNDS,
  sponsorship: {} as SponsorshipService,
  tokenPaymaster: {} as TokenPaymasterService,
  sponsorshipTokens: {} as SponsorshipTokenGate,
  urlEntryPointVersion: '0.6',
};
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'pm_bench', params: [] });
const context = async () => ctx;
const log = { error: () => {} };

const store = await openStore({ storage: { kind: 'sqlite-memory' } });
const recorder = createRequestLogRecorder({
  repository: store.requestLog,
  writer: inThreadWriter(store.requestLog),
  now: Date.now,
  logger: { warn: (o, m) => console.error(m, o) },
  retentionDays: 7,
  maxRows: 100_000_000,
  bufferLimit: 1_000_000,
});
// The hot path alone: the same append, into a buffer that is emptied without writing.
let appended: unknown[] = [];
const appendOnly: RequestLogSink = {
  record(entry) {
    appended.push(entry);
    if (appended.length >= 500) appended = [];
  },
};

async function slice(sink: RequestLogSink | undefined): Promise<number> {
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < perSlice; i++) {
    await handleJsonRpc({
      body,
      methods,
      context,
      log,
      admit: free,
      ...(sink === undefined ? {} : { onCall: requestLogOnCall(sink) }),
    });
    if (i % 100 === 99) await new Promise((r) => setImmediate(r));
  }
  if (sink === recorder) await recorder.flush();
  const cpu = process.cpuUsage(cpu0);
  return ((cpu.user + cpu.system) * 1000) / perSlice; // ns per request
}

const variants: Array<[string, RequestLogSink | undefined]> = [
  ['off', undefined],
  ['hot path', appendOnly],
  ['recorded', recorder],
];
const totals = new Map<string, number[]>();
await slice(undefined); // warm-up
await slice(recorder);
for (let r = 0; r < rounds; r++) {
  for (const [name, sink] of variants) {
    const ns = await slice(sink);
    totals.set(name, [...(totals.get(name) ?? []), ns]);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const off = median(totals.get('off') ?? []);
console.log(`# ${perSlice} requests per slice, ${rounds} interleaved rounds, median CPU per request`);
for (const [name] of variants) {
  const ns = median(totals.get(name) ?? []);
  console.log(`${name.padEnd(9)} ${(ns / 1000).toFixed(2).padStart(6)} µs   (+${((ns - off) / 1000).toFixed(2)} µs)`);
}
const stats = recorder.stats();
console.log(`recorder: ${stats.written} rows written, ${stats.dropped} dropped, ${stats.failed} failed`);
await recorder.close();
await store.close();
