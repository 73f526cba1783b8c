import type { Kysely } from 'kysely';
import { batchWhileBusy } from '../../async/batchWhileBusy.js';
import type { Database } from '../db/schema.js';
import { ensureCounters, lockCounters, type Trx } from './ledgerRows.js';
import type { LedgerCharge, ReserveArgs, ReserveResult } from './ledgerTypes.js';
import { fitCharges, newReservationRow, sortedByKey, usageOf } from './reservationMerge.js';
import { spendTokenUses, tokenUseKey } from './tokenUseRows.js';

/**
 * PostgreSQL: the reservations waiting in this process go to the database together, in one transaction, instead of
 * one transaction each. A reservation under a dApp-wide cap locks that cap's counter row until its commit, so every
 * sponsorship of the dApp queues on one row across processes; with a transaction per request each held it for ~7
 * round trips of a busy event loop (483-543 signed/s on two workers against 1,232-1,483 without a policy, issue 21).
 * Here one batch holds it once for all its requests: the policy versions read under a share lock, the counter rows
 * created if missing and locked in key order (the single path's lock order, so the two never deadlock), every
 * request decided in arrival order against the counters as the batch moves them (the same rule as the single
 * path: a request reserves all its charges or none), one UPDATE per key moved, one INSERT of the reservations.
 *
 * Batches form by themselves: a request arriving while a batch is in flight waits for it and goes in the next one
 * (at most MAX_BATCH). What a batch does not decide goes through `alone` (the single-request path, with its merge
 * of an id already reserved): an id already in the table, an id twice in the batch (the later one), and every
 * request of a batch whose transaction failed (a unique violation from another process's same op, a lost
 * connection), so one bad request never fails the others.
 */
export const MAX_BATCH = 200;

export function createPgReserveBatcher(deps: {
  readonly db: Kysely<Database>;
  readonly alone: (args: ReserveArgs) => Promise<ReserveResult>;
}): (args: ReserveArgs) => Promise<ReserveResult> {
  return batchWhileBusy({
    max: MAX_BATCH,
    // Nothing of a failed batch was written: each goes alone, with the single path's own retries and errors.
    run: (batch: readonly ReserveArgs[]) => deps.db.transaction().execute((trx) => decide(trx, batch)),
    alone: deps.alone,
  });
}

/** Each request's result by position; undefined for one left to the single path. */
async function decide(trx: Trx, requests: readonly ReserveArgs[]): Promise<(ReserveResult | undefined)[]> {
  const results: (ReserveResult | undefined)[] = requests.map(() => undefined);
  const batch = requests.map((args, at) => ({ args, at }));

  // The policy versions first, under a share lock that a policy write's UPDATE waits for (see reserveOnce).
  const dappIds = [...new Set(batch.filter((w) => w.args.policyVersion !== undefined).map((w) => w.args.dappId))];
  const versions = new Map<string, number>();
  if (dappIds.length > 0) {
    const rows = await trx
      .selectFrom('policy_versions')
      .select(['dapp_id', 'version'])
      .where('dapp_id', 'in', dappIds)
      .forShare()
      .execute();
    for (const r of rows) versions.set(r.dapp_id, Number(r.version));
  }
  const current: typeof batch = [];
  for (const w of batch) {
    const wanted = w.args.policyVersion;
    const version = versions.get(w.args.dappId) ?? 0;
    if (wanted !== undefined && version !== wanted) results[w.at] = { ok: false, policyVersion: version };
    else current.push(w);
  }

  // An id already reserved (the same op signed again) merges on the single path; so does the second of one id here.
  const ids = [...new Set(current.map((w) => w.args.id))];
  const taken =
    ids.length === 0
      ? new Set<string>()
      : new Set(
          (await trx.selectFrom('spend_reservations').select('id').where('id', 'in', ids).execute()).map((r) => r.id),
        );
  const seen = new Set<string>();
  const fresh: typeof batch = [];
  for (const w of current) {
    if (taken.has(w.args.id) || seen.has(w.args.id)) continue;
    seen.add(w.args.id);
    fresh.push(w);
  }
  if (fresh.length === 0) return results;

  // Counter rows: created if missing (per dApp, as the single path), then locked in key order.
  const byDapp = new Map<string, Map<string, number | undefined>>();
  for (const w of fresh) {
    const rows = byDapp.get(w.args.dappId) ?? new Map<string, number | undefined>();
    for (const c of w.args.charges) rows.set(c.key, c.windowEnd);
    byDapp.set(w.args.dappId, rows);
  }
  for (const [dappId, rows] of byDapp) {
    await ensureCounters(
      trx,
      dappId,
      [...rows].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, windowEnd]) => ({ key, windowEnd })),
    );
  }
  const states = await lockCounters(
    trx,
    'postgres',
    fresh.flatMap((w) => w.args.charges.map((c) => c.key)),
  );

  // Each request in arrival order, against the counters as the batch has moved them.
  const moved = new Map<string, bigint>();
  const accepted: { args: ReserveArgs; sorted: LedgerCharge[]; at: number; add: Map<string, bigint> }[] = [];
  for (const w of fresh) {
    const sorted = sortedByKey(w.args.charges);
    const fit = fitCharges(sorted, states, moved);
    if (!fit.ok) {
      results[w.at] = fit;
      continue;
    }
    results[w.at] = {
      ok: true,
      ...usageOf({ report: w.args.reportUsage, add: fit.add, counters: states, taken: moved }),
    };
    for (const [key, amount] of fit.add) moved.set(key, (moved.get(key) ?? 0n) + amount);
    accepted.push({ args: w.args, sorted, at: w.at, add: fit.add });
  }

  // The accepted requests' sponsorship tokens, spent in this transaction (after the caps: a refused request's token
  // stays usable). One not spent now was spent already: refused as a replay and its charges taken back out (a
  // request after it in this batch was decided with them counted: conservative, never over a cap).
  const spent = await spendTokenUses(
    trx,
    accepted.flatMap((a) => (a.args.tokenUse === undefined ? [] : [{ dappId: a.args.dappId, ...a.args.tokenUse }])),
  );
  for (let i = accepted.length - 1; i >= 0; i--) {
    const a = accepted[i];
    if (
      a === undefined ||
      a.args.tokenUse === undefined ||
      spent.has(tokenUseKey(a.args.dappId, a.args.tokenUse.jti))
    ) {
      continue;
    }
    results[a.at] = { ok: false, tokenReplayed: true };
    for (const [key, amount] of a.add) moved.set(key, (moved.get(key) ?? 0n) - amount);
    accepted.splice(i, 1);
  }

  for (const key of [...moved.keys()].sort()) {
    const state = states.get(key) ?? { used: 0n, reserved: 0n };
    await trx
      .updateTable('spend_counters')
      .set({ reserved: (state.reserved + (moved.get(key) ?? 0n)).toString() })
      .where('key', '=', key)
      .execute();
  }
  if (accepted.length > 0) {
    await trx
      .insertInto('spend_reservations')
      .values(accepted.map(({ args, sorted }) => newReservationRow(args, sorted)))
      .execute();
  }
  return results;
}
