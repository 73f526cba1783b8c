import type { Address } from 'viem';
import type { DepositSpendRepository } from '../store/ledger/depositSpendRepository.js';
import { type PaymasterKey, paymasterKey } from './paymasterKey.js';

/**
 * Each paymaster's spend rate: what included ops took from its deposit over the last 24 h, from the ledger
 * (store/ledger/depositSpendRepository.ts), per hour. Every instance reads the same rows, so they agree, and a restart
 * keeps the rate. Deposits, withdrawals and top-ups are not spend and are not in it; a user-paid token op is (the
 * deposit paid its gas). The rate divides by the window, or by the time since the first op the ledger counts when
 * that is shorter (at least an hour), so a new paymaster does not report a tenth of its real rate.
 *
 * Cost: `refresh` is one grouped query per paymaster per guard interval over the current hour's closes (and the
 * previous hour's for its first minutes, for a close written late by another instance); the first reads the whole
 * window, and the first that finds spend also reads when the paymaster's first op was. The request path only reads the figure. The instance that follows settlement counts an inclusion at once
 * (`included`), provisionally: the next refresh replaces the hour with what the ledger holds.
 */
export interface DepositSpendRate {
  /** Re-reads the recent hours from the ledger; a failure keeps the last figures (the caller logs it). */
  refresh(paymaster: { readonly chainId: number; readonly paymaster: Address }): Promise<void>;
  /** An inclusion settlement just wrote to the ledger, counted until the next refresh reads it back. */
  included(args: { readonly chainId: number; readonly paymaster: Address; readonly wei: bigint }): void;
  /** Wei per hour over the window, rounded up; undefined when nothing was spent in it. */
  weiPerHour(paymaster: { readonly chainId: number; readonly paymaster: Address }): bigint | undefined;
}

const HOUR_MS = 3_600_000;
/** A close timestamped in an hour that has just ended may still be committed (another instance, a slow write). */
const LATE_CLOSE_MS = 5 * 60_000;

interface Hours {
  /** hour index → wei. */
  readonly buckets: Map<number, bigint>;
  /** The ledger's first op of the paymaster. */
  firstAt: number | undefined;
  /** The first inclusion counted before the ledger showed one. */
  firstSeenAt: number | undefined;
  loaded: boolean;
}

export function createDepositSpendRate(deps: {
  readonly source: DepositSpendRepository;
  readonly now: () => number;
  readonly windowMs?: number;
}): DepositSpendRate {
  const windowMs = deps.windowMs ?? 24 * HOUR_MS;
  const byPaymaster = new Map<PaymasterKey, Hours>();
  const hoursOf = (key: PaymasterKey): Hours => {
    let h = byPaymaster.get(key);
    if (h === undefined) {
      h = { buckets: new Map(), firstAt: undefined, firstSeenAt: undefined, loaded: false };
      byPaymaster.set(key, h);
    }
    return h;
  };
  /** The oldest hour in the window. */
  const oldestHour = (now: number) => Math.floor((now - windowMs) / HOUR_MS) + 1;

  return {
    async refresh(paymaster) {
      const key = paymasterKey(paymaster);
      const h = hoursOf(key);
      const now = deps.now();
      const current = Math.floor(now / HOUR_MS);
      const fromHour = !h.loaded ? oldestHour(now) : now - current * HOUR_MS < LATE_CLOSE_MS ? current - 1 : current;
      const args = { chainId: paymaster.chainId, paymaster: paymaster.paymaster };
      const rows = await deps.source.byHour({ ...args, since: fromHour * HOUR_MS });
      // The first op's time only matters once there is spend to divide: a paymaster that never spent costs one
      // query per interval, not two.
      const firstAt = h.firstAt ?? (rows.length > 0 ? await deps.source.firstAt(args) : undefined);
      // The hours read are replaced whole: a row that moved out (a reorg reopened it) leaves them too.
      for (let hour = fromHour; hour <= current; hour++) h.buckets.delete(hour);
      for (const r of rows) h.buckets.set(r.hour, r.wei);
      for (const hour of h.buckets.keys()) if (hour < oldestHour(now)) h.buckets.delete(hour);
      h.firstAt = firstAt;
      h.loaded = true;
    },
    included({ chainId, paymaster, wei }) {
      const h = hoursOf(paymasterKey({ chainId, paymaster }));
      const now = deps.now();
      const hour = Math.floor(now / HOUR_MS);
      h.buckets.set(hour, (h.buckets.get(hour) ?? 0n) + wei);
      h.firstSeenAt ??= now;
    },
    weiPerHour(paymaster) {
      const h = byPaymaster.get(paymasterKey(paymaster));
      const firstAt = h?.firstAt ?? h?.firstSeenAt;
      if (h === undefined || firstAt === undefined) return undefined;
      const now = deps.now();
      const oldest = oldestHour(now);
      const current = Math.floor(now / HOUR_MS);
      let sum = 0n;
      // A close stamped ahead of this clock (another instance's) waits for its hour.
      for (const [hour, wei] of h.buckets) if (hour >= oldest && hour <= current) sum += wei;
      if (sum === 0n) return undefined;
      const spanMs = BigInt(Math.min(windowMs, Math.max(HOUR_MS, now - firstAt)));
      return (sum * BigInt(HOUR_MS) + spanMs - 1n) / spanMs;
    },
  };
}
