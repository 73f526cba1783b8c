import type { CapCharge } from './policyRules.js';

/** A cap's counter as a reservation moved it (the ledger's answer with `reportUsage`). */
export interface CapUsage {
  readonly key: string;
  /** Settled spend. */
  readonly used: bigint;
  /** Used plus reserved, before and after the reservation. */
  readonly before: bigint;
  readonly after: bigint;
}

/** The shares of a cap's limit that `policy.threshold` reports, in percent. */
export const CAP_THRESHOLDS = [80, 100] as const;

/** A cap whose committed total (used plus reserved) reached a threshold with this reservation. */
export interface CapThresholdCrossing {
  readonly charge: CapCharge;
  readonly threshold: (typeof CAP_THRESHOLDS)[number];
  /** Settled spend in the cap's window, in the cap's unit. */
  readonly used: bigint;
  /** Used plus reserved after this reservation: what the cap counts against its limit. */
  readonly committed: bigint;
}

/**
 * The thresholds this reservation crossed: committed below the share before, at or above it after. In memory
 * over the usage the ledger read under its lock anyway: nothing is queried, and a reservation that crosses none
 * (nearly every one) allocates nothing but the empty answer. The same threshold crossed again in one window (a
 * release brought the total down, a later reservation up) is reported again here; the outbox's dedupe key
 * (dApp, cap key, window, threshold) keeps one event per window.
 */
export function crossedThresholds(charges: readonly CapCharge[], usage: readonly CapUsage[]): CapThresholdCrossing[] {
  const crossed: CapThresholdCrossing[] = [];
  for (const u of usage) {
    const charge = charges.find((c) => c.key === u.key);
    if (charge === undefined || charge.limit <= 0n) continue;
    for (const threshold of CAP_THRESHOLDS) {
      const at = BigInt(threshold) * charge.limit;
      if (u.before * 100n < at && u.after * 100n >= at) {
        crossed.push({ charge, threshold, used: u.used, committed: u.after });
      }
    }
  }
  return crossed;
}
