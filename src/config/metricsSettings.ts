import { z } from 'zod';
import { integerFromEnv } from './envValues.js';

/**
 * The /metrics endpoint's settings (docs/reference/metrics.md, "Metrics"), from the environment (part of loadConfig, the only reader
 * of process.env). Off by default: the metrics tell how much is sponsored and how much the paymaster holds,
 * which is nobody's business but the operator's.
 */
export type MetricsSettings =
  | { readonly enabled: false }
  | {
      readonly enabled: true;
      /**
       * A separate listener for /metrics (on `host`), or undefined: served by the main app. A separate port keeps
       * the scrape off the public listener (bound to loopback by default), so no token is needed there.
       */
      readonly port: number | undefined;
      readonly host: string;
      /** Bearer token the scraper must send; required on the main app, optional on the separate port. */
      readonly token: string | undefined;
    };

export const metricsEnv = {
  PATRON_METRICS: z
    .enum(['on', 'off', 'true', 'false', '1', '0', ''], { error: 'PATRON_METRICS must be on or off' })
    .optional(),
  PATRON_METRICS_PORT: integerFromEnv('PATRON_METRICS_PORT', 1, 65535),
  PATRON_METRICS_HOST: z.string().min(1, { error: 'PATRON_METRICS_HOST must not be empty' }).optional(),
  PATRON_METRICS_TOKEN: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || (v.length >= 16 && /^[\x21-\x7e]+$/.test(v)), {
      error: 'PATRON_METRICS_TOKEN must be at least 16 printable characters without spaces',
    }),
};

type MetricsEnv = z.infer<z.ZodObject<typeof metricsEnv>>;

/** The settings, or the problem to report with every other one. */
export function metricsSettingsFrom(e: MetricsEnv): { settings: MetricsSettings; problems: string[] } {
  const on = e.PATRON_METRICS === 'on' || e.PATRON_METRICS === 'true' || e.PATRON_METRICS === '1';
  if (!on) return { settings: { enabled: false }, problems: [] };
  const token = e.PATRON_METRICS_TOKEN === '' ? undefined : e.PATRON_METRICS_TOKEN;
  const port = e.PATRON_METRICS_PORT;
  if (port === undefined && token === undefined) {
    // On the public listener without a token, anyone could read the paymaster's volumes and deposit.
    return {
      settings: { enabled: false },
      problems: [
        'PATRON_METRICS=on needs PATRON_METRICS_PORT (a separate listener) or PATRON_METRICS_TOKEN (on the main port)',
      ],
    };
  }
  return {
    settings: Object.freeze({ enabled: true, port, host: e.PATRON_METRICS_HOST ?? '127.0.0.1', token }),
    problems: [],
  };
}
