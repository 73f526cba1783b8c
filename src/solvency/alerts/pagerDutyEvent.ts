import type { AlertShape } from './alertShape.js';

/**
 * An operator alert as PagerDuty's Events API v2 takes it (https://developer.pagerduty.com/docs/events-api-v2/):
 * `POST /v2/enqueue`, answered 202. A trigger opens (or adds to) the incident of its `dedup_key`, a resolve closes
 * it: the key is the alert's subject (alertShape.ts), the same for the `halted` that opens and the `recovered` that
 * resolves, whichever instance posts each. An alert without a subject keys on its family.
 */
export type PagerDutyEvent =
  | {
      readonly routing_key: string;
      readonly event_action: 'trigger';
      readonly dedup_key: string;
      readonly client: string;
      readonly client_url?: string;
      readonly payload: {
        readonly summary: string;
        readonly source: string;
        readonly severity: AlertShape['severity'];
        readonly timestamp: string;
        readonly component: string;
        readonly group: string;
        readonly class: string;
        readonly custom_details: Readonly<Record<string, unknown>>;
      };
    }
  | { readonly routing_key: string; readonly event_action: 'resolve'; readonly dedup_key: string };

/** The Events API's limit on `dedup_key`. */
const DEDUP_KEY_MAX = 255;

export function pagerDutyDedupKey(shape: AlertShape): string {
  return `patron:${shape.subject ?? shape.family}`.slice(0, DEDUP_KEY_MAX);
}

export function pagerDutyEvent(args: {
  readonly shape: AlertShape;
  readonly data: Readonly<Record<string, unknown>>;
  readonly routingKey: string;
  /** The system with the problem: PATRON_PUBLIC_URL's host, else this machine's name. */
  readonly source: string;
  readonly now: number;
  readonly dashboardUrl: string | undefined;
}): PagerDutyEvent {
  const { shape } = args;
  const dedupKey = pagerDutyDedupKey(shape);
  if (shape.resolves) return { routing_key: args.routingKey, event_action: 'resolve', dedup_key: dedupKey };
  return {
    routing_key: args.routingKey,
    event_action: 'trigger',
    dedup_key: dedupKey,
    client: 'Patron',
    ...(args.dashboardUrl === undefined ? {} : { client_url: args.dashboardUrl }),
    payload: {
      summary: shape.summary,
      source: args.source,
      severity: shape.severity,
      timestamp: new Date(args.now).toISOString(),
      component: shape.about.paymaster ?? 'patron',
      group: shape.about.chain_id === undefined ? 'patron' : `chain ${shape.about.chain_id}`,
      class: shape.type,
      custom_details: args.data,
    },
  };
}
