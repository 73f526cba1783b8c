import type { IssuedSignature } from '../paymaster/requestFacts.js';
import { type PaymasterKey, paymasterKey } from './paymasterKey.js';

/**
 * The live liabilities of one process: the worst case of every signature it issued that is neither included
 * (settlement saw its UserOperationEvent) nor expired by the chain (its head's timestamp past the signed
 * validUntil, or its block number past a v0.9 block window's last block: only then does the EntryPoint refuse
 * the op, whatever the server's clock says). Each is what the EntryPoint may still charge the paymaster's deposit. In memory and per process by
 * design (src/solvency/README.md): the ledger keeps worst cases only for ops under a wei cap, and every
 * signature, capped or not, is a liability.
 *
 * `record` runs on the request path: O(1), one compact entry keyed by the op's sender and nonce, which its
 * UserOperationEvent carries: no hash to compute (the userOpHash cost ~10 µs per request here), and an op re-signed
 * with other gas is one liability, as the EntryPoint includes one op per (sender, nonce).
 *
 * Bounded in memory: at most `maxExact` entries (PATRON_SOLVENCY_TRACKED_SIGNATURES) are kept one per op. Past it,
 * the oldest entry is folded into a bucket of its paymaster's liabilities that end within the same 10 s (or 10
 * blocks), its end rounded up: a folded op is no longer released by its inclusion, only by its window's end, so the
 * figure can only be higher than the exact one (safe: it refuses early, never late). Memory is then O(maxExact +
 * the longest window ÷ 10 s) whatever the signing rate, where one entry per signature held ~250 bytes for up to
 * PATRON_EXPIRY_MAX_SECONDS (a million at 3,500 signed/s in a 300 s window).
 */
/** A signature as the paymaster services issue it (paymaster/requestFacts.ts). */
export type SignedOp = IssuedSignature;

export interface LiabilityTracker {
  /** O(1): keeps the op's compact entry, and adds its worst case to its paymaster's running figure. */
  record(op: SignedOp): void;
  /** The op of `sender` at `nonce` was included: it no longer may be charged (its real cost is off the deposit). */
  included(key: PaymasterKey, sender: string, nonce: bigint): void;
  /**
   * Drops those the chain can no longer include (by `head`, the latest block the service read; without one, by the
   * server's clock at the window's estimated end), and sums the paymaster's worst cases.
   */
  total(key: PaymasterKey, head?: ChainHead): bigint;
  /** The last `total` plus what was recorded since: O(1), for the per-request check. */
  current(key: PaymasterKey): bigint;
}

/** The latest block the service read of a chain. */
export interface ChainHead {
  /** Unix seconds. */
  readonly timestamp: number;
  readonly blockNumber: number;
}

interface Open {
  readonly worstCaseWei: bigint;
  /** Unix ms: the server-clock estimate, used only while no head is known. */
  readonly expiresAtMs: number;
  readonly untilSecond: number | undefined;
  readonly untilBlock: number | undefined;
}

/** An op's entry key within its paymaster: the (sender, nonce) pair an EntryPoint includes at most once. */
const opEntryKey = (sender: string, nonce: bigint): string => `${sender.toLowerCase()}:${nonce.toString(16)}`;

const later = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b);

/** A folded bucket spans ends within this many seconds (and blocks). */
const FOLD_WIDTH = 10;
const roundUp = (v: number | undefined, width: number) => (v === undefined ? undefined : Math.ceil(v / width) * width);

/** Whether the chain at `head` can no longer include any signature of `entry` (or, with no head, the clock). */
function closed(entry: Open, head: ChainHead | undefined, nowMs: number): boolean {
  if (head === undefined) return entry.expiresAtMs <= nowMs;
  return (
    (entry.untilSecond === undefined || head.timestamp > entry.untilSecond) &&
    (entry.untilBlock === undefined || head.blockNumber > entry.untilBlock)
  );
}

