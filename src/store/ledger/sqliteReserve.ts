import type BetterSqlite3 from 'better-sqlite3';
import { sqlitePerTurn } from '../db/sqlitePerTurn.js';
import { isUniqueViolation } from '../db/uniqueViolation.js';
import type { CapUsage, LedgerCharge, ReserveArgs, ReserveResult } from './ledgerTypes.js';
import {
  busyHoldRefusal,
  chargesJson,
  itemColumns,
  planMerge,
  type StoredReservation,
  usageOf,
  windowColumns,
  windowOf,
} from './reservationMerge.js';
import { SQLITE_TOKEN_SPEND } from './sqliteTokenSpend.js';

/**
 * The spend ledger's reservations on SQLite, synchronous and grouped: the reservations asked for within one turn
 * of the event loop are made in one `BEGIN IMMEDIATE` transaction of prepared statements (better-sqlite3;
 * sqlitePerTurn.ts says why, and when a batch hands its requests back to the asynchronous path), each all-or-none
 * (it writes only once every check passed) and checked against the counters as the ones before it left them. Why
 * not Kysely: through it the same work was ~5 statements compiled anew, run a loop turn apart, with every concurrent
 * request queued on the one connection (CPU per sponsored request ×2.8, p99 in seconds).
 *
 * Inside the batch each reservation first checks the dApp's policy version (when the caller gives the one it
 * evaluated), then, for an id it already has (the same op signed again), merges into it (reservationMerge.ts):
 * looked up only when the insert finds the id taken, or a cap refuses, so a new op pays no extra read.
 */
/** The result, or undefined when the caller must take the asynchronous path. */
export type SqliteReserve = (args: ReserveArgs) => Promise<ReserveResult | undefined>;

const hasHolds = (charges: readonly LedgerCharge[]): boolean => charges.some((c) => c.bindsWhenBusy !== undefined);

