/** Domain records as the repositories return them (camelCase, booleans, parsed JSON). */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Every record id is a UUID. Anything else cannot name a record, so lookups answer "not found" without a
 * query (and text PostgreSQL would refuse, such as a NUL byte, never reaches it).
 */
export const isRecordId = (id: string): boolean => UUID.test(id);
export interface Account {
  readonly id: string;
  readonly email: string;
  readonly createdAt: number;
}

export interface AuthTokenRecord {
  readonly id: string;
  readonly accountId: string;
  readonly prefix: string;
  readonly name: string;
  readonly createdAt: number;
  readonly lastUsedAt: number | null;
  readonly revokedAt: number | null;
}

export interface DappRecord {
  readonly id: string;
  readonly accountId: string;
  readonly name: string;
  readonly chainIds: readonly number[];
  readonly apiKeyPrefix: string;
  /** The API key encrypted with the master key (see accounts/secretBox.ts); the lookup uses its hash. */
  readonly apiKeyCiphertext: string;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export type WebhookRequestType = 'GET' | 'POST';

export interface WebhookRecord {
  readonly id: string;
  readonly dappId: string;
  readonly url: string;
  readonly requestType: WebhookRequestType;
  readonly active: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * A webhook with its sealed signing secret. Only the outbound caller and the secret routes need it, so the
 * list/find queries do not even select it. `null`: created before migration 0002, filled lazily before the
 * webhook's first call (see webhookService.activeWebhooks).
 */
export interface SealedWebhookRecord extends WebhookRecord {
  readonly signingSecretCiphertext: string | null;
}
