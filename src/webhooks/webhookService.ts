import { randomUUID } from 'node:crypto';
import type { CachePolicy } from '../cache/cachePolicy.js';
import { createTtlCache } from '../cache/ttlCache.js';
import type { SecretBox } from '../crypto/secretBox.js';
import { LimitExceededError, NotFoundError, ValidationError } from '../errors/PatronError.js';
import { isRecordId, type SealedWebhookRecord, type WebhookRecord, type WebhookRequestType } from '../store/records.js';
import type { Store } from '../store/store.js';
import { generateSigningSecret } from './standardWebhooks.js';
import type { SignableWebhook } from './webhookCaller.js';
import type { WebhookUrlPolicy } from './webhookUrlPolicy.js';

export interface WebhookServiceDeps {
  readonly store: Store;
  readonly urlPolicy: WebhookUrlPolicy;
  /** Seals the Standard Webhooks signing secrets (https://www.standardwebhooks.com/) at rest. */
  readonly secretBox: SecretBox;
  readonly maxWebhooksPerDapp: number;
  /** How the lookup caches live (cachePolicy.ts). */
  readonly cache: CachePolicy;
  readonly now: () => number;
}

/** Message of every lookup miss, including another tenant's id: the two must be indistinguishable. */
export const WEBHOOK_NOT_FOUND = 'Webhook not found';

/** A webhook together with its signing secret in clear: returned once, on creation or rotation. */
export interface WebhookWithSecret {
  readonly webhook: WebhookRecord;
  readonly signingSecret: string;
}

type ActiveWebhook = WebhookRecord & SignableWebhook;

/**
 * Why the option is POST-only (docs/guides/webhooks.md, "Webhooks"): a GET call's Standard Webhooks signature covers an empty
 * body, not the query string, so an operation sent there would arrive unauthenticated; and an op's callData and
 * initCode can exceed the URL length common servers accept (8 KiB).
 */
export const INCLUDE_OPERATION_GET_MESSAGE =
  "includeOperation requires requestType POST: a GET call's signature does not cover its query string";

const assertIncludeOperationAllowed = (requestType: WebhookRequestType, includeOperation: boolean | undefined) => {
  if (includeOperation === true && requestType !== 'POST') throw new ValidationError(INCLUDE_OPERATION_GET_MESSAGE);
};

