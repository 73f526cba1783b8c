import { newMessageId, signStandardWebhook } from '../webhooks/standardWebhooks.js';
import { createAlertPoster, type DeliveryCounts } from './alerts/alertPoster.js';

/**
 * The operator alert webhook (PATRON_ALERT_WEBHOOK_URL): a JSON POST signed per Standard Webhooks
 * (https://www.standardwebhooks.com/, the same headers as the dApp webhooks), with the secret from
 * PATRON_ALERT_WEBHOOK_SECRET. Sent in the background, never on a request's path; retried with backoff, the same
 * `webhook-id` on every attempt so the receiver can drop duplicates.
 *
 * Not held to the tenants' SSRF rule (webhookUrlPolicy.ts), in production either: that rule keeps a tenant from
 * making Patron call inside the operator's network, and this URL is the operator's own, set in the environment, most
 * often a pager bridge at a private address (Alertmanager's own API has its own destination: alerts/). Its host is resolved once at start
 * (alertDestination.ts); each attempt resolves it again through the system, so a moved receiver is followed.
 */
export interface AlertMessage {
  /** Standard Webhooks' event type, e.g. `paymaster.solvency.halted`. */
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
  /**
   * A condition that cleared without news for the operator (the solvency guard's `low` warning re-armed): not posted
   * to this webhook nor to Slack, but Alertmanager ends the alert and PagerDuty resolves the incident it opened, and
   * the cross-instance claim moves (src/solvency/alerts/README.md).
   */
  readonly silent?: boolean;
}

export interface AlertSender {
  /** Resolves true once a 2xx came back, false after the last attempt failed (logged); never rejects. */
  send(message: AlertMessage): Promise<boolean>;
  /** Stops retries waiting on their backoff. */
  close(): void;
}

export interface AlertSenderDeps {
  readonly url: string;
  readonly secret: string;
  readonly logger: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  readonly now: () => number;
  readonly timeoutMs?: number;
  /** Attempts after the first one. */
  readonly retries?: number;
  /** The first retry's delay; each next one doubles it. */
  readonly backoffMs?: number;
  /** Where each attempt's outcome is counted (`patron_alert_deliveries_total{destination="webhook"}`). */
  readonly counts?: DeliveryCounts;
}

export function createAlertSender(deps: AlertSenderDeps): AlertSender {
  const poster = createAlertPoster({
    logger: deps.logger,
    ...(deps.counts === undefined ? {} : { counts: deps.counts }),
    ...(deps.timeoutMs === undefined ? {} : { timeoutMs: deps.timeoutMs }),
    ...(deps.retries === undefined ? {} : { retries: deps.retries }),
    ...(deps.backoffMs === undefined ? {} : { backoffMs: deps.backoffMs }),
  });
  return {
    async send(message) {
      if (message.silent === true) return true;
      const id = newMessageId();
      const body = JSON.stringify({
        type: message.type,
        timestamp: new Date(deps.now()).toISOString(),
        data: message.data,
      });
      return poster.post({
        destination: 'webhook',
        type: message.type,
        id,
        // Signed at each attempt's time, under the same webhook-id.
        request: () => {
          const timestamp = Math.floor(deps.now() / 1000);
          return {
            url: deps.url,
            headers: {
              'webhook-id': id,
              'webhook-timestamp': String(timestamp),
              'webhook-signature': signStandardWebhook({ secret: deps.secret, id, timestamp, body }),
            },
            body,
          };
        },
        // As before this sender learnt of other destinations: any non-2xx is tried again.
        retryClientErrors: true,
      });
    },
    close: () => poster.close(),
  };
}
