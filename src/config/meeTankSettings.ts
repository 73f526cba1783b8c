import { integerFromEnv } from './envValues.js';

/**
 * The MEE gas tanks' watch (src/mee/README.md): how often each active tank's token balance is read, and the runway
 * under which its low-balance alert fires, from the environment (part of loadConfig, the only reader of process.env).
 */
export interface MeeTankSettings {
  /** How often every active tank's token balance is read (one eth_call per tank). */
  readonly checkMs: number;
  /**
   * A tank whose balance lasts less than this at its spend of the last 24 h is low (as under its own low-balance
   * threshold); 0: only the threshold counts.
   */
  readonly runwayFloorSeconds: number;
}

/** A day, as the deposit's PatronRunwayShort: time to move funds to the tank before the MEE node's quotes fail. */
const DEFAULT_RUNWAY_FLOOR_SECONDS = 86_400;
/** A minute: a tank pays once per supertransaction, and its balance moves only by payments and top-ups. */
const DEFAULT_CHECK_SECONDS = 60;

export const meeTankEnv = {
  PATRON_MEE_TANK_CHECK_SECONDS: integerFromEnv('PATRON_MEE_TANK_CHECK_SECONDS', 5, 86_400),
  PATRON_MEE_TANK_RUNWAY_FLOOR_SECONDS: integerFromEnv('PATRON_MEE_TANK_RUNWAY_FLOOR_SECONDS', 0, 30 * 86_400),
};

export function meeTankSettingsFrom(e: {
  readonly PATRON_MEE_TANK_CHECK_SECONDS?: number | undefined;
  readonly PATRON_MEE_TANK_RUNWAY_FLOOR_SECONDS?: number | undefined;
}): MeeTankSettings {
  return Object.freeze({
    checkMs: (e.PATRON_MEE_TANK_CHECK_SECONDS ?? DEFAULT_CHECK_SECONDS) * 1000,
    runwayFloorSeconds: e.PATRON_MEE_TANK_RUNWAY_FLOOR_SECONDS ?? DEFAULT_RUNWAY_FLOOR_SECONDS,
  });
}
