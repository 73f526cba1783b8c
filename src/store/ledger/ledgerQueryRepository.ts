import {
  type ExpressionBuilder,
  type Kysely,
  type RawBuilder,
  type Selectable,
  type SelectQueryBuilder,
  sql,
} from 'kysely';
import type { DatabaseKind } from '../db/database.js';
import type { Database, SpendReservationsTable } from '../db/schema.js';
import { decimalSum, joinDecimalSum } from './decimalSum.js';
import { parseCharges } from './ledgerRows.js';
import { HOLD_KEY_PREFIX } from './ledgerTypes.js';

/**
 * The itemized ledger (docs/guides/ledger.md): a dApp's signed sponsorships as a finance team reads them, from
 * `spend_reservations` (every signed op has a row there: policyGate.ts). Read-only; every query is scoped to one
 * dApp. Pages are keyset-ordered on (created_at, id), so rows inserted while a caller pages never show twice nor
 * push one out. Sums of wei are exact (decimal strings: wei overflows 64 bits), see decimalSum.ts.
 */
export const LEDGER_STATUSES = ['reserved', 'included', 'reverted', 'expired', 'superseded', 'paid_by_user'] as const;
export type LedgerStatus = (typeof LEDGER_STATUSES)[number];
export const LEDGER_GROUPS = ['day', 'policy', 'user', 'chain'] as const;
export type LedgerGroup = (typeof LEDGER_GROUPS)[number];

export interface LedgerFilter {
  readonly dappId: string;
  /** Unix ms, inclusive. */
  readonly from?: number | undefined;
  /** Unix ms, exclusive. */
  readonly to?: number | undefined;
  readonly policyId?: string | undefined;
  /** Lower-case 0x hex. */
  readonly sender?: string | undefined;
  readonly user?: string | undefined;
  readonly status?: LedgerStatus | undefined;
  readonly chainId?: number | undefined;
}

/** A row's place in the order: pages continue strictly after (or before) it. */
export interface LedgerKey {
  readonly createdAt: number;
  readonly id: string;
}

export interface LedgerItem {
  readonly id: string;
  readonly chainId: number;
  readonly paymaster: string | null;
  readonly sender: string | null;
  readonly user: string | null;
  /** null on rows made before migration 0019. */
  readonly policyIds: readonly string[] | null;
  readonly mode: 'sponsored' | 'token';
  readonly status: LedgerStatus;
  readonly reservedWei: bigint | null;
  readonly charges: readonly { readonly key: string; readonly unit: string; readonly amount: string }[];
  readonly actualWei: bigint | null;
  readonly actualUsdMicros: bigint | null;
  /** The EntryPoint's userOpHash, or the op key of an op signed before its gas was final (chain/opKey.ts). */
  readonly userOpHash: string | null;
  readonly txHash: string | null;
  readonly block: number | null;
  readonly createdAt: number;
  readonly closedAt: number | null;
  /** Unix ms by which the signature's window has surely closed. */
  readonly expiresAt: number;
}

export interface LedgerTotals {
  readonly count: number;
  readonly reservedWei: bigint;
  readonly settledWei: bigint;
  /**
   * The USD value of the rows that have one; null when no row of the group has one (a sum of nothing priced is not
   * known to be $0 when some settled row had no price: ledgerWire.ts tells the two apart).
   */
  readonly settledUsdMicros: bigint | null;
  /** Settled rows with no USD value (no fresh price when they were settled): `settledUsdMicros` leaves them out. */
  readonly settledWithoutPrice: number;
}

export interface LedgerGroupRow extends LedgerTotals {
  /** 'YYYY-MM-DD' (UTC). */
  readonly day?: string;
  /** null: ops of no policy (the dApp had none, or rows made before migration 0019). */
  readonly policyId?: string | null;
  readonly user?: string | null;
  readonly chainId?: number;
}

export interface LedgerQueryRepository {
  /** One page: newest first after `after` (`order` desc, the default) or oldest first. */
  list(args: {
    readonly filter: LedgerFilter;
    readonly after?: LedgerKey | undefined;
    readonly limit: number;
    readonly order?: 'asc' | 'desc';
  }): Promise<LedgerItem[]>;
  /** Totals per group (in the order of `groupBy`'s dimensions); an op of two policies counts in each. */
  stats(args: { readonly filter: LedgerFilter; readonly groupBy: readonly LedgerGroup[] }): Promise<LedgerGroupRow[]>;
}

type Row = Selectable<SpendReservationsTable>;
type Eb = ExpressionBuilder<Database, 'spend_reservations'>;

const DAY_MS = 86_400_000;

