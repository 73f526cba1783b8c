import { z } from 'zod';
import { booleanFromEnv, integerFromEnv } from './envValues.js';

/**
 * The solvency guard's settings (src/solvency/README.md) and the operator alert webhook, from the environment
 * (part of loadConfig, the only reader of process.env).
 */
export interface SolvencySettings {
  /** Refuse to sign on a chain whose paymaster deposit cannot cover what it may be charged. */
  readonly enabled: boolean;
  /** How often each chain's deposit is read and the state evaluated. */
  readonly intervalMs: number;
  /** The deposit must be at least the live liabilities times this, in basis points (1.5 → 15000). */
  readonly marginBps: bigint;
  /** The deposit must be at least this on every chain not listed in `floorWeiByChain`. */
  readonly floorWei: bigint;
  readonly floorWeiByChain: ReadonlyMap<number, bigint>;
  /**
   * The low-water mark: below it (deposit minus liabilities × margin) the guard posts one `low` warning, well before
   * signing stops at the floor. Undefined: 3 × the chain's floor. Always above the chain's floor (checked at start).
   */
  readonly lowWaterWei: bigint | undefined;
  readonly lowWaterWeiByChain: ReadonlyMap<number, bigint>;
  /**
   * Alert hysteresis (src/solvency/README.md): `recovered` is posted, and a `low` warning re-armed, only once the
   * deposit has stayed clear of its mark this long.
   */
  readonly alertHoldMs: number;
  /**
   * The most signatures the guard keeps one entry each (liabilityTracker.ts); the older are folded into 10 s buckets
   * released only when their windows end, so memory stays bounded at any signing rate.
   */
  readonly trackedSignatures: number;
  /** Where state changes are posted (Standard Webhooks signed), or undefined for none. */
  readonly alert: { readonly url: string; readonly secret: string } | undefined;
}

/** 0.1 ETH: a few hundred sponsored ops on an L2, a handful on mainnet; enough warning to top up. */
const DEFAULT_FLOOR_WEI = 10n ** 17n;
const DEFAULT_MARGIN = '1.5';
/** The low-water mark when none is set: 3 × the chain's floor, room for a few days' spend on a busy L2. */
const DEFAULT_LOW_WATER_FLOORS = 3n;
/**
 * 5 minutes: 20 reads at the default 15 s interval. Longer than a signature burst's liabilities take to clear, so a
 * burst held near the floor posts one `halted` and no `recovered` until the deposit is really back.
 */
const DEFAULT_ALERT_HOLD_SECONDS = 300;
/**
 * Every signature of the last 5 minutes at 66 signed/s. Measured (`npm run bench:memory`): at saturation 100,000 entries
 * grew the server's RSS by ~175 MiB (the heap sizes itself at a multiple of what lives), 1,000 kept it flat.
 */
const DEFAULT_TRACKED_SIGNATURES = 20_000;

export const solvencyEnv = {
  PATRON_SOLVENCY: booleanFromEnv('PATRON_SOLVENCY'),
  PATRON_SOLVENCY_INTERVAL_SECONDS: integerFromEnv('PATRON_SOLVENCY_INTERVAL_SECONDS', 1, 3600),
  PATRON_SOLVENCY_TRACKED_SIGNATURES: integerFromEnv('PATRON_SOLVENCY_TRACKED_SIGNATURES', 1000, 10_000_000),
  PATRON_SOLVENCY_MARGIN: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || (/^\d{1,3}(\.\d{1,4})?$/.test(v) && Number(v) >= 1), {
      error: 'PATRON_SOLVENCY_MARGIN must be a number of at least 1 with at most 4 decimals (e.g. 1.5)',
    }),
  PATRON_SOLVENCY_FLOOR_WEI: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || parseFloors(v) !== undefined, {
      error: 'PATRON_SOLVENCY_FLOOR_WEI must be wei for every chain, or <chainId>:<wei> entries separated by commas',
    }),
  PATRON_SOLVENCY_LOW_WATER_WEI: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || parseFloors(v) !== undefined, {
      error:
        'PATRON_SOLVENCY_LOW_WATER_WEI must be wei for every chain, or <chainId>:<wei> entries separated by commas',
    }),
  PATRON_SOLVENCY_ALERT_HOLD_SECONDS: integerFromEnv('PATRON_SOLVENCY_ALERT_HOLD_SECONDS', 0, 86_400),
  PATRON_ALERT_WEBHOOK_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || alertUrlProblem(v) === undefined, {
      error: 'PATRON_ALERT_WEBHOOK_URL must be an absolute http or https URL without credentials',
    }),
  PATRON_ALERT_WEBHOOK_SECRET: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/.test(v), {
      error: 'PATRON_ALERT_WEBHOOK_SECRET must be a Standard Webhooks secret: whsec_ and base64 of 24 to 64 bytes',
    }),
};

type SolvencyEnv = z.infer<z.ZodObject<typeof solvencyEnv>>;

