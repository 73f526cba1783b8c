import type { Generated } from 'kysely';

/** Row types of the tables created by ./migrations. Repositories convert them to domain types. */
export interface AccountsTable {
  id: string;
  email: string;
  created_at: number;
}

export interface AuthTokensTable {
  id: string;
  account_id: string;
  token_hash: string;
  prefix: string;
  name: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  /** The member who created it (migration 0026); its role is theirs. */
  member_id: string | null;
}

export interface DappsTable {
  id: string;
  account_id: string;
  name: string;
  /** JSON array of chain ids. */
  chain_ids: string;
  api_key_hash: string;
  api_key_prefix: string;
  api_key_ciphertext: string;
  lock_version: Generated<number>;
  /** JSON: the operator's limits of this dApp (dappSettings/dappLimits.ts); '{}' by default. */
  limits: Generated<string>;
  /** JSON: the owner's caller restrictions (dappSettings/callerRestrictions.ts, migration 0016); '{}' by default. */
  caller_restrictions: Generated<string>;
  /** JSON: { required, keys } of the dApp's sponsorship tokens (migration 0017); '{}' by default. Not read yet. */
  sponsorship_tokens: Generated<string>;
  /** JSON: { enabled, cap? } of the dApp's token guarantees (dappSettings/tokenGuarantees.ts, migration 0023); '{}' (off) by default. */
  token_guarantees: Generated<string>;
  created_at: number;
  updated_at: number;
}

export interface WebhooksTable {
  id: string;
  dapp_id: string;
  url: string;
  request_type: 'GET' | 'POST';
  active: number;
  created_at: number;
  updated_at: number;
  /** Sealed Standard Webhooks secret (migration 0002); null on rows older than it until first filled. */
  signing_secret_ciphertext: string | null;
  /** 0/1 (migration 0010): the call carries the operation too; the column defaults to 0. */
  include_operation: Generated<number>;
}

/** The people of an account's team and their roles (migration 0026). */
export interface AccountMembersTable {
  id: string;
  account_id: string;
  email: string;
  role: string;
  created_at: number;
}

/** A member's dashboard password (migration 0026; an account's own before it, 0003). */
export interface MemberPasswordsTable {
  member_id: string;
  password_hash: string;
  updated_at: number;
}

/** One change made through the admin API (migration 0026). */
export interface AuditLogTable {
  id: string;
  account_id: string;
  dapp_id: string | null;
  at: number;
  member_id: string | null;
  member_email: string;
  auth_token_id: string | null;
  action: string;
  target_id: string | null;
  before_json: string | null;
  after_json: string | null;
  request_id: string | null;
}

export interface DashboardSessionsTable {
  id: string;
  session_hash: string;
  account_id: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  /** Who signed in (migration 0026). */
  member_id: string | null;
}

export interface LoginFailuresTable {
  email: string;
  failed_at: number;
}

export interface RequestLogTable {
  id: string;
  at: number;
  account_id: string;
  dapp_id: string;
  chain_id: number;
  method: string;
  mode: string | null;
  sender: string | null;
  outcome: string;
  error_code: number | null;
  reason: string | null;
  /** 0/1, null when no webhook was called. */
  webhook_allowed: number | null;
  webhook_reason: string | null;
  webhook_latency_ms: number | null;
  webhook_calls: number | null;
  latency_ms: number;
  /** JSON (records.ts RequestLogPolicy), null when no policy was involved. */
  policy: string | null;
  user_op_hash: string | null;
}

export interface IncludedOpsTable {
  chain_id: number;
  user_op_hash: string;
  actual_cost_wei: string;
  at: number;
}

/** One row (migration 0015): the master key's check value (accounts/masterKey.ts). */
export interface MasterKeyCheckTable {
  id: number;
  check_value: string;
  written_at: number;
}

export interface MigrationsTable {
  name: string;
  applied_at: number;
}

export interface PoliciesTable {
  id: string;
  dapp_id: string;
  name: string;
  /** 0/1. */
  active: number;
  /** JSON, as validated by src/policies/policySchema.ts. */
  rules: string;
  created_at: number;
  updated_at: number;
}

export interface SpendCountersTable {
  key: string;
  dapp_id: string;
  window_end: number | null;
  /** Decimal strings. */
  used: string;
  reserved: string;
}

export interface SpendReservationsTable {
  id: string;
  dapp_id: string;
  chain_id: number;
  user_op_hash: string | null;
  status: string;
  /** JSON: LedgerCharge[] without limits. */
  charges: string;
  expires_at: number;
  created_at: number;
  closed_at: number | null;
  actual_wei: string | null;
  /**
   * Migration 0028: what the op took from the paymaster's deposit (actualGasCost), on every close by an inclusion,
   * a user-paid token op's included (the solvency guard's spend rate); null while open and on older rows.
   */
  deposit_wei: Generated<string | null>;
  /** Lower-case 0x hex; null on rows made before migration 0011. */
  paymaster: string | null;
  /** Unix seconds as signed (a time window), or null. */
  valid_until: number | null;
  /** A v0.9 block window's last block, or null. */
  last_block: number | null;
  /** 'sponsored' | 'guarantee'. */
  kind: Generated<string>;
  settled_block: number | null;
  settled_block_hash: string | null;
  /** JSON: {key: amount} added to `used` when the reservation was closed by an event. */
  used_charges: string | null;
  /** Migration 0019 (the itemized ledger): null on older rows. Lower-case 0x hex. */
  sender: Generated<string | null>;
  /** A verified sponsorship token's `sub`. */
  end_user: Generated<string | null>;
  /** JSON array of the applying policies' ids. */
  policy_ids: Generated<string | null>;
  worst_case_wei: Generated<string | null>;
  actual_usd_micros: Generated<string | null>;
  tx_hash: Generated<string | null>;
  /** 1: the op succeeded, 0: it reverted; null until included. */
  success: Generated<number | null>;
  /** Migration 0022: the op's key (chain/opKey.ts), lower-case 0x hex; null on older rows. */
  op_key: Generated<string | null>;
  /** Migration 0022: the signatures' fingerprints (reservationMerge.ts), space-separated; null on older rows. */
  signatures: Generated<string | null>;
}

