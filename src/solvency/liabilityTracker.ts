import type { Hex } from 'viem';
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
 * `record` runs on the request path, so it only appends; the userOpHash (a keccak over the op) is computed at
 * the next `total`, off the request path.
 */
/** A signature as the paymaster services issue it (paymaster/requestFacts.ts). */
export type SignedOp = IssuedSignature;

export interface LiabilityTracker {
  /** O(1): appends, and adds the worst case to its paymaster's running figure. */
  record(op: SignedOp): void;
  /** The op was included: it no longer may be charged (its real cost is already off the deposit). */
  included(key: PaymasterKey, userOpHash: string): void;
  /**
   * Hashes what was recorded since, drops the included and those the chain can no longer include (by `head`,
   * the latest block the service read; without one, by the server's clock at the window's estimated end), and
   * sums the paymaster's worst cases.
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
  let pending: SignedOp[] = [];
  const open = new Map<PaymasterKey, Map<string, Open>>();
  const lastTotal = new Map<PaymasterKey, bigint>();
  const pendingWei = new Map<PaymasterKey, bigint>();

  function flush(): void {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    pendingWei.clear();
    for (const op of batch) {
      const key = paymasterKey(op);
      // Counted in the paymaster's running figure until its next exact total.
      lastTotal.set(key, (lastTotal.get(key) ?? 0n) + op.worstCaseWei);
      const hash: Hex = op.userOpHash();
      const chain = open.get(key) ?? new Map<string, Open>();
      open.set(key, chain);
      // The same op signed twice is one liability (it can be included once): the later expiry, the larger cost.
      const before = chain.get(hash.toLowerCase());
      chain.set(hash.toLowerCase(), {
        worstCaseWei:
          before !== undefined && before.worstCaseWei > op.worstCaseWei ? before.worstCaseWei : op.worstCaseWei,
        expiresAtMs: Math.max(before?.expiresAtMs ?? 0, op.validUntil * 1000),
        untilSecond: later(before?.untilSecond, op.window.unit === 'seconds' ? op.window.until : undefined),
        untilBlock: later(before?.untilBlock, op.window.unit === 'blocks' ? op.window.until : undefined),
      });
    }
  }

  return {
    record(op) {
      pending.push(op);
      const key = paymasterKey(op);
      pendingWei.set(key, (pendingWei.get(key) ?? 0n) + op.worstCaseWei);
    },
    included(key, userOpHash) {
      flush();
      open.get(key)?.delete(userOpHash.toLowerCase());
    },
    total(key, head) {
      flush();
      const now = deps.now();
      let sum = 0n;
      const chain = open.get(key);
      for (const [hash, entry] of chain ?? []) {
        if (closed(entry, head, now)) chain?.delete(hash);
        else sum += entry.worstCaseWei;
      }
      lastTotal.set(key, sum);
      return sum;
    },
    current(key) {
      return (lastTotal.get(key) ?? 0n) + (pendingWei.get(key) ?? 0n);
    },
  };
}
