import { parseEther } from 'viem';
import { z } from 'zod';
import { integerFromEnv } from './envValues.js';

/**
 * The dashboard's settings and the request log's retention, from the environment (part of loadConfig, the
 * only reader of process.env).
 */
export interface DashboardSettings {
  /** Where the dashboard is served, e.g. `/dashboard` (no trailing slash). */
  readonly basePath: string;
  /** A session unused this long ends. */
  readonly sessionIdleMs: number;
  /** A session ends this long after sign-in, whatever its use. */
  readonly sessionMaxMs: number;
  /** The status page warns when a paymaster's EntryPoint deposit is below this. */
  readonly depositWarningWei: bigint;
}

export interface RequestLogSettings {
  /** Rows older than this many days are deleted; 0 turns the request log off (nothing is recorded). */
  readonly retentionDays: number;
  /** Row cap over all tenants: the oldest rows beyond it are deleted. */
  readonly maxRows: number;
}

/** Paths the service itself answers under; the dashboard must not shadow them. */
const RESERVED = /^\/(api|chain|healthz|readyz|openapi\.json)(\/|$)/;

export const dashboardEnv = {
  PATRON_DASHBOARD_BASE_PATH: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || (/^(\/[A-Za-z0-9._~-]+)+$/.test(v) && !RESERVED.test(v)), {
      error:
        'PATRON_DASHBOARD_BASE_PATH must be a path like /dashboard (letters, digits, . _ ~ -, no trailing slash) outside /api, /chain, /healthz, /readyz',
    }),
  PATRON_SESSION_IDLE_MINUTES: integerFromEnv('PATRON_SESSION_IDLE_MINUTES', 1, 7 * 24 * 60),
  PATRON_SESSION_MAX_HOURS: integerFromEnv('PATRON_SESSION_MAX_HOURS', 1, 30 * 24),
  PATRON_DEPOSIT_WARNING_ETH: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || /^\d{1,12}(\.\d{1,18})?$/.test(v), {
      error: 'PATRON_DEPOSIT_WARNING_ETH must be an amount of ETH such as 0.5',
    }),
  PATRON_REQUEST_LOG_RETENTION_DAYS: integerFromEnv('PATRON_REQUEST_LOG_RETENTION_DAYS', 0, 3650),
  PATRON_REQUEST_LOG_MAX_ROWS: integerFromEnv('PATRON_REQUEST_LOG_MAX_ROWS', 1000, 1_000_000_000),
};

type DashboardEnv = z.infer<z.ZodObject<typeof dashboardEnv>>;

export function dashboardSettingsFrom(e: DashboardEnv): DashboardSettings {
  const eth = e.PATRON_DEPOSIT_WARNING_ETH;
  return Object.freeze({
    basePath: e.PATRON_DASHBOARD_BASE_PATH || '/dashboard',
    sessionIdleMs: (e.PATRON_SESSION_IDLE_MINUTES ?? 60) * 60_000,
    sessionMaxMs: (e.PATRON_SESSION_MAX_HOURS ?? 12) * 3_600_000,
    depositWarningWei: parseEther(eth === undefined || eth === '' ? '0.1' : eth),
  });
}

export function requestLogSettingsFrom(e: DashboardEnv): RequestLogSettings {
  return Object.freeze({
    retentionDays: e.PATRON_REQUEST_LOG_RETENTION_DAYS ?? 7,
    maxRows: e.PATRON_REQUEST_LOG_MAX_ROWS ?? 5_000_000,
  });
}
