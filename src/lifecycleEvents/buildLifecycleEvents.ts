import type { SecretBox } from '../accounts/secretBox.js';
import type { Config } from '../config/config.js';
import type { Store } from '../store/store.js';
import { createSignedEventPoster } from '../webhooks/signedEventPost.js';
import type { HostResolver, WebhookUrlPolicy } from '../webhooks/webhookUrlPolicy.js';
import {
  EVENT_DELIVERY_DEFAULTS,
  type EventDeliverer,
  type EventDelivererOptions,
  startEventDeliverer,
} from './eventDeliverer.js';
import { createEventEndpointService, type EventEndpointService } from './eventEndpointService.js';

/** What deps.ts may change of the delivery's pace (tests: no loop, short backoff). */
export type EventDeliveryTuning = Partial<
  Pick<EventDelivererOptions, 'intervalMs' | 'leaseMs' | 'maxAttempts' | 'backoffMs' | 'maxBackoffMs' | 'batchSize'>
>;

export interface LifecycleEvents {
  readonly endpoints: EventEndpointService;
  readonly deliverer: EventDeliverer;
}

/**
 * The dApps' lifecycle events (docs/guides/lifecycle-events.md): the endpoint settings and the background
 * deliverer of the outbox. The tenant webhooks' URL rule, time budget and resolver apply to the endpoints too.
 */
export function buildLifecycleEvents(args: {
  config: Config;
  store: Store;
  secretBox: SecretBox;
  urlPolicy: WebhookUrlPolicy;
  resolve: HostResolver;
  logger: EventDelivererOptions['logger'];
  now: () => number;
  tuning?: EventDeliveryTuning | undefined;
}): LifecycleEvents {
  const poster = createSignedEventPoster({
    timeoutMs: args.config.webhookTimeoutMs,
    allowPrivate: args.config.allowPrivateWebhookUrls,
    resolve: args.resolve,
    now: args.now,
  });
  const endpoints = createEventEndpointService({
    endpoints: args.store.eventEndpoints,
    urlPolicy: args.urlPolicy,
    secretBox: args.secretBox,
    now: args.now,
  });
  const deliverer = startEventDeliverer({
    ...EVENT_DELIVERY_DEFAULTS,
    ...args.tuning,
    events: args.store.lifecycleEvents,
    endpoints: args.store.eventEndpoints,
    secretBox: args.secretBox,
    poster,
    logger: args.logger,
    now: args.now,
  });
  return { endpoints, deliverer };
}
