import type pg from 'pg';
import { CHANGE_POLL_MS } from '../cache/cachePolicy.js';
import { type AlertClaims, createAlertClaims } from './db/alertClaims.js';
import { startChangeFeed } from './db/changeFeed.js';
import { changeGeneration } from './db/changeGeneration.js';
import { type DatabaseHandle, type DatabaseKind, type OpenDatabaseOptions, openDatabase } from './db/database.js';
import { createFollowerLease, type FollowerLease } from './db/followerLease.js';
import { createEventEndpointRepository, type EventEndpointRepository } from './events/eventEndpointRepository.js';
import { createLifecycleEventRepository, type LifecycleEventRepository } from './events/lifecycleEventRepository.js';
import { createRequestLogRepository, type RequestLogRepository } from './events/requestLogRepository.js';
import { type ChainCursorRepository, createChainCursorRepository } from './ledger/chainCursorRepository.js';
import { createDepositSpendRepository, type DepositSpendRepository } from './ledger/depositSpendRepository.js';
import { createDepositTopupRepository, type DepositTopupRepository } from './ledger/depositTopupRepository.js';
import { createLedgerQueryRepository, type LedgerQueryRepository } from './ledger/ledgerQueryRepository.js';
import { createSolvencyClaims, type SolvencyClaims } from './ledger/solvencyClaims.js';
import { createSpendLedgerRepository, type SpendLedgerRepository } from './ledger/spendLedgerRepository.js';
import {
  createSponsorshipTokenUseRepository,
  type SponsorshipTokenUseRepository,
} from './ledger/sponsorshipTokenUseRepository.js';
import { type UserOpSettlement, withUserOpSettlement } from './ledger/userOpSettlement.js';
import { type AccountRepository, createAccountRepository } from './tenants/accountRepository.js';
import { type AuditLogRepository, createAuditLogRepository } from './tenants/auditLogRepository.js';
import { createDappRepository, type DappRepository } from './tenants/dappRepository.js';
import { createMeeNonceLaneRepository, type MeeNonceLaneRepository } from './tenants/meeNonceLaneRepository.js';
import { createMeeTankRepository, type MeeTankRepository } from './tenants/meeTankRepository.js';
import { createMemberRepository, type MemberRepository } from './tenants/memberRepository.js';
import { createPolicyRepository, type PolicyRepository } from './tenants/policyRepository.js';
import { createSealedSecretsRepository, type SealedSecretsRepository } from './tenants/sealedSecretsRepository.js';
import { createSessionRepository, type SessionRepository } from './tenants/sessionRepository.js';
import { createWebhookRepository, type WebhookRepository } from './tenants/webhookRepository.js';

/** Everything the domain needs from storage, the same on SQLite and PostgreSQL. */
export interface Store {
  readonly kind: DatabaseKind;
  readonly accounts: AccountRepository;
  readonly dapps: DappRepository;
  /** The people of each account's team and their roles; each change written with its audit row. */
  readonly members: MemberRepository;
  /** Who changed what through the admin API (migration 0026). */
  readonly auditLog: AuditLogRepository;
  readonly webhooks: WebhookRepository;
  readonly sessions: SessionRepository;
  /** Everything sealed with the master key, and the key's check value (accounts/masterKey.ts). */
  readonly sealedSecrets: SealedSecretsRepository;
  readonly requestLog: RequestLogRepository;
  readonly policies: PolicyRepository;
  readonly spendLedger: SpendLedgerRepository & UserOpSettlement;
  /** The itemized ledger's reads of the spend ledger (docs/guides/ledger.md). */
  readonly ledger: LedgerQueryRepository;
  /** The deposit keeper's top-ups (src/keeper/): its daily limit is summed from them. */
  readonly depositTopups: DepositTopupRepository;
  /** What included ops took from each paymaster's deposit, by hour: the solvency guard's spend rate and runway. */
  readonly depositSpend: DepositSpendRepository;
  /** The nonce lanes handed out for the MEE gas tanks' payment ops (src/mee/). */
  readonly meeNonceLanes: MeeNonceLaneRepository;
  /** How far the settlement follower has read each chain's EntryPoint logs (src/settlement/). */
  readonly chainCursors: ChainCursorRepository;
  /** Spent sponsorship-token ids, the jti replay store (src/sponsorshipTokens/replayStore.ts). */
  readonly sponsorshipTokenUses: SponsorshipTokenUseRepository;
  /** The outbox of the dApps' lifecycle events and its delivery log (src/lifecycleEvents/). */
  readonly lifecycleEvents: LifecycleEventRepository;
  /** Where each dApp's lifecycle events are posted. */
  readonly eventEndpoints: EventEndpointRepository;
  /** Biconomy MEE gas tanks: the Nexus accounts whose owner key Patron holds, each sponsoring one dApp. */
  readonly meeTanks: MeeTankRepository;
  /**
   * A number that moves whenever another process may have changed what the caches hold, read by the caches to see
   * outside changes: SQLite in a file, the change counter that cached tables' triggers move (migration 0014); PostgreSQL, the change feed's count of `patron_changes` notifications (changeFeed.ts).
   * Undefined for an in-memory database (no other connection).
   */
  readonly externalChanges: ExternalChanges | undefined;
  /** Which process follows each chain's settlement (always this one on SQLite); closed with the store. */
  readonly followerLease: FollowerLease;
  /** Which instance posts each operator alert: one copy across the instances on this database (alertClaims.ts). */
  readonly alertClaims: AlertClaims;
  /** PostgreSQL only: the instances' shares of each paymaster deposit (the solvency guard's claims). */
  readonly solvencyClaims: SolvencyClaims | undefined;
  /** SQLite in a file: its path, for a writer with a connection of its own (the request log's thread). */
  readonly sqliteFile: string | undefined;
  /** PostgreSQL only: the pool, for the rate limiter's shared counts (table rate_limits). */
  readonly pgPool: pg.Pool | undefined;
  /** Where the data is, for log lines (the SQLite file, or PostgreSQL's host:port/database; no credentials). */
  readonly location: string;
  /** Resolves when the storage takes writes now; rejects with the driver's error (db/storageHealth.ts reads it). */
  probe(): Promise<void>;
  close(): Promise<void>;
}

