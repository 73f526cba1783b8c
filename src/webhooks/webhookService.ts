import { randomUUID } from 'node:crypto';
import { createTtlCache } from '../cache/ttlCache.js';
import { LimitExceededError, NotFoundError } from '../errors/PatronError.js';
import { isRecordId, type WebhookRecord, type WebhookRequestType } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { WebhookUrlPolicy } from './webhookUrlPolicy.js';

export interface WebhookServiceDeps {
  readonly store: Store;
  readonly urlPolicy: WebhookUrlPolicy;
  readonly maxWebhooksPerDapp: number;
  readonly cacheTtlMs: number;
  readonly now: () => number;
}

/** Message of every lookup miss, including another tenant's id: the two must be indistinguishable. */
export const WEBHOOK_NOT_FOUND = 'Webhook not found';

/** Registration and lifecycle of a dApp's condition webhooks (spec §2.1, §3, §4.1). */
export function createWebhookService(deps: WebhookServiceDeps) {
  const { store, now } = deps;
  const activeCache = createTtlCache<WebhookRecord[]>({ ttlMs: deps.cacheTtlMs, maxEntries: 10_000 });

  return {
    async create(input: { dappId: string; url: string; requestType: WebhookRequestType }): Promise<WebhookRecord> {
      const url = await deps.urlPolicy.check(input.url);
      const t = now();
      // Decision: a newly registered webhook is active; registering one is asking for it to be used.
      const webhook: WebhookRecord = {
        id: randomUUID(),
        dappId: input.dappId,
        url,
        requestType: input.requestType,
        active: true,
        createdAt: t,
        updatedAt: t,
      };
      const outcome = await store.webhooks.insertWithinLimit({ webhook, limit: deps.maxWebhooksPerDapp });
      if (outcome === 'limit') {
        throw new LimitExceededError(
          `Webhook limit reached: a dApp can have at most ${deps.maxWebhooksPerDapp} webhooks`,
        );
      }
      if (outcome === 'no-dapp') throw new NotFoundError('dApp not found');
      activeCache.delete(input.dappId);
      return webhook;
    },

    /** One webhook of the dApp when `webhookId` is given (404 if it is not the dApp's), else all of them. */
    async list(input: { dappId: string; webhookId?: string }): Promise<WebhookRecord[]> {
      if (input.webhookId === undefined) return store.webhooks.listByDapp(input.dappId);
      if (!isRecordId(input.webhookId)) throw new NotFoundError(WEBHOOK_NOT_FOUND);
      const one = await store.webhooks.findInDapp({ dappId: input.dappId, webhookId: input.webhookId });
      if (one === undefined) throw new NotFoundError(WEBHOOK_NOT_FOUND);
      return [one];
    },

    async setActive(input: { dappId: string; webhookId: string; active: boolean }): Promise<void> {
      const ok = isRecordId(input.webhookId) && (await store.webhooks.setActive({ ...input, now: now() }));
      if (!ok) throw new NotFoundError(WEBHOOK_NOT_FOUND);
      activeCache.delete(input.dappId);
    },

    async delete(input: { dappId: string; webhookId: string }): Promise<void> {
      const ok = isRecordId(input.webhookId) && (await store.webhooks.delete(input));
      if (!ok) throw new NotFoundError(WEBHOOK_NOT_FOUND);
      activeCache.delete(input.dappId);
    },

    /** The dApp's active webhooks, from the cache: the hot-path read of sponsorship requests. */
    async activeWebhooks(dappId: string): Promise<WebhookRecord[]> {
      return activeCache.get(dappId, async () => (await store.webhooks.listByDapp(dappId)).filter((w) => w.active));
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
