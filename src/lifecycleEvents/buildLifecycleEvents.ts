import type { Config } from '../config/config.js';
import type { SecretBox } from '../crypto/secretBox.js';
import type { OnCall } from '../rpc/callReport.js';
import type { Store } from '../store/store.js';
import { cachingResolver } from '../webhooks/cachingResolver.js';
import { createSignedEventPoster } from '../webhooks/signedEventPost.js';
import type { HostResolver, WebhookUrlPolicy } from '../webhooks/webhookUrlPolicy.js';
import {
  createEventDeliverer,
  EVENT_DELIVERY_DEFAULTS,
  type EventDeliverer,
  type EventDelivererOptions,
} from './eventDeliverer.js';
import { createEventEndpointService, type EventEndpointService } from './eventEndpointService.js';
import { createEventRecorder, type EventRecorder } from './eventRecorder.js';
import { createReorgEmitter, createThresholdEmitter, createTokenChargedEmitter } from './laterEventEmitters.js';
import { createIncludedEmitter, lifecycleEventsOnCall } from './lifecycleEventEmitters.js';

/** How often the recorded events are written to the outbox: what a crash may lose at most. */
const RECORDER_FLUSH_MS = 250;
const RECORDER_MAX_QUEUE = 100_000;

/** What deps.ts may change of the delivery's pace (tests: no loop, short backoff). */
export type EventDeliveryTuning = Partial<
  Pick<
    EventDelivererOptions,
    'intervalMs' | 'idlePollMs' | 'leaseMs' | 'maxAttempts' | 'backoffMs' | 'maxBackoffMs' | 'batchSize'
  >
>;

export interface LifecycleEvents {
  readonly endpoints: EventEndpointService;
  /** Built stopped: the composition root starts it last (`deliverer.start()`), once the rest is up. */
  readonly deliverer: EventDeliverer;
  /** The outbox's writer: the emitters append to it, off the request path. */
  readonly recorder: EventRecorder;
  /** `sponsorship.signed`, observing finished paymaster calls. */
  readonly onCall: OnCall;
  /** `sponsorship.included`, for settlement's onIncluded. */
  readonly onIncluded: ReturnType<typeof createIncludedEmitter>;
  /** `sponsorship.reorged`, for settlement's onReorg. */
  readonly onReorg: ReturnType<typeof createReorgEmitter>;
  /** `token.charged`, for settlement's onTokenCharged. */
  readonly onTokenCharged: ReturnType<typeof createTokenChargedEmitter>;
  /** `policy.threshold`, for the policy gate's onThreshold. */
  readonly onThreshold: ReturnType<typeof createThresholdEmitter>;
  /** Writes what is queued, then stops the deliverer. */
  close(): Promise<void>;
}

/**
 * The dApps' lifecycle events (docs/guides/lifecycle-events.md): the endpoint settings and the background
 * deliverer of the outbox. The tenant webhooks' URL rule, time budget and resolver apply to the endpoints too (the
 * posts reuse DNS answers for PATRON_WEBHOOK_DNS_CACHE_SECONDS, in a cache of their own). Built before the policy gate,
 * which tells `onThreshold`; the deliverer's loop is not started here (LifecycleEvents.deliverer).
 */
export function buildLifecycleEvents(args: {
  config: Pick<Config, 'webhookTimeoutMs' | 'allowPrivateWebhookUrls' | 'webhookDnsCacheMs'>;
  store: Store;
  secretBox: SecretBox;
  urlPolicy: WebhookUrlPolicy;
  resolve: HostResolver;
  logger: EventDelivererOptions['logger'];
  now: () => number;
  tuning?: EventDeliveryTuning | undefined;
  nativeUsdMicros: (chainId: number) => bigint | undefined;
}): LifecycleEvents {
  const poster = createSignedEventPoster({
    timeoutMs: args.config.webhookTimeoutMs,
    allowPrivate: args.config.allowPrivateWebhookUrls,
    resolve: cachingResolver(args.resolve, { ttlMs: args.config.webhookDnsCacheMs, now: args.now }),
    now: args.now,
  });
  const endpoints = createEventEndpointService({
    endpoints: args.store.eventEndpoints,
    events: args.store.lifecycleEvents,
    dapps: args.store.dapps,
    urlPolicy: args.urlPolicy,
    secretBox: args.secretBox,
    now: args.now,
  });
  const deliverer = createEventDeliverer({
    ...EVENT_DELIVERY_DEFAULTS,
    ...args.tuning,
    events: args.store.lifecycleEvents,
    endpoints: args.store.eventEndpoints,
    secretBox: args.secretBox,
    poster,
    logger: args.logger,
    now: args.now,
  });
  const recorder = createEventRecorder({
    events: args.store.lifecycleEvents,
    endpoints: args.store.eventEndpoints,
    logger: args.logger,
    flushMs: RECORDER_FLUSH_MS,
    maxQueue: RECORDER_MAX_QUEUE,
    // This instance's new events go out at once; the deliverer's slow poll finds the others' (eventDeliverer.ts).
    onWritten: () => deliverer.wake(),
  });
  return {
    endpoints,
    deliverer,
    recorder,
    onCall: lifecycleEventsOnCall(recorder),
    onIncluded: createIncludedEmitter({
      recorder,
      events: args.store.lifecycleEvents,
      nativeUsdMicros: args.nativeUsdMicros,
      now: args.now,
    }),
    onReorg: createReorgEmitter({ recorder, events: args.store.lifecycleEvents, now: args.now }),
    onTokenCharged: createTokenChargedEmitter({ recorder, events: args.store.lifecycleEvents, now: args.now }),
    onThreshold: createThresholdEmitter({ recorder, now: args.now }),
    async close() {
      await recorder.close();
      await deliverer.stop();
    },
  };
}
