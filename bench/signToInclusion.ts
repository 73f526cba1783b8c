import { writeFileSync } from 'node:fs';
import { startBiconomyBundlerFront } from '../test/helpers/altoBundler.js';
import { stubErrorCatalogue } from '../test/helpers/sdkE2e.js';
import { startSdkE2eV07 } from '../test/helpers/sdkE2eV07.js';
import { probeBundlerFloor } from './bundlerFloorProbe.js';
import { type OpTiming, opTiming } from './opTiming.js';
import type { FlowContext, SdkFlow } from './sdkFlow.js';
import { SPONSORED_FLOWS } from './sponsoredFlows.js';
import { TOKEN_FLOWS } from './tokenFlows.js';

/**
 * How long the client SDKs hold a Patron signature before the chain includes its op (issue 31: keep the default
 * validity window as short as clients need). Each flow (sponsoredFlows.ts, tokenFlows.ts) sends N ops, one at a time,
 * in rounds with the other flows, through Patron's paymaster URL and a real bundler (alto) to the in-process dev
 * chain; per op it records t0 (Patron answered the signing call), t1 (the SDK sent eth_sendUserOperation), t2 (the
 * receipt came back), the block's timestamp and the validUntil signed (opTiming.ts), and prints per flow the
 * min/median/max of t1 − t0, t2 − t0 and the validity left at submission (validUntil − t1).
 *
 * What it cannot measure: a human. The accounts' owners are local keys that sign in about a millisecond; a wallet
 * prompt or a passkey comes between t0 and t1 in every flow here (the account signs the userOpHash, which covers
 * the paymaster's fields, after the paymaster answered). And the dev chain mines at once: alto bundles within its
 * 100 ms poll, where a real chain adds its block time and the bundler's own cadence. See bench/README.md.
 *
 * Last, alto's floor on the validity left at submission, probed with short windows (bundlerFloorProbe.ts).
 *
 * `npm run bench:sign-to-inclusion [-- ops per flow]` (default 10); `BENCH_FLOWS=viem,0.6` runs the flows whose
 * name or `v<EntryPoint>` contains any of those words; `BENCH_FLOOR_PROBE=off` skips the probe; `BENCH_JSON=<file>`
 * writes every op's times there.
 */
const opsPerFlow = Number(process.argv[2] ?? 10);
if (!Number.isSafeInteger(opsPerFlow) || opsPerFlow < 1) throw new Error('ops per flow must be a positive integer');
const only = (process.env.BENCH_FLOWS ?? '').split(',').filter((w) => w !== '');
const label = (f: SdkFlow) => `${f.name} v${f.version}`;
const flows = [...SPONSORED_FLOWS, ...TOKEN_FLOWS].filter(
  (f) => only.length === 0 || only.some((w) => label(f).includes(w)),
);

interface FlowResult {
  readonly flow: SdkFlow;
  readonly ops: readonly OpTiming[];
}

/**
 * Every flow's account and clients first, then N rounds of one op per flow in turn, so that every flow sees the
 * same machine and the same chain (a busy VM or a longer chain slows whatever runs at that moment).
 */
async function runFlows(ctx: FlowContext): Promise<FlowResult[]> {
  const started = [];
  for (const flow of flows) started.push({ flow, send: await flow.start(ctx), ops: [] as OpTiming[] });
  for (let i = 0; i < opsPerFlow; i++) {
    for (const { flow, send, ops } of started) {
      const from = ctx.x.calls.length;
      const op = await send();
      const t2 = Date.now();
      ops.push(await opTiming({ x: ctx.x, version: flow.version, from, op, t2 }));
    }
  }
  return started.map(({ flow, ops }) => ({ flow, ops }));
}

