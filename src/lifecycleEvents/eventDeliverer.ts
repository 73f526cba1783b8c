import type { SecretBox } from '../accounts/secretBox.js';
import { type PollLoop, startPollLoop } from '../settlement/pollLoop.js';
import type { EventEndpointRepository, SealedEventEndpointRecord } from '../store/eventEndpointRepository.js';
import type { LifecycleEventRecord, LifecycleEventRepository } from '../store/lifecycleEventRepository.js';
import type { SignedEventPoster } from '../webhooks/signedEventPost.js';

/**
 * Delivers the outbox (store/lifecycleEventRepository.ts) in the background: each round claims the due events,
 * posts each to its dApp's endpoint signed with the endpoint's secret, and records the outcome. A failed attempt is
 * retried after `backoffMs · 2^(attempts-1)` (at most `maxBackoffMs`); after `maxAttempts` the event is `failed`
 * and stays in the delivery log, where its owner can replay it. At-least-once: an instance that dies after the
 * receiver accepted and before `delivered` was written posts it again once its lease lapses (same `webhook-id`).
 */
export interface EventDelivererOptions {
  readonly events: LifecycleEventRepository;
  readonly endpoints: EventEndpointRepository;
  readonly secretBox: SecretBox;
  readonly poster: SignedEventPoster;
  readonly logger: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
  readonly now: () => number;
  /**
   * The pause between ticks (ms); 0 starts no loop (tests call runOnce). A tick reads the database only when this
   * instance wrote events since (`wake`), an event it knows of is due, or `idlePollMs` passed since its last look.
   */
  readonly intervalMs: number;
  /**
   * How often an idle instance looks for events it did not write or learn of (another instance's, a restart's):
   * one read of the earliest due time, never a write. Bounds how late another instance's leftovers go out.
   */
  readonly idlePollMs: number;
  /** How long a claim holds an event: longer than one post's time budget, or a slow post is sent twice. */
  readonly leaseMs: number;
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  /** Events claimed (and posted concurrently) at a time. */
  readonly batchSize: number;
}

export interface EventDeliverer {
  /** One round now (after the running one, if any); resolves with how many events were delivered. */
  runOnce(): Promise<number>;
  /** Events were written by this instance: the next tick looks for due events (no query here). */
  wake(): void;
  stop(): Promise<void>;
}

export const EVENT_DELIVERY_DEFAULTS = {
  intervalMs: 1000,
  idlePollMs: 10_000,
  leaseMs: 60_000,
  maxAttempts: 10,
  backoffMs: 5000,
  maxBackoffMs: 60 * 60_000,
  batchSize: 16,
} as const;

/** Claims per round at most: an op's events are claimed one after another, so a round takes a few of them. */
const MAX_CLAIMS_PER_ROUND = 8;

export function startEventDeliverer(options: EventDelivererOptions): EventDeliverer {
  const { events, logger } = options;

  function retryAt(attempts: number, now: number): number | undefined {
    if (attempts >= options.maxAttempts) return undefined;
    return now + Math.min(options.backoffMs * 2 ** Math.max(attempts - 1, 0), options.maxBackoffMs);
  }

  async function failAttempt(event: LifecycleEventRecord, error: string): Promise<void> {
    const nextAttemptAt = retryAt(event.attempts, options.now());
    logger.warn(
      {
        eventId: event.id,
        dappId: event.dappId,
        type: event.type,
        attempts: event.attempts,
        error,
        final: !nextAttemptAt,
      },
      'lifecycle event not delivered',
    );
    await events.markAttemptFailed({ id: event.id, error, nextAttemptAt });
  }

  async function deliver(
    event: LifecycleEventRecord,
    endpoint: SealedEventEndpointRecord | undefined,
  ): Promise<boolean> {
    if (endpoint === undefined || !endpoint.active) {
      await failAttempt(event, 'the dApp has no active event endpoint');
      return false;
    }
    let secret: string;
    try {
      secret = options.secretBox.open(endpoint.signingSecretCiphertext);
    } catch {
      await failAttempt(event, 'the endpoint signing secret does not open with the master key: set the endpoint again');
      return false;
    }
    const result = await options.poster.post({ url: endpoint.url, secret, id: event.id, body: event.payload });
    if (!result.delivered) {
      await failAttempt(event, result.error);
      return false;
    }
    await events.markDelivered({ id: event.id, now: options.now() });
    logger.debug({ eventId: event.id, type: event.type, status: result.status }, 'lifecycle event delivered');
    return true;
  }

  async function round(): Promise<{ claimed: number; delivered: number }> {
    let delivered = 0;
    let claimedAll = 0;
    for (let i = 0; i < MAX_CLAIMS_PER_ROUND; i++) {
      const claimed = await events.claimDue({ now: options.now(), leaseMs: options.leaseMs, limit: options.batchSize });
      if (claimed.length === 0) break;
      claimedAll += claimed.length;
      // One endpoint read per dApp per claim, not per event.
      const endpoints = new Map<string, Promise<SealedEventEndpointRecord | undefined>>();
      const endpointOf = (dappId: string) => {
        let found = endpoints.get(dappId);
        if (found === undefined) {
          found = options.endpoints.findSealed(dappId);
          endpoints.set(dappId, found);
        }
        return found;
      };
      // The claim holds at most one event per op key, so posting them together keeps each op's order.
      const outcomes = await Promise.all(claimed.map(async (e) => deliver(e, await endpointOf(e.dappId))));
      delivered += outcomes.filter(Boolean).length;
    }
    return { claimed: claimedAll, delivered };
  }

  // The idle cost (docs/guides/lifecycle-events.md, "Delivery"): a tick with nothing to do is a comparison in
  // memory; a look is one indexed read (nextDueAt); only a due event costs the claim's UPDATE.
  let woken = true;
  let knownDue: number | undefined;
  let lastLook = Number.NEGATIVE_INFINITY;
  async function tick(): Promise<number> {
    const now = options.now();
    const look = woken || (knownDue !== undefined && now >= knownDue) || now - lastLook >= options.idlePollMs;
    if (!look) return 0;
    woken = false;
    lastLook = now;
    const due = await events.nextDueAt();
    knownDue = due;
    if (due === undefined || due > now) return 0;
    const { claimed, delivered } = await round();
    // Claimed some: look again next tick (more may be due). None although one was due: it waits behind an
    // earlier event of its op, or another instance holds it; the slow poll (or a wake) looks again.
    knownDue = claimed > 0 ? now : undefined;
    return delivered;
  }

  const loop: PollLoop<number> | undefined =
    options.intervalMs > 0
      ? startPollLoop({
          intervalMs: options.intervalMs,
          maxBackoffMs: 60_000,
          firstDelayMs: options.intervalMs,
          tick,
          onError: (err, retryInMs) => logger.warn({ err, retryInMs }, 'lifecycle event delivery round failed'),
        })
      : undefined;

  let tail: Promise<unknown> = Promise.resolve();
  return {
    runOnce() {
      if (loop !== undefined) {
        woken = true;
        return loop.runNow();
      }
      const once = async () => (await round()).delivered;
      const next = tail.then(once, once);
      tail = next.catch(() => {});
      return next;
    },
    wake() {
      woken = true;
    },
    async stop() {
      await loop?.stop();
      await tail;
    },
  };
}
