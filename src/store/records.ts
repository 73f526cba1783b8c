/** Domain records as the repositories return them (camelCase, booleans, parsed JSON). */
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