function statusOf(r: Row): LedgerStatus {
  if (r.status === 'reserved') return 'reserved';
  if (r.status === 'settled') return r.success === 0 ? 'reverted' : 'included';
  // Its op key's nonce was used by another op (another dApp's signature, another paymaster or none): never paid.
  if (r.status === 'superseded') return 'superseded';
  // Released: by the chain passing its window, or (a guarantee) by the TokenCharged of the block it names.
  return r.settled_block === null ? 'expired' : 'paid_by_user';
}

const big = (v: string | null): bigint | null => (v === null ? null : BigInt(v));

function toItem(r: Row): LedgerItem {
  return {
    id: r.id,
    chainId: Number(r.chain_id),
    paymaster: r.paymaster,
    sender: r.sender,
    user: r.end_user,
    policyIds: r.policy_ids === null ? null : (JSON.parse(r.policy_ids) as string[]),
    mode: r.kind === 'guarantee' ? 'token' : 'sponsored',
    status: statusOf(r),
    reservedWei: big(r.worst_case_wei),
    // A hold counter (policies/holdCharges.ts) is how much of a cap the caller held, not a charge of the op.
    charges: parseCharges(r.charges).filter((c) => !c.key.startsWith(HOLD_KEY_PREFIX)),
    actualWei: big(r.actual_wei),
    actualUsdMicros: big(r.actual_usd_micros),
    userOpHash: r.user_op_hash,
    txHash: r.tx_hash,
    block: r.settled_block === null ? null : Number(r.settled_block),
    createdAt: Number(r.created_at),
    closedAt: r.closed_at === null ? null : Number(r.closed_at),
    expiresAt: Number(r.expires_at),
  };
}

function statusCondition(eb: Eb, status: LedgerStatus) {
  switch (status) {
    case 'reserved':
      return eb('status', '=', 'reserved');
    case 'included':
      return eb.and([eb('status', '=', 'settled'), eb.or([eb('success', 'is', null), eb('success', '=', 1)])]);
    case 'reverted':
      return eb.and([eb('status', '=', 'settled'), eb('success', '=', 0)]);
    case 'expired':
      return eb.and([eb('status', '=', 'released'), eb('settled_block', 'is', null)]);
    case 'superseded':
      return eb('status', '=', 'superseded');
    case 'paid_by_user':
      return eb.and([eb('status', '=', 'released'), eb('settled_block', 'is not', null)]);
  }
}

