import type { AlertShape } from './alertShape.js';

/**
 * An operator alert as Alertmanager's own API takes it: `POST <base>/api/v2/alerts` with a PostableAlerts array
 * (https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml). Alertmanager tells alerts apart by
 * their whole label set, so a firing alert and the post that ends it carry the same labels.
 *
 * Firing: `endsAt` is set `FIRING_HOLD_MS` ahead. Patron posts a state change once, unlike Prometheus, which re-sends
 * every evaluation; without an `endsAt`, Alertmanager would resolve the alert by itself after its resolve_timeout
 * (5 minutes by default) while the paymaster was still halted. Resolving: every firing alert of the family (the label
 * sets the sender knows of) posted again with `endsAt` now.
 */
export interface PostableAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly startsAt: string;
  readonly endsAt: string;
  readonly generatorURL?: string;
}

/** How long a firing alert holds without news: a day, as long as a cross-instance claim holds (alertClaims.ts). */
export const FIRING_HOLD_MS = 24 * 3600 * 1000;

/** The labels of a firing alert: what Alertmanager routes on, and what its resolving post repeats. */
export function firingLabels(shape: AlertShape): Readonly<Record<string, string>> {
  return { alertname: shape.alertname, severity: shape.severity, service: 'patron', ...shape.about };
}

export function alertmanagerAlerts(args: {
  readonly shape: AlertShape;
  /** Resolving: the label sets of the family's alerts to end (alertFanOut.ts keeps them). */
  readonly ends: readonly Readonly<Record<string, string>>[];
  readonly now: number;
  /** PATRON_PUBLIC_URL's dashboard, when it is set. */
  readonly generatorURL: string | undefined;
}): PostableAlert[] {
  const { shape, now } = args;
  const at = new Date(now).toISOString();
  const annotations = { summary: shape.summary, description: shape.description };
  const link = args.generatorURL === undefined ? {} : { generatorURL: args.generatorURL };
  if (!shape.resolves) {
    return [
      {
        labels: firingLabels(shape),
        annotations,
        startsAt: at,
        endsAt: new Date(now + FIRING_HOLD_MS).toISOString(),
        ...link,
      },
    ];
  }
  return args.ends.map((labels) => ({ labels, annotations, startsAt: at, endsAt: at, ...link }));
}
