import type { Hex } from 'viem';
import type { IssuedSignature } from '../paymaster/requestFacts.js';

/**
 * The live liabilities of one process: the worst case of every signature it issued that is neither included
 * (settlement saw its UserOperationEvent) nor expired (past its validUntil, after which the EntryPoint refuses
 * the op). Each is what the EntryPoint may still charge the paymaster's deposit. In memory and per process by
 * design (src/solvency/README.md): the ledger keeps worst cases only for ops under a wei cap, and every
 * signature, capped or not, is a liability.
 *
 * `record` runs on the request path, so it only appends; the userOpHash (a keccak over the op) is computed at
 * the next `total`, off the request path.
 */
/** A signature as the paymaster services issue it (paymaster/requestFacts.ts). */
export type SignedOp = IssuedSignature;

export interface LiabilityTracker {
  /** O(1): appends, and adds the worst case to the chain's running figure. */
  record(op: SignedOp): void;
  /** The op was included: it no longer may be charged (its real cost is already off the deposit). */
  included(chainId: number, userOpHash: string): void;
  /** Hashes what was recorded since, drops the expired and included, and sums the chain's worst cases. */
  total(chainId: number): bigint;
  /** The last `total` plus what was recorded since: O(1), for the per-request check. */
  current(chainId: number): bigint;
}

interface Open {
  readonly worstCaseWei: bigint;
  readonly expiresAtMs: number;
}

export function createLiabilityTracker(deps: { readonly now: () => number }): LiabilityTracker {
  let pending: SignedOp[] = [];
  const open = new Map<number, Map<string, Open>>();
  const lastTotal = new Map<number, bigint>();
  const pendingWei = new Map<number, bigint>();

  function flush(): void {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    pendingWei.clear();
    for (const op of batch) {
      // Counted in the chain's running figure until its next exact total.
      lastTotal.set(op.chainId, (lastTotal.get(op.chainId) ?? 0n) + op.worstCaseWei);
      const hash: Hex = op.userOpHash();
      const chain = open.get(op.chainId) ?? new Map<string, Open>();
      open.set(op.chainId, chain);
      // The same op signed twice is one liability (it can be included once): the later expiry, the larger cost.
      const before = chain.get(hash.toLowerCase());
      chain.set(hash.toLowerCase(), {
        worstCaseWei:
          before !== undefined && before.worstCaseWei > op.worstCaseWei ? before.worstCaseWei : op.worstCaseWei,
        expiresAtMs: Math.max(before?.expiresAtMs ?? 0, op.validUntil * 1000),
      });
    }
  }

  return {
    record(op) {
      pending.push(op);
      pendingWei.set(op.chainId, (pendingWei.get(op.chainId) ?? 0n) + op.worstCaseWei);
    },
    included(chainId, userOpHash) {
      flush();
      open.get(chainId)?.delete(userOpHash.toLowerCase());
    },
    total(chainId) {
      flush();
      const now = deps.now();
      let sum = 0n;
      const chain = open.get(chainId);
      for (const [hash, entry] of chain ?? []) {
        if (entry.expiresAtMs <= now) chain?.delete(hash);
        else sum += entry.worstCaseWei;
      }
      lastTotal.set(chainId, sum);
      return sum;
    },
    current(chainId) {
      return (lastTotal.get(chainId) ?? 0n) + (pendingWei.get(chainId) ?? 0n);
    },
  };
}
