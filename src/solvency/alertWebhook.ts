import { Agent, request } from 'undici';
import { newMessageId, signStandardWebhook } from '../webhooks/standardWebhooks.js';

/**
 * The operator alert webhook (PATRON_ALERT_WEBHOOK_URL): a JSON POST signed per Standard Webhooks
 * (https://www.standardwebhooks.com/, the same headers as the dApp webhooks), with the secret from
 * PATRON_ALERT_WEBHOOK_SECRET. Sent in the background, never on a request's path; retried with backoff, the same
 * `webhook-id` on every attempt so the receiver can drop duplicates.
 *
 * Not held to the tenants' SSRF rule (webhookUrlPolicy.ts), in production either: that rule keeps a tenant from
 * making Patron call inside the operator's network, and this URL is the operator's own, set in the environment, most
 * often an Alertmanager or a pager bridge at a private address. Its host is resolved once at start
 * (alertDestination.ts); each attempt resolves it again through the system, so a moved receiver is followed.
 */
export interface AlertMessage {
  /** Standard Webhooks' event type, e.g. `paymaster.solvency.halted`. */
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
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
}

const USER_AGENT = 'Patron-Alerts/1';

export function createAlertSender(deps: AlertSenderDeps): AlertSender {
  const timeoutMs = deps.timeoutMs ?? 5000;
  const retries = deps.retries ?? 4;
  const backoffMs = deps.backoffMs ?? 2000;
  const waits = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let closed = false;

  async function attempt(id: string, body: string): Promise<number> {
    const url = new URL(deps.url);
    const timestamp = Math.floor(deps.now() / 1000);
    const agent = new Agent({
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connect: { timeout: timeoutMs },
    });
    try {
      const res = await request(url, {
        method: 'POST',
        dispatcher: agent,
        signal: AbortSignal.timeout(timeoutMs),
        headers: {
          'user-agent': USER_AGENT,
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signStandardWebhook({ secret: deps.secret, id, timestamp, body }),
        },
        body,
      });
      await res.body.dump();
      return res.statusCode;
    } finally {
      void agent.close();
    }
  }

  function wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          waits.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      entry.timer.unref();
      waits.add(entry);
    });
  }

  return {
    async send(message) {
      const id = newMessageId();
      const body = JSON.stringify({
        type: message.type,
        timestamp: new Date(deps.now()).toISOString(),
        data: message.data,
      });
      for (let i = 0; i <= retries && !closed; i++) {
        if (i > 0) await wait(backoffMs * 2 ** (i - 1));
        if (closed) break;
        try {
          const status = await attempt(id, body);
          if (status >= 200 && status < 300) {
            deps.logger.info({ type: message.type, id }, 'operator alert delivered');
            return true;
          }
          deps.logger.warn({ type: message.type, id, status, attempt: i + 1 }, 'operator alert refused');
        } catch (err) {
          deps.logger.warn({ err, type: message.type, id, attempt: i + 1 }, 'operator alert failed');
        }
      }
      return false;
    },
    close() {
      closed = true;
      for (const w of waits) {
        clearTimeout(w.timer);
        w.resolve();
      }
      waits.clear();
    },
  };
}
