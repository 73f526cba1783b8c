import type { Logger } from 'pino';
import { type AccountService, createAccountService } from './accounts/accountService.js';
import { createSecretBox, loadMasterKey } from './accounts/secretBox.js';
import type { Config } from './config/config.js';
import { openStore, type Store } from './store/store.js';
import { createWebhookCaller, type WebhookCaller } from './webhooks/webhookCaller.js';
import { createWebhookService, type WebhookService } from './webhooks/webhookService.js';
import { createWebhookUrlPolicy, type HostResolver, systemResolver } from './webhooks/webhookUrlPolicy.js';

/** Every dependency, built once and passed down explicitly; nothing below reads globals. */
export interface Deps {
  readonly config: Config;
  readonly logger: Logger;
  readonly store: Store;
  readonly accounts: AccountService;
  readonly webhooks: WebhookService;
  /** The outbound webhook check's HTTP client (keep-alive pools); closed with the rest. */
  readonly webhookCaller: WebhookCaller;
  readonly now: () => number;
  close(): Promise<void>;
}

export interface DepsOverrides {
  /** A store opened by the caller (tests use in-memory SQLite or a per-test PostgreSQL schema). */
  readonly store?: Store;
  readonly resolver?: HostResolver;
  readonly now?: () => number;
  /** A fixed master key (tests), instead of config / the data directory. */
  readonly masterKey?: Buffer;
}

export async function createDeps(config: Config, logger: Logger, overrides: DepsOverrides = {}): Promise<Deps> {
  const now = overrides.now ?? Date.now;
  const masterKey =
    overrides.masterKey ?? loadMasterKey({ masterKeyHex: config.masterKeyHex, dataDir: config.dataDir });
  const store = overrides.store ?? (await openStore({ storage: config.storage }));
  const secretBox = createSecretBox(masterKey);
  const resolve = overrides.resolver ?? systemResolver;
  const accounts = createAccountService({
    store,
    secretBox,
    cacheTtlMs: config.cacheTtlMs,
    now,
    logger,
  });
  const webhooks = createWebhookService({
    store,
    urlPolicy: createWebhookUrlPolicy({
      allowPrivate: config.allowPrivateWebhookUrls,
      resolve,
    }),
    secretBox,
    maxWebhooksPerDapp: config.maxWebhooksPerDapp,
    cacheTtlMs: config.cacheTtlMs,
    now,
  });
  const webhookCaller = createWebhookCaller({
    timeoutMs: config.webhookTimeoutMs,
    maxResponseBytes: config.webhookMaxResponseBytes,
    allowPrivate: config.allowPrivateWebhookUrls,
    resolve,
    secretBox,
    now,
    logger,
  });
  const close = async () => {
    try {
      await webhookCaller.close();
    } finally {
      await store.close();
    }
  };
  return { config, logger, store, accounts, webhooks, webhookCaller, now, close };
}