export interface PolicyVersionsTable {
  dapp_id: string;
  version: number;
}

export interface ChainCursorsTable {
  chain_id: number;
  entry_point: string;
  paymaster: string;
  block_number: number;
  block_hash: string;
  updated_at: number;
}

/** Spent sponsorship-token ids (migration 0017). */
export interface SponsorshipTokenUsesTable {
  dapp_id: string;
  jti: string;
  /** Unix seconds. */
  expires_at: number;
}

/** The outbox of the dApps' lifecycle events (migration 0018, src/lifecycleEvents/). */
export interface LifecycleEventsTable {
  seq: Generated<number>;
  id: string;
  dapp_id: string;
  type: string;
  op_key: string;
  /** JSON text: the body as sent. */
  payload: string;
  created_at: number;
  next_attempt_at: number;
  attempts: Generated<number>;
  /** 'pending' | 'delivered' | 'failed'. */
  state: Generated<string>;
  lease_until: number | null;
  last_error: string | null;
  delivered_at: number | null;
  /** Migration 0020: an event written once whoever writes it (unique when set). */
  dedupe_key: string | null;
  /** Migration 0020: the spend reservation a `sponsorship.signed` event was written for. */
  ref: string | null;
  /** Migration 0020: the chain and block of a `sponsorship.included` event. */
  chain_id: number | null;
  block_number: number | null;
  block_hash: string | null;
}

/** Where a dApp's lifecycle events are posted (migration 0018). */
export interface DappEventEndpointsTable {
  dapp_id: string;
  url: string;
  signing_secret_ciphertext: string;
  active: Generated<number>;
  created_at: number;
  updated_at: number;
}

/** The last state posted of each operator alert's subject (migration 0025, alertClaims.ts). */
export interface AlertClaimsTable {
  subject: string;
  state: string;
  posted_at: number;
}

/** The deposit keeper's top-ups (migration 0027, src/keeper/). */
export interface DepositTopupsTable {
  id: string;
  chain_id: number;
  paymaster: string;
  entry_point: string;
  /** Decimal strings of wei. */
  amount_wei: string;
  funder: string | null;
  /** 'sent' | 'dry_run' | 'proposed'. */
  mode: string;
  tx_hash: string | null;
  /** 'pending' | 'confirmed' | 'failed'. */
  state: string;
  reason: string;
  deposit_wei: string;
  mark_wei: string;
  target_wei: string;
  /** JSON: the Safe transaction and its Transaction Builder batch (mode 'proposed'). */
  proposal: string | null;
  created_at: number;
  updated_at: number;
}

/** Per MEE gas tank, how many nonce lanes were ever allocated (migration 0030). */
export interface MeeNonceCountersTable {
  tank_id: string;
  allocated: number;
}

/** An MEE gas tank's nonce lane as last allocated (migration 0030, store/tenants/meeNonceLaneRepository.ts). */
export interface MeeNonceLanesTable {
  tank_id: string;
  lane: number;
  dapp_id: string;
  /** Decimal string; '' until the EntryPoint's nonce for the lane's key is recorded. */
  nonce: string;
  allocated_at: number;
  signed_at: number | null;
}

/** Biconomy MEE gas tanks (migration 0029, store/tenants/meeTankRepository.ts). */
export interface MeeGasTanksTable {
  id: string;
  dapp_id: string;
  chain_id: number;
  /** Lower-case 0x hex, as the token and the owner. */
  address: string;
  token: string;
  token_decimals: number;
  /** abstractjs's MEEVersion ("2.2.1"). */
  mee_version: string;
  /** JSON: a TankSignerRef (config/tankSignerRef.ts). */
  signer: string;
  owner: string;
  /** 'active' | 'retired'. */
  status: string;
  /** Decimal string of the token's base units; null: no alert. */
  low_balance_wei: string | null;
  created_at: number;
  retired_at: number | null;
}

export interface Database {
  accounts: AccountsTable;
  auth_tokens: AuthTokensTable;
  dapps: DappsTable;
  webhooks: WebhooksTable;
  account_members: AccountMembersTable;
  member_passwords: MemberPasswordsTable;
  audit_log: AuditLogTable;
  dashboard_sessions: DashboardSessionsTable;
  login_failures: LoginFailuresTable;
  request_log: RequestLogTable;
  included_ops: IncludedOpsTable;
  patron_migrations: MigrationsTable;
  patron_master_key_check: MasterKeyCheckTable;
  policies: PoliciesTable;
  spend_counters: SpendCountersTable;
  spend_reservations: SpendReservationsTable;
  chain_cursors: ChainCursorsTable;
  policy_versions: PolicyVersionsTable;
  sponsorship_token_uses: SponsorshipTokenUsesTable;
  lifecycle_events: LifecycleEventsTable;
  dapp_event_endpoints: DappEventEndpointsTable;
  alert_claims: AlertClaimsTable;
  deposit_topups: DepositTopupsTable;
  mee_nonce_counters: MeeNonceCountersTable;
  mee_nonce_lanes: MeeNonceLanesTable;
  mee_gas_tanks: MeeGasTanksTable;
}
