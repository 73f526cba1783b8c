import type { AlertClaims } from '../../store/db/alertClaims.js';
import type { AlertMessage, AlertSender } from '../alertWebhook.js';
import type { AlertChannel } from './alertChannels.js';
import { FIRING_HOLD_MS, firingLabels } from './alertmanagerAlerts.js';
import type { DeliveryCount, DeliveryCounts } from './alertPoster.js';
import { alertShape, SEVERITY_BY_TYPE } from './alertShape.js';

/**
 * The operator alerts' one sender (the `AlertSender` the solvency guard, the signer watch and any later caller are
 * given): each message goes to every configured destination at once, each retried on its own, once across the
 * instances that share the database (the subject's claim, store/db/alertClaims.ts).
 */
export interface AlertFanOut extends AlertSender {
  /** Every destination's delivery outcomes since start, for `patron_alert_deliveries_total`. */
  deliveries(): readonly DeliveryCount[];
}

type Labels = Readonly<Record<string, string>>;

export function createAlertFanOut(deps: {
  readonly channels: readonly AlertChannel[];
  /** Undefined: every instance posts what it sees (no store, or a test's own). */
  readonly claims: Pick<AlertClaims, 'claim'> | undefined;
  readonly counts: DeliveryCounts;
  readonly logger: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  readonly now: () => number;
}): AlertFanOut {
  /**
   * The label sets of the alerts each subject fired, so that its resolving post ends exactly those in Alertmanager
   * (it tells alerts apart by all their labels). Kept whether or not this instance won the claim: another instance
   * may post the halt and this one the recovery.
   */
  const firing = new Map<string, Map<string, Labels>>();

  /** The alerts a resolving message ends: its family's known firing types, and what this process saw fire. */
  function ends(message: AlertMessage, key: string, family: string): Labels[] {
    const all = new Map<string, Labels>();
    const { severity: _asked, ...data } = message.data;
    for (const type of Object.keys(SEVERITY_BY_TYPE)) {
      const known = alertShape({ type, data });
      if (known.family === family && !known.resolves) all.set(JSON.stringify(firingLabels(known)), firingLabels(known));
    }
    for (const [id, labels] of firing.get(key) ?? []) all.set(id, labels);
    firing.delete(key);
    return [...all.values()];
  }

  async function claimed(subject: string, state: string): Promise<boolean> {
    if (deps.claims === undefined) return true;
    try {
      return await deps.claims.claim({ subject, state, now: deps.now(), staleMs: FIRING_HOLD_MS });
    } catch (err) {
      // A duplicate is better than a lost alert: the database's trouble is no reason to keep the news back.
      deps.logger.warn({ err, subject }, 'operator alert: the claim could not be read; posting it anyway');
      return true;
    }
  }

  return {
    async send(message) {
      const shape = alertShape(message);
      const key = shape.subject ?? shape.family;
      let resolved: Labels[] = [];
      if (shape.resolves) resolved = ends(message, key, shape.family);
      else {
        const labels = firingLabels(shape);
        const seen = firing.get(key) ?? new Map<string, Labels>();
        seen.set(JSON.stringify(labels), labels);
        firing.set(key, seen);
      }
      if (shape.subject !== undefined && !(await claimed(shape.subject, shape.state))) {
        deps.logger.info(
          { type: message.type, subject: shape.subject },
          'operator alert already posted by another instance',
        );
        return true;
      }
      const results = await Promise.all(
        deps.channels.map((channel) => channel.deliver({ message, shape, ends: resolved })),
      );
      return results.every(Boolean);
    },
    close() {
      for (const channel of deps.channels) channel.close();
    },
    deliveries: () => deps.counts.snapshot(),
  };
}
