import { z } from 'zod';

/**
 * Where operator alerts go besides the signed webhook (PATRON_ALERT_WEBHOOK_URL, solvencySettings.ts): an
 * Alertmanager's own API, a Slack-compatible incoming webhook, PagerDuty's Events API v2 (docs/guides/operations.md,
 * "Alerts"). Any combination may be set; each is delivered and retried on its own (src/solvency/alerts/).
 *
 * The Slack URL and the PagerDuty routing key are credentials: whoever holds them posts into the operator's channel
 * or pages them. No problem message here repeats their value, and no log line prints them (the start-up check names
 * the host alone).
 */
export interface AlertSettings {
  /** The Alertmanager's base URL (with its --web.route-prefix, if any): alerts go to `<url>/api/v2/alerts`. */
  readonly alertmanager: { readonly url: string } | undefined;
  readonly slack: { readonly url: string } | undefined;
  readonly pagerDuty: { readonly routingKey: string; readonly url: string } | undefined;
}

/** PagerDuty's Events API v2 endpoint (US service region; the EU one is events.eu.pagerduty.com). */
export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

const url = (name: string) =>
  z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || operatorUrlProblem(v) === undefined, {
      error: `${name} must be an absolute http or https URL without credentials`,
    });

export const alertEnv = {
  PATRON_ALERTMANAGER_URL: url('PATRON_ALERTMANAGER_URL'),
  PATRON_ALERT_SLACK_WEBHOOK_URL: url('PATRON_ALERT_SLACK_WEBHOOK_URL'),
  PATRON_ALERT_PAGERDUTY_URL: url('PATRON_ALERT_PAGERDUTY_URL'),
  // An Events API v2 integration key: 32 characters as PagerDuty issues them; a little latitude for other services
  // speaking the same API.
  PATRON_ALERT_PAGERDUTY_ROUTING_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || /^[A-Za-z0-9_-]{20,64}$/.test(v), {
      error: 'PATRON_ALERT_PAGERDUTY_ROUTING_KEY must be an Events API v2 integration key (32 letters and digits)',
    }),
};

type AlertEnv = z.infer<z.ZodObject<typeof alertEnv>>;

/** Why `raw` cannot be an operator alert URL, or undefined. Its host may be private: the operator's, not a tenant's. */
export function operatorUrlProblem(raw: string): string | undefined {
  const parsed = URL.canParse(raw) ? new URL(raw) : undefined;
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '') {
    return 'not an absolute http or https URL';
  }
  // Credentials in the URL would be logged with it and are not sent by the client anyway.
  if (parsed.username !== '' || parsed.password !== '') return 'credentials in the URL';
  return undefined;
}

export function alertSettingsFrom(e: AlertEnv): { settings: AlertSettings; problems: string[] } {
  const problems: string[] = [];
  const routingKey = e.PATRON_ALERT_PAGERDUTY_ROUTING_KEY || undefined;
  const pagerDutyUrl = e.PATRON_ALERT_PAGERDUTY_URL || undefined;
  if (pagerDutyUrl !== undefined && routingKey === undefined) {
    problems.push('PATRON_ALERT_PAGERDUTY_URL needs PATRON_ALERT_PAGERDUTY_ROUTING_KEY (the events are routed by it)');
  }
  const alertmanager = e.PATRON_ALERTMANAGER_URL || undefined;
  const slack = e.PATRON_ALERT_SLACK_WEBHOOK_URL || undefined;
  return {
    settings: Object.freeze({
      alertmanager: alertmanager === undefined ? undefined : { url: alertmanager.replace(/\/+$/, '') },
      slack: slack === undefined ? undefined : { url: slack },
      pagerDuty: routingKey === undefined ? undefined : { routingKey, url: pagerDutyUrl ?? PAGERDUTY_EVENTS_URL },
    }),
    problems,
  };
}
