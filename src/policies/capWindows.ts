import type { CapReset } from './policySchema.js';

/**
 * The window a cap counts in. Resets are calendar-aligned in UTC (hourly at :00, daily at 00:00, weekly on
 * Monday 00:00, monthly on the 1st 00:00), so every process and every dashboard agrees on when a budget
 * refills, and a cap's usage is one ledger row per window. `never`: one window from the epoch, no end.
 */
export interface CapWindow {
  /** Unix ms, inclusive. */
  readonly start: number;
  /** Unix ms, exclusive; undefined for `never`. */
  readonly end: number | undefined;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export function capWindow(resets: CapReset, nowMs: number): CapWindow {
  switch (resets) {
    case 'never':
      return { start: 0, end: undefined };
    case 'hourly': {
      const start = Math.floor(nowMs / HOUR) * HOUR;
      return { start, end: start + HOUR };
    }
    case 'daily': {
      const start = Math.floor(nowMs / DAY) * DAY;
      return { start, end: start + DAY };
    }
    case 'weekly': {
      const day = Math.floor(nowMs / DAY) * DAY;
      // getUTCDay: 0 is Sunday; weeks start on Monday (ISO 8601).
      const sinceMonday = (new Date(day).getUTCDay() + 6) % 7;
      const start = day - sinceMonday * DAY;
      return { start, end: start + 7 * DAY };
    }
    case 'monthly': {
      const d = new Date(nowMs);
      const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
      return { start, end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
    }
  }
}
