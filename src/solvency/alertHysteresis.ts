/**
 * Which operator alert a paymaster's state calls for, with hysteresis (src/solvency/docs/guides/operations.md, "Alerts"). Pure: the
 * guard gives the figures at every evaluation (each deposit read, each signature admitted or refused).
 *
 * Why hysteresis: anyone with an API key can hold a deposit near a threshold (a burst of signatures lifts the
 * liabilities over it, their expiry drops them under it), and an alert per crossing posted a `halted`/`recovered`
 * pair every guard interval. Here a level is entered at once and left only once the deposit has cleared it by a
 * margin and stayed clear for `holdMs`; every evaluation that is not clear restarts that wait. Signing itself is not
 * held by this: the guard still signs exactly while the verdict allows (solvencyVerdict.ts).
 */
export type AlertLevel = 'ok' | 'low' | 'halted';

export interface AlertState {
  readonly level: AlertLevel;
  /** Unix ms since when the deposit has been clear of the current level's mark; undefined: not clear now. */
  readonly calmSince: number | undefined;
}

export type AlertEvent = 'low' | 'halted' | 'recovered';

export const CALM: AlertState = { level: 'ok', calmSince: undefined };

/** Leaving `low` asks for this much above the low-water mark (1/10 of it): a deposit on the mark posts one warning. */
export const LOW_CLEAR_DIVISOR = 10n;

export function nextAlert(args: {
  readonly state: AlertState;
  /** The guard's verdict: whether it signs now. */
  readonly signing: boolean;
  /** deposit − liabilities × margin: what is left beyond what was promised. */
  readonly headroomWei: bigint;
  readonly lowWaterWei: bigint;
  readonly now: number;
  readonly holdMs: number;
}): { readonly state: AlertState; readonly post: AlertEvent | undefined } {
  const { state, now } = args;
  if (!args.signing) {
    return { state: { level: 'halted', calmSince: undefined }, post: state.level === 'halted' ? undefined : 'halted' };
  }
  if (args.headroomWei < args.lowWaterWei) {
    // Under the low-water mark while signing: warned once; a halt is not over before the deposit clears the mark.
    return {
      state: { level: state.level === 'ok' ? 'low' : state.level, calmSince: undefined },
      post: state.level === 'ok' ? 'low' : undefined,
    };
  }
  if (state.level === 'ok') return { state, post: undefined };
  // Out of a halt, back above the low-water mark is enough (checked above); out of a warning, a tenth more.
  if (state.level === 'low' && args.headroomWei < args.lowWaterWei + args.lowWaterWei / LOW_CLEAR_DIVISOR) {
    return { state: { level: 'low', calmSince: undefined }, post: undefined };
  }
  const calmSince = state.calmSince ?? now;
  if (now - calmSince < args.holdMs) return { state: { level: state.level, calmSince }, post: undefined };
  // A recovered halt leaves the warning standing until the deposit clears it too (no `low` right after `recovered`).
  if (state.level === 'halted') return { state: { level: 'low', calmSince: undefined }, post: 'recovered' };
  return { state: CALM, post: undefined };
}
