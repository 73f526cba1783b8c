import type { PaymasterKey } from './paymasterKey.js';

/**
 * Each paymaster's spend as its deposit reads show it: the drops between successive reads over the last `windowMs`
 * (an hour by default), per hour. Rises (top-ups) are not spend and count as nothing; a withdrawal counts as spend,
 * which only shortens the runway. Unlike spendWindow.ts (settlement's inclusions, 24 h), every process that runs the
 * guard sees it, and it follows the last hour rather than the last day.
 */
export interface DepositTrend {
  record(args: { readonly key: PaymasterKey; readonly depositWei: bigint; readonly at: number }): void;
  /** Wei per hour over the window (whole wei, rounded down); undefined until two reads span some time. */
  weiPerHour(key: PaymasterKey, now: number): bigint | undefined;
}

/** Reads kept per paymaster: an hour at a 15 s interval, and a bound at the fastest one (1 s). */
const MAX_READS = 512;

export function createDepositTrend(deps: { readonly windowMs?: number } = {}): DepositTrend {
  const windowMs = deps.windowMs ?? 3_600_000;
  const reads = new Map<PaymasterKey, { depositWei: bigint; at: number }[]>();

  const prune = (list: { at: number }[], now: number): void => {
    // One read older than the window stays: the drop from it into the window is spend within the window.
    while (list.length > 2 && ((list[1]?.at ?? now) <= now - windowMs || list.length > MAX_READS)) list.shift();
  };

  return {
    record({ key, depositWei, at }) {
      const list = reads.get(key) ?? [];
      reads.set(key, list);
      list.push({ depositWei, at });
      prune(list, at);
    },
    weiPerHour(key, now) {
      const list = reads.get(key);
      if (list === undefined) return undefined;
      prune(list, now);
      const first = list[0];
      const last = list[list.length - 1];
      if (first === undefined || last === undefined || last.at <= first.at) return undefined;
      let spent = 0n;
      for (let i = 1; i < list.length; i++) {
        const before = list[i - 1]?.depositWei ?? 0n;
        const after = list[i]?.depositWei ?? 0n;
        if (after < before) spent += before - after;
      }
      // In bigints: exact, whatever the amounts.
      return (spent * 3_600_000n) / BigInt(last.at - first.at);
    },
  };
}
