import pg from 'pg';
import type { AdminClient } from './adminClient.js';
import { type ClassifiedLoadResult, quantile } from './classifiedLoad.js';

/**
 * What bench/policyCluster.ts prints and checks after each phase: the answers (signed, cap denials, anything
 * else) with their latencies, and the ledger's view of the same phase (the policy's usage through the admin API,
 * the open reservations in the database).
 */
const ms = (v: number) => `${v.toFixed(1)} ms`;

/** Prints a phase's counts and latencies; true when exactly `cap` were signed and everything else was a cap denial. */
export function report(r: ClassifiedLoadResult, cap: number): boolean {
  const t = r.msToSigned;
  console.log(
    `   signed   ${String(r.signed).padStart(6)}  ${t === undefined ? '(cap not reached)' : `${(cap / (t / 1000)).toFixed(0)} signed/s up to the ${cap}th (${(t / 1000).toFixed(2)} s)`}` +
      `  p50 ${ms(quantile(r.signedMs, 0.5))}  p99 ${ms(quantile(r.signedMs, 0.99))}`,
  );
  if (r.capDenied > 0) {
    console.log(
      `   denied   ${String(r.capDenied).padStart(6)}  (-32012, rule cap)  p50 ${ms(quantile(r.deniedMs, 0.5))}  p99 ${ms(quantile(r.deniedMs, 0.99))}`,
    );
  }
  const total = r.signed + r.capDenied + r.other + r.errors;
  console.log(
    `   other failures ${r.other}, transport errors ${r.errors}; ${total} answers in ${r.seconds.toFixed(2)} s (${(total / r.seconds).toFixed(0)} req/s overall)`,
  );
  for (const s of r.otherSamples) console.log(`     e.g. ${s}`);
  const ok = r.signed === cap && r.other === 0 && r.errors === 0;
  if (r.capDenied === 0 && r.signed === cap) console.log(`   all ${cap} signed`);
  else console.log(ok ? `   cap held: ${r.signed} of ${cap}` : `   FAIL: ${r.signed} signed against a cap of ${cap}`);
  return ok;
}

/** The ledger's view: the policy's usage through the admin API, and the open reservations in the database. */
export async function checkLedger(args: {
  admin: AdminClient;
  databaseUrl: string;
  dapp: { dappId: string; policyId: string };
  senders: readonly string[];
  expectDapp: number;
  expectSender?: number;
}): Promise<boolean> {
  const { admin, dapp } = args;
  const pool = new pg.Pool({ connectionString: args.databaseUrl, max: 1 });
  let open: number;
  try {
    const q = await pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM spend_reservations WHERE dapp_id = $1 AND status = 'reserved'",
      [dapp.dappId],
    );
    open = Number(q.rows[0]?.n ?? -1);
  } finally {
    await pool.end();
  }
  const caps = await admin.usage(dapp.dappId, dapp.policyId);
  const dappOps = caps.find((c) => c.scope === 'dapp' && c.unit === 'ops');
  const dappUsd = caps.find((c) => c.scope === 'dapp' && c.unit === 'usd');
  let ok = open === args.expectDapp;
  const parts = [`${open} open reservations`];
  if (dappOps !== undefined) {
    ok = ok && dappOps.reserved === String(args.expectDapp) && dappOps.used === '0';
    parts.push(`dApp ops cap reserved ${dappOps.reserved} of ${dappOps.limit}`);
  }
  if (dappUsd !== undefined) parts.push(`dApp USD cap reserved $${dappUsd.reserved} of $${dappUsd.limit}`);
  if (args.expectSender !== undefined) {
    const perSender: string[] = [];
    for (const s of args.senders) {
      const c = (await admin.usage(dapp.dappId, dapp.policyId, s)).find(
        (x) => x.scope === 'sender' && x.unit === 'ops',
      );
      perSender.push(c?.reserved ?? 'none');
      ok = ok && c?.reserved === String(args.expectSender);
    }
    parts.push(`per-sender ops reserved [${perSender.join(', ')}] of ${args.expectSender} each`);
  } else {
    const s = args.senders[0];
    const c =
      s === undefined
        ? undefined
        : (await admin.usage(dapp.dappId, dapp.policyId, s)).find((x) => x.scope === 'sender' && x.unit === 'usd');
    if (c !== undefined) parts.push(`sender USD cap reserved $${c.reserved} of $${c.limit}`);
  }
  console.log(`   ledger: ${parts.join('; ')}${ok ? '' : `  FAIL: expected ${args.expectDapp} open reservations`}`);
  return ok;
}
