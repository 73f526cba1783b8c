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
  PATRON_ALERT_WEBHOOK_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || /^https?:\/\//.test(v), {
      error: 'PATRON_ALERT_WEBHOOK_URL must be an http or https URL',
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
function parseFloors(raw: string): { global: bigint | undefined; byChain: Map<number, bigint> } | undefined {
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

export function solvencySettingsFrom(e: SolvencyEnv): { settings: SolvencySettings; problems: string[] } {
  const floors = parseFloors(e.PATRON_SOLVENCY_FLOOR_WEI || '') ?? { global: undefined, byChain: new Map() };
  const url = e.PATRON_ALERT_WEBHOOK_URL || undefined;
  const secret = e.PATRON_ALERT_WEBHOOK_SECRET || undefined;
  const problems =
    url !== undefined && secret === undefined
      ? ['PATRON_ALERT_WEBHOOK_SECRET is required with PATRON_ALERT_WEBHOOK_URL (the receiver verifies the alerts)']
      : [];
  const [whole = '1', fraction = ''] = (e.PATRON_SOLVENCY_MARGIN || DEFAULT_MARGIN).split('.');
  const settings: SolvencySettings = Object.freeze({
    enabled: e.PATRON_SOLVENCY ?? true,
    intervalMs: (e.PATRON_SOLVENCY_INTERVAL_SECONDS ?? 15) * 1000,
    trackedSignatures: e.PATRON_SOLVENCY_TRACKED_SIGNATURES ?? DEFAULT_TRACKED_SIGNATURES,
    marginBps: BigInt(whole) * 10_000n + BigInt(fraction.padEnd(4, '0')),
    floorWei: floors.global ?? DEFAULT_FLOOR_WEI,
    floorWeiByChain: floors.byChain,
    alert: url === undefined || secret === undefined ? undefined : Object.freeze({ url, secret }),
  });
  return { settings, problems };
}
