import { HOLD_KEY_PREFIX, type LedgerCharge } from '../store/ledger/ledgerTypes.js';
import type { CapCharge } from './policyRules.js';

/**
 * Held budgets (docs/guides/policies.md, "Held budgets"; issue 31): a signature holds its worst case against a cap
 * from signing until the chain includes the op or passes its window, and one that is never submitted holds it all
 * that time for nothing. So next to a cap charge a reservation also charges hold counters of that cap, one for the
 * caller (its IP, or the person its sponsorship token names) and one for the op's sender, each limited to a share of
 * the cap, binding while the cap is busy (its reservations take more than half its room: store/ledger/ledgerTypes.ts
 * `bindsWhenBusy`): then what one caller or one sender holds unsubmitted stays within that share, and filling a cap
 * with signatures never submitted takes many callers, while a quiet cap lets a user sign ops back to back. A hold
 * counter is reserved and released with its reservation and never counts as spent (ledgerRows.ts `close`); at
 * least one op always fits one. Which caps: a dApp-wide one (a shared budget) gets both; a per-sender one the
 * caller's (one caller cannot hold a victim sender's budget); a per-user one none (its holder is its scope).
 */
export interface HoldShares {
  /** `ip:<key>` or `user:<sub>`; undefined: no caller share. */
  readonly holder: string | undefined;
  /** 1-100; 100: no share. */
  readonly perCallerPercent: number;
  readonly perSenderPercent: number;
}

/** A hold counter's charge, and the cap and party it holds for (the denial names them). */
export interface HoldCharge extends LedgerCharge {
  readonly cap: CapCharge;
  readonly party: 'caller' | 'sender';
  readonly percent: number;
}

/** The hold charges of a reservation's cap charges, for its holder and sender (none when shares are absent). */
export function holdCharges(args: {
  readonly charges: readonly CapCharge[];
  readonly holds: HoldShares | undefined;
  readonly sender: string;
}): HoldCharge[] {
  const { holds } = args;
  if (holds === undefined || args.charges.length === 0) return [];
  const parties: { readonly party: 'caller' | 'sender'; readonly who: string | undefined; readonly percent: number }[] =
    [
      { party: 'caller', who: holds.holder, percent: holds.perCallerPercent },
      { party: 'sender', who: args.sender.toLowerCase(), percent: holds.perSenderPercent },
    ];
  const out: HoldCharge[] = [];
  for (const { party, who, percent } of parties) {
    if (who === undefined || percent >= 100) continue;
    for (const cap of args.charges) {
      if (cap.scope === 'user' || (cap.scope === 'sender' && party === 'sender')) continue;
      const share = (cap.limit * BigInt(percent) + 99n) / 100n;
      out.push({
        key: `${HOLD_KEY_PREFIX}${party}|${who}|${cap.key}`,
        unit: cap.unit,
        amount: cap.amount,
        limit: share > cap.amount ? share : cap.amount,
        windowEnd: cap.window.end,
        bindsWhenBusy: cap.key,
        cap,
        party,
        percent,
      });
    }
  }
  return out;
}
