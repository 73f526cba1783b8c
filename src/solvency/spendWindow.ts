import type { PaymasterKey } from './paymasterKey.js';

/**
 * Each paymaster's recent spend: what the EntryPoint charged it for included ops (settlement's
 * UserOperationEvents), in hourly buckets over the last `windowMs` (24 h by default). The rate divides by the
 * window, or by the time since this process started when that is shorter (at least an hour), so a fresh process
 * does not report a tenth of the real rate. Per process: only a process that runs settlement sees inclusions.
 */
export interface SpendWindow {
  add(args: { readonly key: PaymasterKey; readonly wei: bigint }): void;
  /** Wei per second over the window, or undefined when nothing was spent in it. */
  weiPerSecond(key: PaymasterKey): number | undefined;
}

const HOUR_MS = 3_600_000;

export function createSpendWindow(deps: { readonly now: () => number; readonly windowMs?: number }): SpendWindow {
  const windowMs = deps.windowMs ?? 24 * HOUR_MS;
  const startedAt = deps.now();
  /** paymaster → hour index → wei. */
  const buckets = new Map<PaymasterKey, Map<number, bigint>>();

  function prune(chain: Map<number, bigint>, now: number): void {
    const oldest = Math.floor((now - windowMs) / HOUR_MS);
    for (const hour of chain.keys()) if (hour < oldest) chain.delete(hour);
  }

  return {
    add({ key, wei }) {
      const now = deps.now();
      const chain = buckets.get(key) ?? new Map<number, bigint>();
      buckets.set(key, chain);
      const hour = Math.floor(now / HOUR_MS);
      chain.set(hour, (chain.get(hour) ?? 0n) + wei);
      prune(chain, now);
    },
    weiPerSecond(key) {
      const chain = buckets.get(key);
      if (chain === undefined) return undefined;
      const now = deps.now();
      prune(chain, now);
      let sum = 0n;
      for (const wei of chain.values()) sum += wei;
      if (sum === 0n) return undefined;
      const spanMs = Math.min(windowMs, Math.max(HOUR_MS, now - startedAt));
      return Number(sum) / (spanMs / 1000);
    },
  };
}
