import type { SecretBox } from '../crypto/secretBox.js';
import { NotFoundError } from '../errors/PatronError.js';
import type { EventEndpointRecord, EventEndpointRepository } from '../store/events/eventEndpointRepository.js';
import type { LifecycleEventRecord, LifecycleEventRepository } from '../store/events/lifecycleEventRepository.js';
import { isRecordId } from '../store/records.js';
import type { DappRepository } from '../store/tenants/dappRepository.js';
import { generateSigningSecret } from '../webhooks/standardWebhooks.js';
import type { WebhookUrlPolicy } from '../webhooks/webhookUrlPolicy.js';

/** The endpoint as its owner sees it: with the signing secret, which only the owner's own dApp routes return. */
export interface EventEndpointView extends EventEndpointRecord {
  readonly signingSecret: string;
}

/**
 * A dApp's lifecycle-event endpoint: where its events are posted, and the Standard Webhooks secret they are signed
 * with (generated here, sealed with the master key). The URL passes the tenant webhooks' SSRF rule
 * (webhookUrlPolicy.ts) when set, and again at every delivery (signedEventPost.ts).
 */
export interface EventEndpointService {
  get(dappId: string): Promise<EventEndpointView | undefined>;
  /**
   * Sets the URL and whether events are delivered. The secret is kept across changes (receivers keep verifying),
   * unless `rotateSecret`; the first set generates one.
   */
  set(args: { dappId: string; url: string; active: boolean; rotateSecret?: boolean }): Promise<EventEndpointView>;
  /** Removes the endpoint; events still pending fail their attempts until one is set again (or their last). */
  remove(dappId: string): Promise<boolean>;
  /** Throws NotFoundError unless the dApp is the account's (another account's dApp reads as missing). */
  assertOwned(args: { accountId: string; dappId: string }): Promise<void>;
  /** The delivery log, newest first (see LifecycleEventRepository.listByDapp). */
  log(args: Parameters<LifecycleEventRepository['listByDapp']>[0]): Promise<LifecycleEventRecord[]>;
  /** Sends an event again (same id and body); NotFoundError when the dApp has no such event. */
  replay(args: { dappId: string; eventId: string }): Promise<LifecycleEventRecord>;
}

export function createEventEndpointService(deps: {
  readonly endpoints: EventEndpointRepository;
  readonly events: LifecycleEventRepository;
  readonly dapps: Pick<DappRepository, 'findById'>;
  readonly urlPolicy: WebhookUrlPolicy;
  readonly secretBox: SecretBox;
  readonly now: () => number;
}): EventEndpointService {
  const view = (record: EventEndpointRecord, signingSecret: string): EventEndpointView => ({
    dappId: record.dappId,
    url: record.url,
    active: record.active,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    signingSecret,
  });
  return {
    async get(dappId) {
      const found = await deps.endpoints.findSealed(dappId);
      return found && view(found, deps.secretBox.open(found.signingSecretCiphertext));
    },
    async set({ dappId, url, active, rotateSecret }) {
      const checked = await deps.urlPolicy.check(url);
      const existing = await deps.endpoints.findSealed(dappId);
      const signingSecretCiphertext =
        existing === undefined || rotateSecret === true
          ? deps.secretBox.seal(generateSigningSecret())
          : existing.signingSecretCiphertext;
      const saved = await deps.endpoints.upsert({
        dappId,
        url: checked,
        active,
        signingSecretCiphertext,
        now: deps.now(),
      });
      if (saved === 'no-dapp') throw new NotFoundError(`dApp ${dappId} not found`);
      const stored = await deps.endpoints.findSealed(dappId);
      if (stored === undefined) throw new NotFoundError(`dApp ${dappId} not found`);
      return view(stored, deps.secretBox.open(stored.signingSecretCiphertext));
    },
    async remove(dappId) {
      return deps.endpoints.delete(dappId);
    },
    async assertOwned({ accountId, dappId }) {
      const dapp = isRecordId(dappId) ? await deps.dapps.findById(dappId) : undefined;
      if (dapp === undefined || dapp.accountId !== accountId) throw new NotFoundError('dApp not found');
    },
    log(args) {
      return deps.events.listByDapp(args);
    },
    async replay({ dappId, eventId }) {
      const found = (await deps.events.replay({ dappId, eventId, now: deps.now() }))
        ? await deps.events.findInDapp({ dappId, eventId })
        : undefined;
      if (found === undefined) throw new NotFoundError('event not found');
      return found;
    },
  };
}