/** `100` (every chain) or `8453:100,1:5000` (per chain) or both (`100,1:5000`: chain 1 apart). */
function parseFloors(raw: string): Floors | undefined {
  let global: bigint | undefined;
  const byChain = new Map<number, bigint>();
  for (const entry of raw.split(',').map((s) => s.trim())) {
    const m = /^(?:(\d{1,12}):)?(\d{1,40})$/.exec(entry);
    if (m === null || m[2] === undefined) return undefined;
    if (m[1] === undefined) global = BigInt(m[2]);
    else byChain.set(Number(m[1]), BigInt(m[2]));
  }
  return { global, byChain };
}

/** Why `raw` cannot be the alert URL, or undefined. Its host may be private: the operator's, not a tenant's. */
function alertUrlProblem(raw: string): string | undefined {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    return 'not an absolute http or https URL';
  }
  // Credentials in the URL would be logged with it and are not sent by the client anyway.
  if (url.username !== '' || url.password !== '') return 'credentials in the URL';
  return undefined;
}

type Floors = { global: bigint | undefined; byChain: Map<number, bigint> };

/** The chain's floor as the guard takes it. */
export function floorFor(s: Pick<SolvencySettings, 'floorWei' | 'floorWeiByChain'>, chainId: number): bigint {
  return s.floorWeiByChain.get(chainId) ?? s.floorWei;
}

/** The chain's low-water mark: its own entry, else the global one, else 3 × its floor. */
export function lowWaterFor(
  s: Pick<SolvencySettings, 'floorWei' | 'floorWeiByChain' | 'lowWaterWei' | 'lowWaterWeiByChain'>,
  chainId: number,
): bigint {
  return s.lowWaterWeiByChain.get(chainId) ?? s.lowWaterWei ?? floorFor(s, chainId) * DEFAULT_LOW_WATER_FLOORS;
}

/** Every low-water mark not above its floor, named with both (every chain either variable lists, and the rest). */
function lowWaterProblems(floors: Floors, lows: Floors): string[] {
  const settings = {
    floorWei: floors.global ?? DEFAULT_FLOOR_WEI,
    floorWeiByChain: floors.byChain,
    lowWaterWei: lows.global,
    lowWaterWeiByChain: lows.byChain,
  };
  const problems: string[] = [];
  const chains = new Set([...floors.byChain.keys(), ...lows.byChain.keys()]);
  const check = (where: string, low: bigint, floor: bigint) => {
    if (low <= floor) {
      problems.push(
        `PATRON_SOLVENCY_LOW_WATER_WEI ${where} (${low} wei) must be above PATRON_SOLVENCY_FLOOR_WEI ${where} (${floor} wei): the low-water warning has to come before signing stops`,
      );
    }
  };
  // The chains no entry names take the global figures.
  if (lows.global !== undefined) check('for every other chain', lows.global, settings.floorWei);
  for (const chainId of [...chains].sort((a, b) => a - b)) {
    check(`for chain ${chainId}`, lowWaterFor(settings, chainId), floorFor(settings, chainId));
  }
  return problems;
}

export function solvencySettingsFrom(e: SolvencyEnv): { settings: SolvencySettings; problems: string[] } {
  const floors = parseFloors(e.PATRON_SOLVENCY_FLOOR_WEI || '') ?? { global: undefined, byChain: new Map() };
  const lows = parseFloors(e.PATRON_SOLVENCY_LOW_WATER_WEI || '') ?? { global: undefined, byChain: new Map() };
  const url = e.PATRON_ALERT_WEBHOOK_URL || undefined;
  const secret = e.PATRON_ALERT_WEBHOOK_SECRET || undefined;
  const problems = lowWaterProblems(floors, lows);
  if (url !== undefined && secret === undefined) {
    problems.push(
      'PATRON_ALERT_WEBHOOK_SECRET is required with PATRON_ALERT_WEBHOOK_URL (the receiver verifies the alerts)',
    );
  }
  const [whole = '1', fraction = ''] = (e.PATRON_SOLVENCY_MARGIN || DEFAULT_MARGIN).split('.');
  const settings: SolvencySettings = Object.freeze({
    enabled: e.PATRON_SOLVENCY ?? true,
    intervalMs: (e.PATRON_SOLVENCY_INTERVAL_SECONDS ?? 15) * 1000,
    trackedSignatures: e.PATRON_SOLVENCY_TRACKED_SIGNATURES ?? DEFAULT_TRACKED_SIGNATURES,
    marginBps: BigInt(whole) * 10_000n + BigInt(fraction.padEnd(4, '0')),
    floorWei: floors.global ?? DEFAULT_FLOOR_WEI,
    floorWeiByChain: floors.byChain,
    lowWaterWei: lows.global,
    lowWaterWeiByChain: lows.byChain,
    alertHoldMs: (e.PATRON_SOLVENCY_ALERT_HOLD_SECONDS ?? DEFAULT_ALERT_HOLD_SECONDS) * 1000,
    alert: url === undefined || secret === undefined ? undefined : Object.freeze({ url, secret }),
  });
  return { settings, problems };
}