export function createLiabilityTracker(deps: {
  readonly now: () => number;
  /** The most ops kept one entry each, over every paymaster (see above). */
  readonly maxExact: number;
}): LiabilityTracker {
  const open = new Map<PaymasterKey, Map<string, Open>>();
  /** Per paymaster: buckets of folded ops by their rounded-up end (key: the rounded ends). */
  const folded = new Map<PaymasterKey, Map<string, Open>>();
  let exact = 0;
  /** Per paymaster: the last exact total plus what was recorded since (the per-request check's figure). */
  const running = new Map<PaymasterKey, bigint>();

  /** Moves the oldest exact entry (of `key`'s paymaster if it has one, else of any) into its bucket. */
  const foldOldest = (key: PaymasterKey) => {
    let from = key;
    let chain = open.get(key);
    if (chain === undefined || chain.size === 0) {
      for (const [k, c] of open) {
        if (c.size > 0) {
          [from, chain] = [k, c];
          break;
        }
      }
    }
    const first = chain?.entries().next();
    if (chain === undefined || first === undefined || first.done === true) return;
    const [hash, entry] = first.value;
    chain.delete(hash);
    exact -= 1;
    const ends = {
      expiresAtMs: roundUp(entry.expiresAtMs, FOLD_WIDTH * 1000) ?? entry.expiresAtMs,
      untilSecond: roundUp(entry.untilSecond, FOLD_WIDTH),
      untilBlock: roundUp(entry.untilBlock, FOLD_WIDTH),
    };
    const bucketKey = `${ends.expiresAtMs}:${ends.untilSecond ?? ''}:${ends.untilBlock ?? ''}`;
    let buckets = folded.get(from);
    if (buckets === undefined) {
      buckets = new Map<string, Open>();
      folded.set(from, buckets);
    }
    const bucket = buckets.get(bucketKey);
    buckets.set(bucketKey, { ...ends, worstCaseWei: (bucket?.worstCaseWei ?? 0n) + entry.worstCaseWei });
  };

  return {
    record(op) {
      const key = paymasterKey(op);
      // Only this compact entry is kept, not the op, whose fields a burst held by the thousands until the next check.
      const hash = opEntryKey(op.sender, op.nonce);
      let chain = open.get(key);
      if (chain === undefined) {
        chain = new Map<string, Open>();
        open.set(key, chain);
      }
      // The same (sender, nonce) signed twice is one liability (one of them can be included): the later expiry, the
      // larger cost.
      const before = chain.get(hash);
      if (before === undefined) {
        if (exact >= deps.maxExact) foldOldest(key);
        exact += 1;
      }
      const worstCaseWei =
        before !== undefined && before.worstCaseWei > op.worstCaseWei ? before.worstCaseWei : op.worstCaseWei;
      chain.set(hash, {
        worstCaseWei,
        expiresAtMs: Math.max(before?.expiresAtMs ?? 0, op.validUntil * 1000),
        untilSecond: later(before?.untilSecond, op.window.unit === 'seconds' ? op.window.until : undefined),
        untilBlock: later(before?.untilBlock, op.window.unit === 'blocks' ? op.window.until : undefined),
      });
      running.set(key, (running.get(key) ?? 0n) + worstCaseWei - (before?.worstCaseWei ?? 0n));
    },
    included(key, sender, nonce) {
      // The running figure keeps it until the next total: the deposit it is checked against, read at the same time,
      // has not yet been charged the op's real cost either.
      // A folded op stays in its bucket until the bucket's end (the figure stays on the safe side).
      if (open.get(key)?.delete(opEntryKey(sender, nonce)) === true) exact -= 1;
    },
    total(key, head) {
      const now = deps.now();
      let sum = 0n;
      const chain = open.get(key);
      for (const [hash, entry] of chain ?? []) {
        if (closed(entry, head, now)) {
          chain?.delete(hash);
          exact -= 1;
        } else sum += entry.worstCaseWei;
      }
      const buckets = folded.get(key);
      for (const [bucketKey, bucket] of buckets ?? []) {
        if (closed(bucket, head, now)) buckets?.delete(bucketKey);
        else sum += bucket.worstCaseWei;
      }
      running.set(key, sum);
      return sum;
    },
    current(key) {
      return running.get(key) ?? 0n;
    },
  };
}
