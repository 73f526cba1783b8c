import { Agent, request } from 'undici';

/**
 * One operator alert's POST to one destination, retried with backoff, in the background (never on a request's path),
 * each destination on its own: a Slack that is down does not hold the Alertmanager's delivery back. Every attempt is
 * counted (`patron_alert_deliveries_total`, docs/reference/metrics.md): the counts are what a Prometheus rule reads
 * to page when the alert path itself is broken (PatronAlertDeliveryFailing).
 *
 * The URLs are the operator's, set in the environment, often at a private address: not held to the tenants' SSRF rule
 * (alertWebhook.ts says why). Each attempt resolves the host again through the system.
 */
export type AlertDestinationName = 'webhook' | 'alertmanager' | 'slack' | 'pagerduty';
export type DeliveryOutcome = 'delivered' | 'retried' | 'failed';

export interface DeliveryCount {
  readonly destination: AlertDestinationName;
  readonly outcome: DeliveryOutcome;
  readonly count: number;
}

/** The attempts' outcomes since start, per destination: the metrics read them at scrape time. */
export interface DeliveryCounts {
  /**
   * Shows the destination's three outcomes at 0 from start: a counter series born at 1 by its first failure has no
   * increase for Prometheus to see, and PatronAlertDeliveryFailing would miss the first lost alert.
   */
  track(destination: AlertDestinationName): void;
  add(destination: AlertDestinationName, outcome: DeliveryOutcome): void;
  snapshot(): readonly DeliveryCount[];
}

export function createDeliveryCounts(): DeliveryCounts {
  const counts = new Map<string, DeliveryCount>();
  return {
    track(destination) {
      for (const outcome of ['delivered', 'retried', 'failed'] as const) {
        const key = `${destination}:${outcome}`;
        if (!counts.has(key)) counts.set(key, { destination, outcome, count: 0 });
      }
    },
    add(destination, outcome) {
      const key = `${destination}:${outcome}`;
      counts.set(key, { destination, outcome, count: (counts.get(key)?.count ?? 0) + 1 });
    },
    snapshot: () => [...counts.values()],
  };
}

export interface AlertRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface AlertPoster {
  /**
   * Posts until a 2xx, at most `retries` more times with doubling waits; true once delivered, false once given up
   * (logged, counted `failed`). `request` is built per attempt (the signed webhook signs each at its own time).
   * `retryClientErrors: false`: a 4xx other than 408 and 429 ends the attempts (the body is what is wrong).
   */
  post(args: {
    readonly destination: AlertDestinationName;
    readonly type: string;
    readonly id: string;
    readonly request: () => AlertRequest;
    readonly retryClientErrors: boolean;
  }): Promise<boolean>;
  /** Stops retries waiting on their backoff. */
  close(): void;
}

export interface AlertPosterDeps {
  readonly logger: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  readonly counts?: DeliveryCounts;
  readonly timeoutMs?: number;
  /** Attempts after the first one. */
  readonly retries?: number;
  /** The first retry's delay; each next one doubles it. */
  readonly backoffMs?: number;
}

const USER_AGENT = 'Patron-Alerts/1';

export function createAlertPoster(deps: AlertPosterDeps): AlertPoster {
  const timeoutMs = deps.timeoutMs ?? 5000;
  const retries = deps.retries ?? 4;
  const backoffMs = deps.backoffMs ?? 2000;
  const waits = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let closed = false;

  async function attempt(req: AlertRequest): Promise<number> {
    const agent = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connect: { timeout: timeoutMs } });
    try {
      const res = await request(new URL(req.url), {
        method: 'POST',
        dispatcher: agent,
        signal: AbortSignal.timeout(timeoutMs),
        headers: { 'user-agent': USER_AGENT, 'content-type': 'application/json', ...req.headers },
        body: req.body,
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
    async post({ destination, type, id, request: build, retryClientErrors }) {
      const counts = deps.counts;
      for (let i = 0; i <= retries && !closed; i++) {
        if (i > 0) await wait(backoffMs * 2 ** (i - 1));
        if (closed) break;
        let final = i === retries;
        try {
          // Never the URL in a log line: the Slack one is a credential (the error serializer keeps origins only).
          const status = await attempt(build());
          if (status >= 200 && status < 300) {
            counts?.add(destination, 'delivered');
            deps.logger.info({ destination, type, id }, 'operator alert delivered');
            return true;
          }
          if (!retryClientErrors && status >= 400 && status < 500 && status !== 408 && status !== 429) final = true;
          deps.logger.warn({ destination, type, id, status, attempt: i + 1 }, 'operator alert refused');
        } catch (err) {
          deps.logger.warn({ err, destination, type, id, attempt: i + 1 }, 'operator alert failed');
        }
        if (final) break;
        counts?.add(destination, 'retried');
      }
      counts?.add(destination, 'failed');
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
