import type { CallerRestrictions } from '../dappSettings/callerRestrictions.js';
import type { DappLimits } from '../dappSettings/dappLimits.js';
import type { DappTokenSettings } from '../dappSettings/sponsorshipTokenSettings.js';
import type { TokenGuarantees } from '../dappSettings/tokenGuarantees.js';

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

/** What a member of an account's team may do (docs/guides/dashboard.md, "Team and roles"), least first. */
export const MEMBER_ROLES = ['viewer', 'operator', 'owner'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];
export const isMemberRole = (s: string): s is MemberRole => (MEMBER_ROLES as readonly string[]).includes(s);
/** Whether `role` may do what needs `needed`: each role can do all the roles before it can. */
export const roleAtLeast = (role: MemberRole, needed: MemberRole): boolean =>
  MEMBER_ROLES.indexOf(role) >= MEMBER_ROLES.indexOf(needed);

/** A person of an account's team: their own sign-in email, and their role on all the account's dApps. */
export interface MemberRecord {
  readonly id: string;
  readonly accountId: string;
  readonly email: string;
  readonly role: MemberRole;
  readonly createdAt: number;
}

/** One change made through the admin API; `before` and `after` are JSON text, secrets already redacted. */
export interface AuditRecord {
  readonly id: string;
  readonly accountId: string;
  readonly dappId: string | null;
  readonly at: number;
  readonly memberId: string | null;
  readonly memberEmail: string;
  readonly authTokenId: string | null;
  readonly action: string;
  readonly targetId: string | null;
  readonly before: string | null;
  readonly after: string | null;
  readonly requestId: string | null;
}

export interface AuthTokenRecord {
  readonly id: string;
  readonly accountId: string;
  /** Whose token: it acts with this member's role (null only on rows no member claimed, refused). */
  readonly memberId: string | null;
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
  /** The operator's limits (bounds overrides); empty for the deployment's values. */
  readonly limits: DappLimits;
  /** Who may call its paymaster URL (the owner's origins, IP ranges, method families), compiled for the hot path. */
  readonly restrictions: CallerRestrictions;
  /**
   * Its sponsorship-token settings (docs/guides/sponsorship-tokens.md); undefined when it registered no key, the
   * hot path's one check. Optional so records built elsewhere (tests, benches) need not name it.
   */
  readonly sponsorshipTokens?: DappTokenSettings | undefined;
  /**
   * Its token guarantees (dappSettings/tokenGuarantees.ts): whether the token mode's mode 2 may be signed for it, and the
   * cap. Undefined counts as off, so records built elsewhere (tests, benches) need not name it.
   */
  readonly tokenGuarantees?: TokenGuarantees | undefined;
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
  /** The call carries the operation to approve besides `data` (migration 0010; POST webhooks only). */
  readonly includeOperation: boolean;
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

/** A dashboard session; the cookie's secret is not here (the store keeps only its hash). */
export interface SessionRecord {
  readonly id: string;
  readonly accountId: string;
  readonly memberId: string | null;
  readonly createdAt: number;
  readonly lastSeenAt: number;
  /** The absolute end, whatever the activity. */
  readonly expiresAt: number;
}

/**
 * How a paymaster JSON-RPC call ended: `sponsored` (a signed paymasterAndData, in either mode), `quoted`
 * (answered without a usable signature: an ERC-20 fee quote, or an ERC-7677 stub), `denied` (the dApp's
 * webhook said no or gave no verdict: -32010, -32011), `error` (anything else).
 */
export type RequestOutcome = 'sponsored' | 'quoted' | 'denied' | 'error';
export const REQUEST_OUTCOMES: readonly RequestOutcome[] = ['sponsored', 'quoted', 'denied', 'error'];

/** One request-log row. */
export interface RequestLogEntry {
  readonly at: number;
  readonly accountId: string;
  readonly dappId: string;
  readonly chainId: number;
  readonly method: string;
  readonly mode: string | null;
  readonly sender: string | null;
  readonly outcome: RequestOutcome;
  /** The JSON-RPC error code, null on success. */
  readonly errorCode: number | null;
  /** Why it failed: the error's `data.reason` when it has one, else its message. */
  readonly reason: string | null;
  readonly webhook: {
    readonly allowed: boolean;
    readonly reason: string | null;
    readonly latencyMs: number;
    readonly calls: number;
  } | null;
  readonly latencyMs: number;
  /** The policy decision: what was reserved, or which rule denied. */
  readonly policy: RequestLogPolicy | null;
  /** A signed op's EntryPoint userOpHash (lower-case hex), the key settlement writes its cost by. */
  readonly userOpHash: string | null;
}

export interface RequestLogPolicy {
  readonly decision: 'passed' | 'denied';
  /** The denying rule and policy. */
  readonly rule?: string;
  readonly policyId?: string;
  /** The policies that applied (passed). */
  readonly policyIds?: readonly string[];
  readonly reservationId?: string;
  /** What was reserved per cap kind: amounts in the unit (wei, micro-USD, ops) as decimal strings. */
  readonly reserved?: readonly { readonly unit: string; readonly amount: string }[];
  /** A token-mode op signed in mode 2 (its charge guaranteed by the dApp); absent for mode 1 and sponsored ops. */
  readonly guarantee?: true;
}

export interface StoredRequestLogEntry extends RequestLogEntry {
  readonly id: string;
  /** The op's actualGasCost once settlement saw it on chain (wei, decimal). */
  readonly actualCostWei: string | null;
}
