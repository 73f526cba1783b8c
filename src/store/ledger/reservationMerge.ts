import { z } from 'zod';
import type {
  CapUsage,
  ChainWindow,
  CounterState,
  LedgerCharge,
  ReservationKind,
  ReserveArgs,
  ReserveResult,
} from './ledgerTypes.js';

/**
 * One op key signed again by the dApp that has a reservation for it (the same op, or the same sender and nonce with
 * other callData or gas: another worst case, and of all of them the EntryPoint includes at most one). Pure: both
 * ledger paths (SQLite's batch, Kysely's transaction) read the row and the counters under their lock and apply the
 * plan. The ledger must hold, until settlement, at least the largest worst case ever signed for the key, and every
 * signature's window: an open row keeps per cap the larger amount (the difference is checked against the cap and
 * reserved), the later window on each scale, and the new signature's fingerprint; a row released (the chain passed
 * every earlier signature's window, so none of them can be included any more) is reopened with this request's
 * charges, checked in full; a settled or superseded row (the key's nonce is spent on chain) takes nothing.
 */
export const storedChargesSchema = z.array(
  z.object({ key: z.string(), unit: z.enum(['wei', 'usd', 'ops']), amount: z.string().regex(/^\d+$/) }),
);
export type StoredCharge = z.infer<typeof storedChargesSchema>[number];

export interface StoredReservation {
  readonly status: string;
  readonly charges: string;
  readonly valid_until: number | null;
  readonly last_block: number | null;
  readonly expires_at: number;
  readonly kind: string;
  readonly signatures: string | null;
}

export interface ReservationUpdate {
  readonly charges: string;
  readonly valid_until: number | null;
  readonly last_block: number | null;
  readonly expires_at: number;
  readonly kind: ReservationKind;
  readonly signatures: string | null;
}

export type MergePlan =
  | { readonly ok: true; readonly add: ReadonlyMap<string, bigint>; readonly row: ReservationUpdate | undefined }
  | Extract<ReserveResult, { ok: false; charge: LedgerCharge }>
  | Extract<ReserveResult, { ok: false; tooManySignatures: number }>;

/**
 * The signatures one row stands for at most: a wallet asks again a few times (stub, data, a retry); past this the
 * op key is refused (a new nonce signs), so a row's list, which settlement searches, stays small.
 */
export const MAX_SIGNATURES = 32;

/** A reservation's id: the dApp's own row for the op key (the same op key of another dApp is another row). */
export const reservationId = (dappId: string, opKey: string): string => `${dappId}:${opKey.toLowerCase()}`;

/**
 * Two kinds of signature in one row (the same op key signed in two modes): 'guarantee', whose settlement reads the
 * op's TokenCharged (paid: released; not paid: settled at its cost), is right for any mix; one kind stays itself.
 */
const mergedKind = (a: string, b: ReservationKind): ReservationKind => (a === b ? b : 'guarantee');

/** The row's fingerprints with `incoming` added (once), or undefined when that makes more than MAX_SIGNATURES. */
function withSignature(stored: string | null, incoming: string | undefined): string | null | undefined {
  if (incoming === undefined) return stored;
  if (stored === null || stored === '') return incoming;
  const list = stored.split(' ');
  if (list.includes(incoming)) return stored;
  return list.length >= MAX_SIGNATURES ? undefined : `${stored} ${incoming}`;
}

const maxOf = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.max(a, b));

/** The reservation's signed window; default: `expiresAt` in seconds. */
export const windowOf = (args: Pick<ReserveArgs, 'window' | 'expiresAt'>): ChainWindow =>
  args.window ?? { unit: 'seconds', until: Math.ceil(args.expiresAt / 1000) };

/** Charges in key order: the order counter rows are locked in, everywhere. */
export const sortedByKey = <T extends { readonly key: string }>(charges: readonly T[]): T[] =>
  [...charges].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

export const windowColumns = (w: ChainWindow) => ({
  valid_until: w.unit === 'seconds' ? w.until : null,
  last_block: w.unit === 'blocks' ? w.until : null,
});