/** How a cache learns of other processes' writes; `pollMs`: read it at most this often (0: on every lookup). */
export interface ExternalChanges {
  readonly generation: () => number;
  readonly pollMs: number;
}

export function createStore(handle: DatabaseHandle): Store {
  const { db } = handle;
  // An in-memory database has no other connection to tell about (tests share one store as "two processes").
  const sqlite = handle.sqlite?.memory === false ? handle.sqlite : undefined;
  const generation = sqlite === undefined ? undefined : changeGeneration(sqlite);
  const feed = handle.pgPool === undefined ? undefined : startChangeFeed(handle.pgPool);
  const followerLease = createFollowerLease({ pgPool: handle.pgPool });
  const externalChanges: ExternalChanges | undefined =
    feed !== undefined
      ? { generation: feed.generation, pollMs: 0 }
      : generation && { generation: () => generation.get() ?? 0, pollMs: CHANGE_POLL_MS };
  const auditLog = createAuditLogRepository(db);
  return {
    kind: handle.kind,
    externalChanges,
    accounts: createAccountRepository(db),
    members: createMemberRepository(db, handle.kind, auditLog),
    auditLog,
    dapps: createDappRepository(db, handle.sqlite),
    webhooks: createWebhookRepository(db, handle.sqlite),
    sessions: createSessionRepository(db, handle.kind),
    sealedSecrets: createSealedSecretsRepository(db),
    requestLog: createRequestLogRepository(db, handle.sqlite),
    policies: createPolicyRepository(db, { sqlite: handle.sqlite, pgPool: handle.pgPool }),
    spendLedger: withUserOpSettlement(db, handle.kind, createSpendLedgerRepository(db, handle.kind, handle.sqlite)),
    ledger: createLedgerQueryRepository(db, handle.kind),
    chainCursors: createChainCursorRepository(db),
    meeNonceLanes: createMeeNonceLaneRepository(db),
    depositTopups: createDepositTopupRepository(db),
    depositSpend: createDepositSpendRepository(db, handle.kind),
    sponsorshipTokenUses: createSponsorshipTokenUseRepository(db, handle.sqlite),
    lifecycleEvents: createLifecycleEventRepository(db, handle.kind),
    eventEndpoints: createEventEndpointRepository(db),
    meeTanks: createMeeTankRepository(db),
    pgPool: handle.pgPool,
    sqliteFile: sqlite?.name,
    followerLease,
    alertClaims: createAlertClaims(db),
    solvencyClaims: handle.pgPool === undefined ? undefined : createSolvencyClaims(handle.pgPool),
    location: handle.location,
    probe: () => handle.probe(),
    async close() {
      await feed?.close();
      await followerLease.close();
      await handle.close();
    },
  };
}

export async function openStore(options: OpenDatabaseOptions): Promise<Store> {
  return createStore(await openDatabase(options));
}