export function createSqliteReserve(sqlite: BetterSqlite3.Database): SqliteReserve {
  const ensure = sqlite.prepare(
    `INSERT INTO spend_counters (key, dapp_id, window_end, used, reserved) VALUES (?, ?, ?, '0', '0')
     ON CONFLICT (key) DO NOTHING`,
  );
  // A request's keys read and written with one statement each, prepared once per number of keys (a request has a
  // few caps): fewer round trips through the driver, which is most of a reservation's CPU.
  const byArity = <S>(build: (n: number) => S) => {
    const prepared = new Map<number, S>();
    return (n: number): S => {
      let s = prepared.get(n);
      if (s === undefined) {
        s = build(n);
        prepared.set(n, s);
      }
      return s;
    };
  };
  const marks = (n: number) => Array(n).fill('?').join(', ');
  const readStatement = byArity((n) =>
    sqlite.prepare<string[], { key: string; used: string; reserved: string }>(
      `SELECT key, used, reserved FROM spend_counters WHERE key IN (${marks(n)})`,
    ),
  );
  const writeStatement = byArity((n) =>
    sqlite.prepare<string[]>(
      `UPDATE spend_counters SET reserved = CASE key ${Array(n).fill('WHEN ? THEN ?').join(' ')} END ` +
        `WHERE key IN (${marks(n)})`,
    ),
  );
  const insert = sqlite.prepare(
    `INSERT INTO spend_reservations (id, dapp_id, chain_id, user_op_hash, status, charges, expires_at, created_at,
       paymaster, kind, valid_until, last_block, sender, end_user, policy_ids, worst_case_wei, op_key, signatures)
     VALUES (?, ?, ?, ?, 'reserved', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const version = sqlite.prepare<[string], number>('SELECT version FROM policy_versions WHERE dapp_id = ?').pluck();
  const existing = sqlite.prepare<[string], StoredReservation>(
    'SELECT status, charges, valid_until, last_block, expires_at, kind, signatures FROM spend_reservations WHERE id = ?',
  );
  const reopen = sqlite.prepare(
    `UPDATE spend_reservations SET status = 'reserved', closed_at = NULL, actual_wei = NULL, deposit_wei = NULL,
       actual_usd_micros = NULL,
       tx_hash = NULL, success = NULL, charges = ?,
       valid_until = ?, last_block = ?, expires_at = ?, kind = ?, signatures = ? WHERE id = ?`,
  );

  const tokenSpend = sqlite.prepare<[string, string, number, number]>(SQLITE_TOKEN_SPEND);
  /** The request's token spent now (true), or already spent (false); true when it carries none. */
  const spendToken = (args: ReserveArgs): boolean =>
    args.tokenUse === undefined ||
    tokenSpend.run(args.dappId, args.tokenUse.jti, args.tokenUse.expiresAt, args.tokenUse.nowSeconds).changes > 0;

  /** The counters of `keys` as they are now (missing rows are created empty). */
  const countersOf = (args: ReserveArgs, keys: readonly string[]) => {
    const rows = new Map(
      keys.length === 0
        ? []
        : readStatement(keys.length)
            .all(...keys)
            .map((r) => [r.key, { used: BigInt(r.used), reserved: BigInt(r.reserved) }] as const),
    );
    for (const c of args.charges) if (!rows.has(c.key)) ensure.run(c.key, args.dappId, c.windowEnd ?? null);
    return rows;
  };

  /** The same id again: see reservationMerge.ts. `spent`: the request's token was already spent by this attempt. */
  const merge = (args: ReserveArgs, row: StoredReservation, spent: boolean): ReserveResult => {
    const keys = [...new Set(args.charges.map((c) => c.key))];
    const counters = countersOf(args, keys);
    const plan = planMerge({
      existing: row,
      incoming: [...args.charges].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
      window: windowOf(args),
      expiresAt: args.expiresAt,
      kind: args.kind ?? 'sponsored',
      signature: args.signature,
      counters,
    });
    if (!plan.ok) return plan;
    if (!spent && !spendToken(args)) return { ok: false, tokenReplayed: true };
    if (plan.add.size > 0) {
      const cases: string[] = [];
      for (const [key, add] of plan.add) cases.push(key, ((counters.get(key)?.reserved ?? 0n) + add).toString());
      writeStatement(plan.add.size).run(...cases, ...plan.add.keys());
    }
    if (plan.row !== undefined) {
      const r = plan.row;
      reopen.run(r.charges, r.valid_until, r.last_block, r.expires_at, r.kind, r.signatures, args.id);
    }
    return { ok: true, ...usageOf({ report: args.reportUsage, add: plan.add, counters }) };
  };

  /**
   * One reservation, inside the batch's transaction. No savepoint of its own: it writes only once every check
   * passed, the token's jti first (a replay writes nothing else), then the reservation row (a duplicate id throws
   * before any counter moved); a refusal leaves at most the empty counter rows it created, which are what the next
   * reservation would create anyway. A cap's refusal comes before the token is spent: the token stays usable.
   */
  const reserveOne = (args: ReserveArgs): ReserveResult => {
    if (args.policyVersion !== undefined) {
      const current = version.get(args.dappId) ?? 0;
      if (current !== args.policyVersion) return { ok: false, policyVersion: current };
    }
    const sorted = [...args.charges].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const keys = [...new Set(sorted.map((c) => c.key))];
    const rows = new Map(
      keys.length === 0
        ? []
        : readStatement(keys.length)
            .all(...keys)
            .map((r) => [r.key, r]),
    );
    const pending = new Map<string, { used: bigint; reserved: bigint; add: bigint }>();
    for (const c of sorted) {
      let state = pending.get(c.key);
      if (state === undefined) {
        const row = rows.get(c.key);
        // Missing under our write lock: created empty, so nothing to read back.
        if (row === undefined) ensure.run(c.key, args.dappId, c.windowEnd ?? null);
        state = { used: BigInt(row?.used ?? '0'), reserved: BigInt(row?.reserved ?? '0'), add: 0n };
        pending.set(c.key, state);
      }
      if (c.bindsWhenBusy === undefined && state.used + state.reserved + state.add + c.amount > c.limit) {
        const row = existing.get(args.id);
        if (row !== undefined) return merge(args, row, false);
        return { ok: false, charge: c, used: state.used, reserved: state.reserved + state.add };
      }
      state.add += c.amount;
    }
    if (hasHolds(sorted)) {
      const counters = new Map([...pending].map(([k, st]) => [k, { used: st.used, reserved: st.reserved }]));
      const add = new Map([...pending].map(([k, st]) => [k, st.add]));
      const busy = busyHoldRefusal({ sorted, counters, add });
      if (busy !== undefined) {
        const row = existing.get(args.id);
        return row === undefined ? busy : merge(args, row, false);
      }
    }
    if (!spendToken(args)) return { ok: false, tokenReplayed: true };
    const w = windowColumns(windowOf(args));
    const item = itemColumns(args);
    try {
      insert.run(
        args.id,
        args.dappId,
        args.chainId,
        args.userOpHash ?? null,
        chargesJson(sorted),
        args.expiresAt,
        args.now,
        args.paymaster?.toLowerCase() ?? null,
        args.kind ?? 'sponsored',
        w.valid_until,
        w.last_block,
        item.sender,
        item.end_user,
        item.policy_ids,
        item.worst_case_wei,
        args.opKey?.toLowerCase() ?? null,
        args.signature ?? null,
      );
    } catch (err) {
      const row = isUniqueViolation(err) ? existing.get(args.id) : undefined;
      if (row === undefined) throw err;
      return merge(args, row, true);
    }
    if (pending.size > 0) {
      const cases: string[] = [];
      for (const [key, st] of pending) cases.push(key, (st.reserved + st.add).toString());
      writeStatement(pending.size).run(...cases, ...pending.keys());
    }
    if (args.reportUsage !== true) return { ok: true };
    const usage: CapUsage[] = [];
    for (const [key, st] of pending) {
      usage.push({ key, used: st.used, before: st.used + st.reserved, after: st.used + st.reserved + st.add });
    }
    return { ok: true, usage };
  };

  return sqlitePerTurn(sqlite, reserveOne);
}
