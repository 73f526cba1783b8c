import type pg from 'pg';
import { batchWhileBusy } from '../async/batchWhileBusy.js';

/**
 * Rate-limit counts shared through PostgreSQL (table `rate_limits`, migration 0005), written in batches: the spends
 * that wait in this process while a write is in flight go to the database together, one multi-row upsert for all of
 * their keys (summed per key, in key order so two processes' batches never deadlock), instead of one upsert per
 * spend. Every paymaster call spends a per-IP and a per-key count, so with one upsert each every request wrote the
 * same hot rows twice, queued on their row locks across processes (issue 21).
 *
 * Exact, as one upsert per spend was: the database adds each batch's total atomically and returns the key's count,
 * and the spends of a key in a batch take the places up to it in arrival order, so across processes exactly the
 * budget's worth of spends is admitted per window; a refused spend is counted too. The window is fixed, as the
 * library's it replaces (rate-limiter-flexible's PostgreSQL store: same table, same `prefix:key` rows, same upsert
 * rule), so processes of both kinds count together during an upgrade. A key over its budget is refused from memory
 * until its window ends, without a query. If the database cannot be reached, the batch is counted in this
 * process's memory (each spend's `fallback`) rather than failing requests.
 */
export interface CountSpend {
  /** The row's key: the limit's prefix and the counted key. */
  readonly key: string;
  readonly cost: number;
  readonly points: number;
  readonly windowMs: number;
  /** Counts the spend in this process's memory: how a spend of a batch the database refused is counted. */
  readonly fallback: () => Promise<CountResult>;
}

/** The spend's outcome: admitted, or refused until the window's end (ms from now). */
export type CountResult = { readonly ok: true } | { readonly ok: false; readonly msBeforeNext: number };

/** At most this many spends per statement (three parameters each: well under PostgreSQL's 65,535). */
export const MAX_SPENDS_PER_BATCH = 1000;
/** Blocked keys remembered at most (forgetting one only costs a query). */
const MAX_BLOCKED = 100_000;

export function createPgBatchedCounts(deps: {
  readonly pool: pg.Pool;
  readonly tableName?: string;
  readonly now?: () => number;
}): (spend: CountSpend) => Promise<CountResult> {
  const table = deps.tableName ?? 'rate_limits';
  const now = deps.now ?? Date.now;
  /** Keys over their budget: refused from memory until the window ends (unix ms). */
  const blocked = new Map<string, number>();

  /** Each spend's outcome, by position. */
  const write = async (batch: readonly CountSpend[]): Promise<CountResult[]> => {
    const results: CountResult[] = [];
    // Per key: the batch's total, the window it would open, the spends (by position) in arrival order.
    const keys = new Map<string, { total: number; windowMs: number; spends: number[] }>();
    batch.forEach((spend, at) => {
      const k = keys.get(spend.key);
      if (k === undefined) keys.set(spend.key, { total: spend.cost, windowMs: spend.windowMs, spends: [at] });
      else {
        k.total += spend.cost;
        k.spends.push(at);
      }
    });
    const sorted = [...keys].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const at = now();
    const values: unknown[] = [at];
    const rows = sorted.map(([key, k]) => {
      values.push(key, k.total, at + k.windowMs);
      const i = values.length;
      return `($${i - 2}, $${i - 1}::integer, $${i}::bigint)`;
    });
    const res = await deps.pool.query<{ key: string; points: number; expire: string | null }>({
      text:
        `INSERT INTO ${table} (key, points, expire) VALUES ${rows.join(', ')} ` +
        `ON CONFLICT (key) DO UPDATE SET ` +
        `points = CASE WHEN ${table}.expire <= $1 THEN EXCLUDED.points ELSE ${table}.points + EXCLUDED.points END, ` +
        `expire = CASE WHEN ${table}.expire <= $1 THEN EXCLUDED.expire ELSE ${table}.expire END ` +
        'RETURNING key, points, expire',
      values,
    });
    const counted = new Map(res.rows.map((r) => [r.key, r]));
    for (const [key, k] of sorted) {
      const row = counted.get(key);
      const points = row?.points ?? k.total;
      const expire = row?.expire === null || row?.expire === undefined ? at + k.windowMs : Number(row.expire);
      // The batch took the places (points - total, points]: each spend in arrival order.
      let place = points - k.total;
      let budget = 0;
      for (const i of k.spends) {
        const spend = batch[i];
        if (spend === undefined) continue;
        budget = spend.points;
        place += spend.cost;
        // Never longer than the window: a row another process started a few ms after this batch's clock read
        // would otherwise say window + 1 ms (seen in the two-process test).
        const wait = Math.min(spend.windowMs, Math.max(0, expire - at));
        results[i] = place <= spend.points ? { ok: true } : { ok: false, msBeforeNext: wait };
      }
      if (points > budget) {
        if (blocked.size >= MAX_BLOCKED) blocked.clear();
        blocked.set(key, expire);
      }
    }
    return results;
  };
  // A batch the database refused: each spend is counted by its own fallback.
  const countBatched = batchWhileBusy({ max: MAX_SPENDS_PER_BATCH, run: write, alone: (spend) => spend.fallback() });

  return (spend) => {
    const until = blocked.get(spend.key);
    if (until !== undefined) {
      const left = until - now();
      if (left > 0) return Promise.resolve({ ok: false, msBeforeNext: left });
      blocked.delete(spend.key);
    }
    return countBatched(spend);
  };
}