/** min / median / max, by nearest rank (the median of 10 is the 5th). */
function spread(values: readonly number[], digits = 0): string {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => (s[Math.max(0, Math.ceil(q * s.length) - 1)] ?? Number.NaN).toFixed(digits);
  return `${at(0)} / ${at(0.5)} / ${at(1)}`;
}
const distinct = (values: readonly unknown[]) => [...new Set(values.map((v) => String(v ?? '-')))].join(',');
/** What printFlow shows per flow, from each op's times: label, value, decimals. */
const FLOW_ROWS: readonly (readonly [string, (o: OpTiming) => number, number])[] = [
  ['window signed (validUntil − t0), s', (o) => o.validUntil - o.t0 / 1000, 1],
  ['t1 − t0 (signature → sent), ms', (o) => o.t1 - o.t0, 0],
  ['t2 − t0 (signature → receipt back), ms', (o) => o.t2 - o.t0, 0],
  // Block timestamps are whole seconds: against t0's second.
  ["block timestamp − t0's second, s", (o) => o.blockTimestamp - Math.floor(o.t0 / 1000), 0],
  ['validUntil − t1 (left at submission), s', (o) => o.validUntil - o.t1 / 1000, 1],
];

function printFlow({ flow, ops }: FlowResult): void {
  console.log(`\n${label(flow)}  (${ops.length} ops)`);
  console.log(`  expiry asked: ${distinct(ops.map((o) => o.askedSeconds))} s`);
  console.log(`  signing calls per op: ${distinct(ops.map((o) => o.signingCalls.join(' + ')))}`);
  for (const [what, value, digits] of FLOW_ROWS) console.log(`  ${what.padEnd(44)}${spread(ops.map(value), digits)}`);
  const between = (o: OpTiming | undefined) => o?.between.join(' → ') || 'none';
  console.log(`  calls between signature and send: op 1 ${between(ops[0])}; op ${ops.length} ${between(ops.at(-1))}`);
}

function printSummary(results: readonly FlowResult[]): void {
  const all = results.flatMap((r) => r.ops);
  console.log('\nmin / median / max over the flows (ms; validity in s)');
  console.log('| flow | EntryPoint | N | asked s | t1 − t0 | t2 − t0 | validUntil − t1 |');
  console.log('|---|---|---|---|---|---|---|');
  for (const { flow, ops } of results) {
    const cells = [
      flow.name,
      `v${flow.version}`,
      String(ops.length),
      distinct(ops.map((o) => o.askedSeconds)),
      spread(ops.map((o) => o.t1 - o.t0)),
      spread(ops.map((o) => o.t2 - o.t0)),
      spread(
        ops.map((o) => o.validUntil - o.t1 / 1000),
        1,
      ),
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
  console.log(
    `\nall ${all.length} ops: t1 − t0 ${spread(all.map((o) => o.t1 - o.t0))} ms; t2 − t0 ${spread(all.map((o) => o.t2 - o.t0))} ms`,
  );
}

const started = Date.now();
const { e2e: x, close } = await startSdkE2eV07({ tokens: true, bundleV06: true });
// @biconomy/account downloads Biconomy's error catalogue on a refusal: answered locally (no network here).
const catalogue = stubErrorCatalogue();
const front = await startBiconomyBundlerFront({ alto: x.alto, chainId: x.chainId });
try {
  const { defaultExpirySeconds, maxExpirySeconds } = x.ctx.deps.config.paymaster.sponsorship;
  console.log(
    `set-up ${((Date.now() - started) / 1000).toFixed(1)} s; Patron signs ${defaultExpirySeconds} s by default, at most ${maxExpirySeconds} s`,
  );
  const results = await runFlows({ x, biconomyBundlerUrl: front.url });
  for (const result of results) printFlow(result);
  printSummary(results);
  const json = process.env.BENCH_JSON;
  if (json !== undefined) {
    writeFileSync(
      json,
      JSON.stringify(
        results.map(({ flow, ops }) => ({ flow: label(flow), ops })),
        null,
        1,
      ),
    );
  }
  if (process.env.BENCH_FLOOR_PROBE !== 'off') {
    console.log("\nalto's floor (unsafe mode): one v0.7 op per expiryDuration asked");
    for (const { expiry, outcome } of await probeBundlerFloor(x)) console.log(`  ${expiry} s: ${outcome}`);
  }
  console.log(`\nrun ${((Date.now() - started) / 1000).toFixed(1)} s`);
} finally {
  await front.close();
  catalogue.restore();
  await close();
}