/**
 * A new reservation's charges (in key order) against the counters as they stand plus what `taken` already holds
 * of them (earlier requests of a batch): what each key takes, all of them or none, or the first charge that does
 * not fit. The same key twice in one request (two policies cannot share a key; this is defence) adds up. A hold's
 * limit (`bindsWhenBusy`) is checked once every charge is counted, against its cap as this request leaves it.
 */
export function fitCharges(
  sorted: readonly LedgerCharge[],
  counters: ReadonlyMap<string, CounterState>,
  taken: ReadonlyMap<string, bigint> = new Map(),
): { readonly ok: true; readonly add: Map<string, bigint> } | Extract<ReserveResult, { charge: LedgerCharge }> {
  const add = new Map<string, bigint>();
  for (const c of sorted) {
    const state = counters.get(c.key) ?? { used: 0n, reserved: 0n };
    const before = (taken.get(c.key) ?? 0n) + (add.get(c.key) ?? 0n);
    if (c.bindsWhenBusy === undefined && state.used + state.reserved + before + c.amount > c.limit) {
      return { ok: false, charge: c, used: state.used, reserved: state.reserved + before };
    }
    add.set(c.key, (add.get(c.key) ?? 0n) + c.amount);
  }
  const held = busyHoldRefusal({ sorted, counters, taken, add });
  return held ?? { ok: true, add };
}

/**
 * The first hold (`bindsWhenBusy`) over its limit while its cap is busy, once `add` is counted (with `taken`, what
 * earlier requests of a batch hold); undefined when none. `add` holds this request's amounts per key (a merge's: the
 * deltas). A hold counter's `used` is always 0: it only ever holds.
 */
export function busyHoldRefusal(args: {
  readonly sorted: readonly LedgerCharge[];
  readonly counters: ReadonlyMap<string, CounterState>;
  readonly taken?: ReadonlyMap<string, bigint> | undefined;
  readonly add: ReadonlyMap<string, bigint>;
}): Extract<ReserveResult, { charge: LedgerCharge }> | undefined {
  const { sorted, counters, add } = args;
  const taken = args.taken ?? new Map<string, bigint>();
  for (const c of sorted) {
    if (c.bindsWhenBusy === undefined) continue;
    const cap = sorted.find((x) => x.key === c.bindsWhenBusy);
    if (cap === undefined) continue;
    const capState = counters.get(cap.key) ?? { used: 0n, reserved: 0n };
    const capReserved = capState.reserved + (taken.get(cap.key) ?? 0n) + (add.get(cap.key) ?? 0n);
    // Busy: this request's reservations and the others' take more than half of what is left of the cap.
    if (2n * capReserved <= cap.limit - capState.used) continue;
    const state = counters.get(c.key) ?? { used: 0n, reserved: 0n };
    const before = state.reserved + (taken.get(c.key) ?? 0n);
    const mine = add.get(c.key) ?? 0n;
    if (mine > 0n && state.used + before + mine > c.limit) {
      return { ok: false, charge: c, used: state.used, reserved: before };
    }
  }
  return undefined;
}

/** The `spend_reservations` row of a new reservation (its charges in key order). */
export const newReservationRow = (args: ReserveArgs, sorted: readonly LedgerCharge[]) => ({
  op_key: args.opKey?.toLowerCase() ?? null,
  signatures: args.signature ?? null,
  id: args.id,
  dapp_id: args.dappId,
  chain_id: args.chainId,
  user_op_hash: args.userOpHash ?? null,
  status: 'reserved',
  charges: chargesJson(sorted),
  expires_at: args.expiresAt,
  created_at: args.now,
  closed_at: null,
  actual_wei: null,
  paymaster: args.paymaster?.toLowerCase() ?? null,
  kind: args.kind ?? 'sponsored',
  ...windowColumns(windowOf(args)),
  ...itemColumns(args),
});

