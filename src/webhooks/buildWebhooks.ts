import type { CachePolicy } from '../cache/cachePolicy.js';
import type { Config } from '../config/config.js';
import type { SecretBox } from '../crypto/secretBox.js';
import type { Store } from '../store/store.js';
import { cachingResolver } from './cachingResolver.js';
import { createWebhookCaller, type WebhookCaller, type WebhookCallerLogger } from './webhookCaller.js';
import { createWebhookService, type WebhookService } from './webhookService.js';
import { createWebhookUrlPolicy, type HostResolver, type WebhookUrlPolicy } from './webhookUrlPolicy.js';

/**
 * The dApps' webhooks as deps.ts builds them: the tenant URL rules (webhook URLs, and the JWKS URLs a dApp
 * registers), the registry, and the outbound sponsorship check's HTTP client (keep-alive pools; the caller closes
 * it). Registration always asks DNS afresh; the per-sponsorship call reuses answers for PATRON_WEBHOOK_DNS_CACHE_SECONDS.
 */
export function buildWebhooks(args: {
  readonly config: Pick<
    Config,
    | 'allowPrivateWebhookUrls'
    | 'maxWebhooksPerDapp'
    | 'webhookTimeoutMs'
    | 'webhookMaxResponseBytes'
    | 'webhookDnsCacheMs'
  >;
  readonly store: Store;
  readonly secretBox: SecretBox;
  readonly cache: CachePolicy;
  readonly resolve: HostResolver;
  readonly logger: WebhookCallerLogger;
  readonly now: () => number;
}): { readonly urlPolicy: WebhookUrlPolicy; readonly webhooks: WebhookService; readonly webhookCaller: WebhookCaller } {
  const { config, secretBox, resolve, now } = args;
  const urlPolicy = createWebhookUrlPolicy({ allowPrivate: config.allowPrivateWebhookUrls, resolve });
  return {
    urlPolicy,
    webhooks: createWebhookService({
      store: args.store,
      urlPolicy,
      secretBox,
      maxWebhooksPerDapp: config.maxWebhooksPerDapp,
      cache: args.cache,
      now,
    }),
    webhookCaller: createWebhookCaller({
      timeoutMs: config.webhookTimeoutMs,
      maxResponseBytes: config.webhookMaxResponseBytes,
      allowPrivate: config.allowPrivateWebhookUrls,
      resolve: cachingResolver(resolve, { ttlMs: config.webhookDnsCacheMs, now }),
      secretBox,
      now,
      logger: args.logger,
    }),
  };
}
