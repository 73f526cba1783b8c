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
 * `record` runs on the request path: O(1), one compact entry keyed by the op's userOpHash (computed once per op,
 * shared with the request log through IssuedSignature's memo).
 */
/** A signature as the paymaster services issue it (paymaster/requestFacts.ts). */
export type SignedOp = IssuedSignature;

export interface LiabilityTracker {
  /** O(1): keeps the op's compact entry, and adds its worst case to its paymaster's running figure. */
  record(op: SignedOp): void;
  /** The op was included: it no longer may be charged (its real cost is already off the deposit). */
  included(key: PaymasterKey, userOpHash: string): void;
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

const later = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b);

/** Whether the chain at `head` can no longer include any signature of `entry` (or, with no head, the clock). */
function closed(entry: Open, head: ChainHead | undefined, nowMs: number): boolean {
  if (head === undefined) return entry.expiresAtMs <= nowMs;
  return (
    (entry.untilSecond === undefined || head.timestamp > entry.untilSecond) &&
    (entry.untilBlock === undefined || head.blockNumber > entry.untilBlock)
  );
}

export function createLiabilityTracker(deps: { readonly now: () => number }): LiabilityTracker {
  const open = new Map<PaymasterKey, Map<string, Open>>();
  /** Per paymaster: the last exact total plus what was recorded since (the per-request check's figure). */
  const running = new Map<PaymasterKey, bigint>();

  return {
    record(op) {
      const key = paymasterKey(op);
      // The op's own userOpHash, computed once for everyone (the request log reads the same memo): only this compact
      // entry is kept, not the op, whose fields a burst held by the thousands until the next check.
      const hash = op.userOpHash().toLowerCase();
      let chain = open.get(key);
      if (chain === undefined) {
        chain = new Map<string, Open>();
        open.set(key, chain);
      }
      // The same op signed twice is one liability (it can be included once): the later expiry, the larger cost.
      const before = chain.get(hash);
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
    included(key, userOpHash) {
      // The running figure keeps it until the next total: the deposit it is checked against, read at the same time,
      // has not yet been charged the op's real cost either.
      open.get(key)?.delete(userOpHash.toLowerCase());
    },
    total(key, head) {
      const now = deps.now();
      let sum = 0n;
      const chain = open.get(key);
      for (const [hash, entry] of chain ?? []) {
        if (closed(entry, head, now)) chain?.delete(hash);
        else sum += entry.worstCaseWei;
      }
      running.set(key, sum);
      return sum;
    },
    current(key) {
      return running.get(key) ?? 0n;
    },
  };
}