/** The itemized ledger's columns of a new reservation (migration 0019), in the order sqliteReserve.ts binds them. */
export const itemColumns = (args: Pick<ReserveArgs, 'item'>) => ({
  sender: args.item?.sender.toLowerCase() ?? null,
  end_user: args.item?.user ?? null,
  policy_ids: args.item === undefined ? null : JSON.stringify(args.item.policyIds),
  worst_case_wei: args.item?.worstCaseWei.toString() ?? null,
});

export const chargesJson = (charges: readonly { key: string; unit: string; amount: bigint | string }[]): string =>
  JSON.stringify(charges.map((c) => ({ key: c.key, unit: c.unit, amount: c.amount.toString() })));

/** `counters` must hold the state of every key in `incoming` (absent: a new, empty row). */
export function planMerge(args: {
  readonly existing: StoredReservation;
  readonly incoming: readonly LedgerCharge[];
  readonly window: ChainWindow;
  readonly expiresAt: number;
  readonly kind: ReservationKind;
  /** The new signature's fingerprint. */
  readonly signature?: string | undefined;
  readonly counters: ReadonlyMap<string, CounterState>;
}): MergePlan {
  const { existing, incoming, counters } = args;
  if (existing.status === 'settled' || existing.status === 'superseded')
    return { ok: true, add: new Map(), row: undefined };
  // Released: the chain passed every earlier signature's window, none of them can be included any more.
  const reopening = existing.status !== 'reserved';
  const signatures = reopening ? (args.signature ?? null) : withSignature(existing.signatures, args.signature);
  if (signatures === undefined) return { ok: false, tooManySignatures: MAX_SIGNATURES };
  const stored = new Map(
    reopening ? [] : storedChargesSchema.parse(JSON.parse(existing.charges)).map((c) => [c.key, c] as const),
  );
  const add = new Map<string, bigint>();
  for (const c of incoming) {
    const held = BigInt(stored.get(c.key)?.amount ?? '0');
    if (c.amount <= held) continue;
    const delta = c.amount - held;
    const state = counters.get(c.key) ?? { used: 0n, reserved: 0n };
    const before = add.get(c.key) ?? 0n;
    if (c.bindsWhenBusy === undefined && state.used + state.reserved + before + delta > c.limit) {
      return { ok: false, charge: c, used: state.used, reserved: state.reserved + before };
    }
    add.set(c.key, before + delta);
    stored.set(c.key, { key: c.key, unit: c.unit, amount: c.amount.toString() });
  }
  const busy = busyHoldRefusal({ sorted: incoming, counters, add });
  if (busy !== undefined) return busy;
  const w = windowColumns(args.window);
  const row: ReservationUpdate = reopening
    ? { charges: chargesJson([...stored.values()]), ...w, expires_at: args.expiresAt, kind: args.kind, signatures }
    : {
        charges: chargesJson([...stored.values()]),
        valid_until: maxOf(existing.valid_until, w.valid_until),
        last_block: maxOf(existing.last_block, w.last_block),
        expires_at: Math.max(existing.expires_at, args.expiresAt),
        kind: mergedKind(existing.kind, args.kind),
        signatures,
      };
  return { ok: true, add, row };
}

/**
 * The `usage` of a reservation that added `add` to counters that stood at `counters` (plus `taken` of earlier
 * requests of a batch), when the caller asked for it; else undefined. Pure, in memory.
 */
export function usageOf(args: {
  readonly report: boolean | undefined;
  readonly add: ReadonlyMap<string, bigint>;
  readonly counters: ReadonlyMap<string, CounterState>;
  readonly taken?: ReadonlyMap<string, bigint> | undefined;
}): { readonly usage?: CapUsage[] } {
  if (args.report !== true) return {};
  const usage: CapUsage[] = [];
  for (const [key, amount] of args.add) {
    const state = args.counters.get(key) ?? { used: 0n, reserved: 0n };
    const before = state.used + state.reserved + (args.taken?.get(key) ?? 0n);
    usage.push({ key, used: state.used, before, after: before + amount });
  }
  return { usage };
}