export function createLedgerQueryRepository(db: Kysely<Database>, kind: DatabaseKind): LedgerQueryRepository {
  // The policy ids are a JSON array: the id in quotes matches exactly one element (ids hold no quote).
  const hasPolicy = (policyId: string) => {
    const needle = JSON.stringify(policyId);
    return kind === 'postgres'
      ? sql<boolean>`strpos(policy_ids, ${needle}) > 0`
      : sql<boolean>`instr(policy_ids, ${needle}) > 0`;
  };
  const filtered = <O>(q: SelectQueryBuilder<Database, 'spend_reservations', O>, f: LedgerFilter) => {
    // A token-mode op the user prepaid (kind 'token') has a row for its bookkeeping (which dApp signed it, its
    // sponsorship token's jti) but is the user's own money, not a sponsorship: the ledger does not list it.
    let query = q.where('dapp_id', '=', f.dappId).where('kind', '!=', sql.lit('token'));
    if (f.from !== undefined) query = query.where('created_at', '>=', f.from);
    if (f.to !== undefined) query = query.where('created_at', '<', f.to);
    if (f.sender !== undefined) query = query.where('sender', '=', f.sender);
    if (f.user !== undefined) query = query.where('end_user', '=', f.user);
    if (f.chainId !== undefined) query = query.where('chain_id', '=', f.chainId);
    if (f.policyId !== undefined) query = query.where(hasPolicy(f.policyId));
    const status = f.status;
    if (status !== undefined) query = query.where((eb) => statusCondition(eb, status));
    return query;
  };

  const sumOf = (column: 'worst_case_wei' | 'actual_wei' | 'actual_usd_micros') => decimalSum(kind, column);
  const joined = (high: string | number | null, low: number | null): bigint => joinDecimalSum(kind, high, low);

  return {
    async list({ filter, after, limit, order = 'desc' }) {
      let query = filtered(db.selectFrom('spend_reservations').selectAll(), filter);
      if (after !== undefined) {
        const op = order === 'desc' ? '<' : '>';
        query = query.where((eb) =>
          eb.or([
            eb('created_at', op, after.createdAt),
            eb.and([eb('created_at', '=', after.createdAt), eb('id', op, after.id)]),
          ]),
        );
      }
      const rows = await query.orderBy('created_at', order).orderBy('id', order).limit(limit).execute();
      return rows.map(toItem);
    },

    async stats({ filter, groupBy }) {
      const dims = {
        day: sql<number>`created_at / ${sql.lit(DAY_MS)}`,
        policy: sql<string | null>`policy_ids`,
        user: sql<string | null>`end_user`,
        chain: sql<number>`chain_id`,
      } satisfies Record<LedgerGroup, RawBuilder<unknown>>;
      const reserved = sumOf('worst_case_wei');
      const settled = sumOf('actual_wei');
      const usd = sumOf('actual_usd_micros');
      let query = filtered(
        db
          .selectFrom('spend_reservations')
          .select([
            sql<number>`count(*)`.as('n'),
            reserved.high.as('reserved_high'),
            reserved.low.as('reserved_low'),
            settled.high.as('settled_high'),
            settled.low.as('settled_low'),
            usd.high.as('usd_high'),
            usd.low.as('usd_low'),
            sql<number>`count(actual_usd_micros)`.as('priced'),
            sql<number>`sum(case when status = 'settled' and actual_usd_micros is null then 1 else 0 end)`.as(
              'unpriced',
            ),
          ]),
        filter,
      );
      for (const g of groupBy) {
        const dim: RawBuilder<unknown> = dims[g];
        query = query.select(dim.as(`g_${g}`)).groupBy(dim);
      }
      const rows = (await query.execute()) as (Record<string, unknown> & {
        n: number | string;
        reserved_high: string | number | null;
        reserved_low: number | null;
        settled_high: string | number | null;
        settled_low: number | null;
        usd_high: string | number | null;
        usd_low: number | null;
        priced: number | string;
        unpriced: number | string | null;
      })[];
      // Per policy: each row of a set of policies counts in each of them, so groups are merged by key here.
      const merged = new Map<string, { group: Omit<LedgerGroupRow, keyof LedgerTotals>; totals: LedgerTotals }>();
      for (const r of rows) {
        const totals: LedgerTotals = {
          count: Number(r.n),
          reservedWei: joined(r.reserved_high, r.reserved_low),
          settledWei: joined(r.settled_high, r.settled_low),
          settledUsdMicros: Number(r.priced) === 0 ? null : joined(r.usd_high, r.usd_low),
          settledWithoutPrice: Number(r.unpriced ?? 0),
        };
        for (const group of groupsOf(r, groupBy)) {
          const key = JSON.stringify(group);
          const seen = merged.get(key);
          merged.set(key, { group, totals: seen === undefined ? totals : addTotals(seen.totals, totals) });
        }
      }
      return [...merged.values()]
        .map(({ group, totals }) => ({ ...group, ...totals }))
        .sort((a, b) => compareGroups(a, b, groupBy));
    },
  };
}

function addTotals(a: LedgerTotals, b: LedgerTotals): LedgerTotals {
  return {
    count: a.count + b.count,
    reservedWei: a.reservedWei + b.reservedWei,
    settledWei: a.settledWei + b.settledWei,
    settledUsdMicros:
      a.settledUsdMicros === null ? b.settledUsdMicros : a.settledUsdMicros + (b.settledUsdMicros ?? 0n),
    settledWithoutPrice: a.settledWithoutPrice + b.settledWithoutPrice,
  };
}

/** A result row's group(s): one, or one per policy of its set. */
function groupsOf(r: Record<string, unknown>, groupBy: readonly LedgerGroup[]) {
  let groups: Record<string, string | number | null>[] = [{}];
  for (const g of groupBy) {
    const v = r[`g_${g}`];
    if (g === 'day') {
      groups = groups.map((x) => ({ ...x, day: new Date(Number(v) * DAY_MS).toISOString().slice(0, 10) }));
    } else if (g === 'chain') {
      groups = groups.map((x) => ({ ...x, chainId: Number(v) }));
    } else if (g === 'user') {
      groups = groups.map((x) => ({ ...x, user: typeof v === 'string' ? v : null }));
    } else {
      const ids = typeof v === 'string' ? (JSON.parse(v) as string[]) : [];
      const each: (string | null)[] = ids.length === 0 ? [null] : ids;
      groups = groups.flatMap((x) => each.map((policyId) => ({ ...x, policyId })));
    }
  }
  return groups as Omit<LedgerGroupRow, keyof LedgerTotals>[];
}

function compareGroups(a: LedgerGroupRow, b: LedgerGroupRow, groupBy: readonly LedgerGroup[]): number {
  for (const g of groupBy) {
    const [x, y] =
      g === 'day'
        ? [a.day, b.day]
        : g === 'chain'
          ? [a.chainId, b.chainId]
          : g === 'user'
            ? [a.user, b.user]
            : [a.policyId, b.policyId];
    if (x === y) continue;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return x < y ? -1 : 1;
  }
  return 0;
}