/** Registration and lifecycle of a dApp's condition webhooks (spec §2.1, §3, §4.1). */
export function createWebhookService(deps: WebhookServiceDeps) {
  const { store, now, secretBox } = deps;
  const activeCache = createTtlCache<ActiveWebhook[]>(deps.cache);

  /** Admin routes act on a dApp of the signed-in account; another account's dApp reads as missing. */
  const assertOwnedDapp = async (args: { accountId: string; dappId: string; message: string }) => {
    const dapp = isRecordId(args.dappId) ? await store.dapps.findById(args.dappId) : undefined;
    if (dapp === undefined || dapp.accountId !== args.accountId) throw new NotFoundError(args.message);
  };

  /**
   * Active webhooks, each with a sealed secret. Rows older than migration 0002 have none: one is generated and
   * stored where still missing (compare-and-set, so concurrent processes keep one), then the list is re-read.
   */
  const loadActive = async (dappId: string): Promise<ActiveWebhook[]> => {
    let rows = await store.webhooks.listActiveSealed(dappId);
    const missing = rows.filter((w) => w.signingSecretCiphertext === null);
    if (missing.length > 0) {
      const fill = (w: SealedWebhookRecord) =>
        store.webhooks.fillMissingSigningSecret({
          webhookId: w.id,
          signingSecretCiphertext: secretBox.seal(generateSigningSecret()),
        });
      await Promise.all(missing.map(fill));
      rows = await store.webhooks.listActiveSealed(dappId);
    }
    return rows.map(({ signingSecretCiphertext, ...w }) => {
      // Never skip a webhook (that would let a request through unchecked): a missing secret here is a bug.
      if (signingSecretCiphertext === null) throw new Error(`webhook ${w.id} has no signing secret`);
      return { ...w, signingSecretCiphertext };
    });
  };

  /**
   * Creation times that never repeat in this process: the list is ordered oldest first by them, and two webhooks
   * registered within one millisecond would otherwise fall back to the order of their random ids.
   */
  let lastCreatedAt = 0;
  const creationTime = (): number => {
    lastCreatedAt = Math.max(now(), lastCreatedAt + 1);
    return lastCreatedAt;
  };

  const service = {
    /** Registers a webhook with a new signing secret, returned here in clear and never again. */
    async create(input: {
      dappId: string;
      url: string;
      requestType: WebhookRequestType;
      includeOperation?: boolean | undefined;
    }): Promise<WebhookWithSecret> {
      assertIncludeOperationAllowed(input.requestType, input.includeOperation);
      const url = await deps.urlPolicy.check(input.url);
      const t = creationTime();
      const signingSecret = generateSigningSecret();
      // Decision: a newly registered webhook is active; registering one is asking for it to be used.
      const webhook: WebhookRecord = {
        id: randomUUID(),
        dappId: input.dappId,
        url,
        requestType: input.requestType,
        active: true,
        includeOperation: input.includeOperation === true,
        createdAt: t,
        updatedAt: t,
      };
      const outcome = await store.webhooks.insertWithinLimit({
        webhook: { ...webhook, signingSecretCiphertext: secretBox.seal(signingSecret) },
        limit: deps.maxWebhooksPerDapp,
      });
      if (outcome === 'limit') {
        throw new LimitExceededError(
          `Webhook limit reached: a dApp can have at most ${deps.maxWebhooksPerDapp} webhooks`,
        );
      }
      if (outcome === 'no-dapp') throw new NotFoundError('dApp not found');
      activeCache.delete(input.dappId);
      return { webhook, signingSecret };
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

    /**
     * Sets `active`, `includeOperation` or both. Turning includeOperation on for a GET webhook is refused (400);
     * the request type never changes after creation, so reading it first cannot race with a change.
     */
    async update(input: {
      dappId: string;
      webhookId: string;
      active?: boolean | undefined;
      includeOperation?: boolean | undefined;
    }): Promise<void> {
      if (!isRecordId(input.webhookId)) throw new NotFoundError(WEBHOOK_NOT_FOUND);
      if (input.includeOperation === true) {
        const found = await store.webhooks.findInDapp(input);
        if (found === undefined) throw new NotFoundError(WEBHOOK_NOT_FOUND);
        assertIncludeOperationAllowed(found.requestType, true);
      }
      const ok = await store.webhooks.update({
        dappId: input.dappId,
        webhookId: input.webhookId,
        ...(input.active === undefined ? {} : { active: input.active }),
        ...(input.includeOperation === undefined ? {} : { includeOperation: input.includeOperation }),
        now: now(),
      });
      if (!ok) throw new NotFoundError(WEBHOOK_NOT_FOUND);
      activeCache.delete(input.dappId);
    },

    async delete(input: { dappId: string; webhookId: string }): Promise<void> {
      const ok = isRecordId(input.webhookId) && (await store.webhooks.delete(input));
      if (!ok) throw new NotFoundError(WEBHOOK_NOT_FOUND);
      activeCache.delete(input.dappId);
    },

    /**
     * The dApp's active webhooks with their sealed secrets, from the cache: the hot-path read of sponsorship
     * requests. After a rotation, another process signs with the old secret until its cache sees the change
     * (cachePolicy.ts: within 100 ms on SQLite, the cache TTL on PostgreSQL).
     */
    async activeWebhooks(dappId: string): Promise<ActiveWebhook[]> {
      return activeCache.get(dappId, () => loadActive(dappId));
    },

    /** The webhooks of a dApp of this account (no secrets); another account's dApp is "dApp not found". */
    async listForAccount(input: { accountId: string; dappId: string }): Promise<WebhookRecord[]> {
      await assertOwnedDapp({ ...input, message: 'dApp not found' });
      return store.webhooks.listByDapp(input.dappId);
    },

    /**
     * Replaces a webhook's signing secret; the old one stops being used at once here. Another account's
     * dApp or webhook is "Webhook not found", exactly like a missing one.
     */
    async rotateSigningSecret(input: {
      accountId: string;
      dappId: string;
      webhookId: string;
    }): Promise<WebhookWithSecret> {
      await assertOwnedDapp({ ...input, message: WEBHOOK_NOT_FOUND });
      if (!isRecordId(input.webhookId)) throw new NotFoundError(WEBHOOK_NOT_FOUND);
      const signingSecret = generateSigningSecret();
      const webhook = await store.webhooks.replaceSigningSecret({
        dappId: input.dappId,
        webhookId: input.webhookId,
        signingSecretCiphertext: secretBox.seal(signingSecret),
        now: now(),
      });
      if (webhook === undefined) throw new NotFoundError(WEBHOOK_NOT_FOUND);
      activeCache.delete(input.dappId);
      return { webhook, signingSecret };
    },
  };

  /**
   * The admin API's (the dashboard's) account-scoped forms of the spec operations: the dApp must be the
   * account's, and another account's dApp or webhook reads exactly like a missing one.
   */
  return {
    ...service,

    async createForAccount(input: {
      accountId: string;
      dappId: string;
      url: string;
      requestType: WebhookRequestType;
      includeOperation?: boolean | undefined;
    }): Promise<WebhookWithSecret> {
      await assertOwnedDapp({ ...input, message: 'dApp not found' });
      return service.create(input);
    },

    async updateForAccount(input: {
      accountId: string;
      dappId: string;
      webhookId: string;
      active?: boolean | undefined;
      includeOperation?: boolean | undefined;
    }) {
      await assertOwnedDapp({ ...input, message: WEBHOOK_NOT_FOUND });
      await service.update(input);
    },

    async deleteForAccount(input: { accountId: string; dappId: string; webhookId: string }) {
      await assertOwnedDapp({ ...input, message: WEBHOOK_NOT_FOUND });
      await service.delete(input);
    },

    /**
     * A webhook of the account's dApp with its sealed secret (filled first if it predates migration 0002):
     * for a test call, or to show the secret on the owner's explicit request.
     */
    async sealedForAccount(input: {
      accountId: string;
      dappId: string;
      webhookId: string;
    }): Promise<WebhookRecord & SignableWebhook> {
      await assertOwnedDapp({ ...input, message: WEBHOOK_NOT_FOUND });
      if (!isRecordId(input.webhookId)) throw new NotFoundError(WEBHOOK_NOT_FOUND);
      const find = () => store.webhooks.findSealedInDapp(input);
      let found = await find();
      if (found !== undefined && found.signingSecretCiphertext === null) {
        const signingSecretCiphertext = secretBox.seal(generateSigningSecret());
        await store.webhooks.fillMissingSigningSecret({ webhookId: found.id, signingSecretCiphertext });
        found = await find();
      }
      if (found === undefined || found.signingSecretCiphertext === null) throw new NotFoundError(WEBHOOK_NOT_FOUND);
      return { ...found, signingSecretCiphertext: found.signingSecretCiphertext };
    },

    /** Opens a sealed signing secret (the owner asked to see it). */
    revealSigningSecret: (sealed: SignableWebhook): string => secretBox.open(sealed.signingSecretCiphertext),
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
