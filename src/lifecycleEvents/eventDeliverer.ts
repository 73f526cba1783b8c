import { type PollLoop, startPollLoop } from '../async/pollLoop.js';
import type { SecretBox } from '../crypto/secretBox.js';
import type { EventEndpointRepository, SealedEventEndpointRecord } from '../store/events/eventEndpointRepository.js';
import type { LifecycleEventRecord, LifecycleEventRepository } from '../store/events/lifecycleEventRepository.js';
import type { SignedEventPoster } from '../webhooks/signedEventPost.js';

/**
 * Delivers the outbox (store/events/lifecycleEventRepository.ts) in the background: each round claims the due events,
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
  /**
   * Posts in flight per dApp at most (default PER_DAPP_IN_FLIGHT): a dApp whose endpoint never answers holds this
   * many slots, and its other due events wait for them, never another dApp's.
   */
  readonly perDappInFlight?: number;
}

export interface EventDeliverer {
  /**
   * Starts the background loop (none when `intervalMs` is 0); once, and never after stop. Apart from the
   * construction, so a composition root can build the deliverer early (the recorder wakes it) and start it last.
   */
  start(): void;
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

/** Posts in flight per dApp at most, by default. */
export const PER_DAPP_IN_FLIGHT = 4;

/**
 * How long a round waits for a claim's posts before it claims again: an endpoint that answers within it has its
 * op's next event (which waited behind the one posted) claimed in the same round; a slower one goes on in the
 * background, holding only its dApp's share.
 */
const QUICK_POST_MS = 250;

/** A deliverer with its loop started (createEventDeliverer, then start). */
export function startEventDeliverer(options: EventDelivererOptions): EventDeliverer {
  const deliverer = createEventDeliverer(options);
  deliverer.start();
  return deliverer;
}

export function createEventDeliverer(options: EventDelivererOptions): EventDeliverer {
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

  /**
   * Posts in flight, per dApp. A round starts each claimed event's post and goes on claiming without waiting for it
   * (tenants apart: a dApp whose endpoint hangs until the post's timeout delays nobody else's events): claims leave
   * out the dApps whose posts fill their share (`perDappInFlight`), and what a claim took beyond a dApp's share goes
   * back unclaimed at once. The total in flight stays under `batchSize` × MAX_CLAIMS_PER_ROUND.
   */
  const inFlight = new Map<string, number>();
  const posts = new Set<Promise<boolean>>();
  const perDapp = options.perDappInFlight ?? PER_DAPP_IN_FLIGHT;
  const maxInFlight = options.batchSize * MAX_CLAIMS_PER_ROUND;
  let deliveredSinceLook = 0;

  function start(
    event: LifecycleEventRecord,
    endpoint: Promise<SealedEventEndpointRecord | undefined>,
  ): Promise<boolean> {
    inFlight.set(event.dappId, (inFlight.get(event.dappId) ?? 0) + 1);
    const post: Promise<boolean> = (async () => deliver(event, await endpoint))()
      .catch((err: unknown) => {
        logger.warn({ err, eventId: event.id, dappId: event.dappId }, 'lifecycle event delivery failed');
        return false;
      })
      .then((ok) => {
        if (ok) deliveredSinceLook++;
        return ok;
      })
      .finally(() => {
        const left = (inFlight.get(event.dappId) ?? 1) - 1;
        if (left <= 0) inFlight.delete(event.dappId);
        else inFlight.set(event.dappId, left);
        posts.delete(post);
      });
    posts.add(post);
    return post;
  }

  async function round(): Promise<{ claimed: number }> {
    let claimedAll = 0;
    for (let i = 0; i < MAX_CLAIMS_PER_ROUND; i++) {
      const room = maxInFlight - posts.size;
      if (room <= 0) break;
      const full = [...inFlight].filter(([, n]) => n >= perDapp).map(([d]) => d);
      const claimed = await events.claimDue({
        now: options.now(),
        leaseMs: options.leaseMs,
        limit: Math.min(options.batchSize, room),
        excludeDapps: full,
      });
      if (claimed.length === 0) break;
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
      const over: string[] = [];
      const started: Promise<boolean>[] = [];
      const taken = new Map<string, number>();
      for (const e of claimed) {
        const mine = (inFlight.get(e.dappId) ?? 0) + (taken.get(e.dappId) ?? 0);
        if (mine >= perDapp) {
          over.push(e.id);
          continue;
        }
        taken.set(e.dappId, (taken.get(e.dappId) ?? 0) + 1);
        claimedAll++;
        // The claim holds at most one event per dApp and op key, so posting them together keeps each op's order.
        started.push(start(e, endpointOf(e.dappId)));
      }
      if (over.length > 0) await events.unclaim(over);
      let timer: NodeJS.Timeout | undefined;
      const quick = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, QUICK_POST_MS);
      });
      await Promise.race([Promise.allSettled(started), quick]);
      clearTimeout(timer);
    }
    return { claimed: claimedAll };
  }

  /** The posts in flight, finished (runOnce and stop wait for them; the poll loop's ticks do not). */
  async function settled(): Promise<number> {
    while (posts.size > 0) await Promise.allSettled([...posts]);
    const n = deliveredSinceLook;
    deliveredSinceLook = 0;
    return n;
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
    const { claimed } = await round();
    // Claimed some: look again next tick (more may be due). None although one was due: it waits behind an
    // earlier event of its op, or another instance holds it, or its dApp's posts fill its share; the slow poll (or
    // a wake, or the end of a post) looks again.
    knownDue = claimed > 0 || posts.size > 0 ? now : undefined;
    const n = deliveredSinceLook;
    deliveredSinceLook = 0;
    return n;
  }

  // The loop is the deliverer's own state: none until start, none with `intervalMs` 0, none after stop.
  let loop: PollLoop<number> | undefined;
  let stopped = false;

  let tail: Promise<unknown> = Promise.resolve();
  return {
    start() {
      if (loop !== undefined || stopped || options.intervalMs <= 0) return;
      loop = startPollLoop({
        intervalMs: options.intervalMs,
        maxBackoffMs: 60_000,
        firstDelayMs: options.intervalMs,
        tick,
        onError: (err, retryInMs) => logger.warn({ err, retryInMs }, 'lifecycle event delivery round failed'),
      });
    },
    runOnce() {
      if (loop !== undefined) {
        woken = true;
        return loop.runNow().then(async (n) => n + (await settled()));
      }
      const once = async () => {
        await round();
        return settled();
      };
      const next = tail.then(once, once);
      tail = next.catch(() => {});
      return next;
    },
    wake() {
      woken = true;
    },
    async stop() {
      stopped = true;
      await loop?.stop();
      await tail;
      await settled();
    },
  };
}
