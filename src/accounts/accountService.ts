import { randomUUID } from 'node:crypto';
import type { CachePolicy } from '../cache/cachePolicy.js';
import { createTtlCache } from '../cache/ttlCache.js';
import type { SecretBox } from '../crypto/secretBox.js';
import {
  type CallerRestrictionsDoc,
  callerRestrictionsSchema,
  NO_CALLER_RESTRICTIONS,
} from '../dappSettings/callerRestrictions.js';
import { NO_DAPP_LIMITS, parseDappLimits } from '../dappSettings/dappLimits.js';
import { type DappTokenSettings, dappTokenSettingsSchema } from '../dappSettings/sponsorshipTokenSettings.js';
import { NO_TOKEN_GUARANTEES, type TokenGuarantees, tokenGuaranteesSchema } from '../dappSettings/tokenGuarantees.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors/PatronError.js';
import { parseInput } from '../errors/parseInput.js';
import {
  type Account,
  type AuthTokenRecord,
  type DappRecord,
  isRecordId,
  type MemberRecord,
} from '../store/records.js';
import type { Store } from '../store/store.js';
import { generateApiKey, generateAuthToken, hashSecret, looksLikeApiKey, looksLikeAuthToken } from './credentials.js';
import { pemProblems } from './dappTokenSettings.js';
import { refuseUnserved } from './refuseUnserved.js';
import { chainIdsSchema, dappNameSchema, emailSchema, tokenNameSchema } from './schemas.js';

export interface Logger {
  warn(obj: object, msg: string): void;
}

export interface AccountServiceDeps {
  readonly store: Store;
  readonly secretBox: SecretBox;
  /** How the lookup caches live (cachePolicy.ts). */
  readonly cache: CachePolicy;
  readonly now: () => number;
  readonly logger: Logger;
  /**
   * The chains this deployment serves (the dev chain and PATRON_CHAINS): a dApp may list only these, since a
   * chain no process signs for would leave the dApp's paymaster URL for it answering "chain not served".
   */
  readonly servedChainIds: readonly number[];
}

/** A dApp as its owner sees it, API key included. */
export interface OwnedDapp extends DappRecord {
  readonly apiKey: string;
}

/** Who an auth token speaks for: the account, the member who created it (their role, read now) and the token. */
export interface TokenCaller {
  readonly account: Account;
  readonly member: MemberRecord;
  readonly tokenId: string;
}

/** How often at most one process records a token's `last_used_at`: one write per token per minute. */
const TOUCH_INTERVAL_MS = 60_000;

export function createAccountService(deps: AccountServiceDeps) {
  const { store, secretBox, now } = deps;
  // Found credentials only: an unknown one (null) is not kept. Its key is the caller's choice, so negative entries
  // would let anyone fill the cache with made-up keys and push the real ones out (each then a query again); a
  // lookup of an unknown key is one indexed query, and on the paymaster URL it was counted per IP first.
  const knownOnly = { ...deps.cache, ttlOf: (v: unknown) => (v === null ? 0 : deps.cache.ttlMs) };
  const tokenCache = createTtlCache<{ token: AuthTokenRecord; account: Account } | null>(knownOnly);
  const apiKeyCache = createTtlCache<DappRecord | null>(knownOnly);
  const lastTouched = new Map<string, number>();
  const served = new Set(deps.servedChainIds);

  const withApiKey = (d: DappRecord): OwnedDapp => ({ ...d, apiKey: secretBox.open(d.apiKeyCiphertext) });
  /** A settings write's answer: the dApp, or 404 for a missing one (another account's too); the key cache cleared. */
  const changed = (updated: DappRecord | undefined): DappRecord => {
    if (updated === undefined) throw new NotFoundError('dApp not found');
    apiKeyCache.clear();
    return updated;
  };

  const touch = (token: AuthTokenRecord) => {
    const t = now();
    const last = Math.max(token.lastUsedAt ?? 0, lastTouched.get(token.id) ?? 0);
    if (t - last < TOUCH_INTERVAL_MS) return;
    lastTouched.set(token.id, t);
    if (lastTouched.size > 10_000) lastTouched.clear();
    store.accounts.touchToken({ tokenId: token.id, now: t }).catch((err: unknown) => {
      deps.logger.warn({ err, tokenId: token.id }, 'could not record auth token use');
    });
  };

  return {
    async createAccount(input: { email: unknown }): Promise<Account> {
      const email = parseInput(emailSchema, input.email);
      const created = await store.accounts.create({ id: randomUUID(), email, createdAt: now() });
      if (created === undefined) throw new ConflictError(`An account with email ${email} already exists`);
      return created;
    },

    /** Finds an account by id or email. */
    async findAccount(ref: string): Promise<Account | undefined> {
      if (ref.includes('@')) return store.accounts.findByEmail(ref.trim().toLowerCase());
      return isRecordId(ref) ? store.accounts.findById(ref) : undefined;
    },

    /** A member of any team, by their sign-in email. */
    findMember: (email: string): Promise<MemberRecord | undefined> =>
      store.members.findByEmail(email.trim().toLowerCase()),

    listAccounts: () => store.accounts.list(),
    countAccounts: () => store.accounts.count(),

    /**
     * A token of `memberId`, acting with that member's role; without one (the operator's CLI, the demo), of the
     * account's longest-standing owner.
     */
    async createToken(input: {
      accountId: string;
      memberId?: string;
      name?: unknown;
    }): Promise<{ token: AuthTokenRecord; secret: string }> {
      const name = input.name === undefined ? 'default' : parseInput(tokenNameSchema, input.name);
      const memberId = input.memberId ?? (await store.members.findOwner(input.accountId))?.id;
      if (memberId === undefined) throw new NotFoundError('The account has no owner to create the token for');
      const g = generateAuthToken();
      const token: AuthTokenRecord = {
        id: randomUUID(),
        accountId: input.accountId,
        memberId,
        prefix: g.displayPrefix,
        name,
        createdAt: now(),
        lastUsedAt: null,
        revokedAt: null,
      };
      await store.accounts.insertToken({ ...token, tokenHash: g.hash });
      return { token, secret: g.secret };
    },

    /** The account's tokens; one member's only, when given. */
    listTokens: (accountId: string, memberId?: string) => store.accounts.listTokens(accountId, memberId),

    /** Revokes a token of the account (of that member only, when `memberId` is given). */
    async revokeToken(input: { accountId: string; memberId?: string; tokenId: string }): Promise<void> {
      const ok = isRecordId(input.tokenId) && (await store.accounts.revokeToken({ ...input, now: now() }));
      if (!ok) throw new NotFoundError('Auth token not found');
      // Token cache keys are hashes we cannot derive from an id; revocations are rare, so drop them all.
      tokenCache.clear();
    },

    /**
     * Who an auth token speaks for, or undefined for an unknown or revoked token, or one whose member was removed.
     * The member is read on every call, not cached: a changed role or a removal applies at once, in every process.
     */
    async authenticateToken(secret: string): Promise<TokenCaller | undefined> {
      if (!looksLikeAuthToken(secret)) return undefined;
      const hash = hashSecret(secret);
      const hit = await tokenCache.get(hash, async () => {
        const token = await store.accounts.findTokenByHash(hash);
        if (token === undefined || token.revokedAt !== null) return null;
        const account = await store.accounts.findById(token.accountId);
        return account === undefined ? null : { token, account };
      });
      if (hit === null || hit.token.memberId === null) return undefined;
      const member = await store.members.findById(hit.token.memberId);
      if (member === undefined || member.accountId !== hit.account.id) return undefined;
      touch(hit.token);
      return { account: hit.account, member, tokenId: hit.token.id };
    },

    /**
     * The dApp an API key belongs to, or undefined. On every sponsorship request, so the in-process cache is
     * keyed by the key itself: a hit costs no hashing. (The database holds only the hash; an API key travels
     * in every paymaster URL, and dApps ship it in their front ends, so it is not kept from this process.)
     */
    async resolveApiKey(apiKey: string): Promise<DappRecord | undefined> {
      if (!looksLikeApiKey(apiKey)) return undefined;
      const dapp = await apiKeyCache.get(
        apiKey,
        async () => (await store.dapps.findByApiKeyHash(hashSecret(apiKey))) ?? null,
      );
      return dapp ?? undefined;
    },

    async createDapp(input: { accountId: string; name: unknown; chainIds: unknown }): Promise<OwnedDapp> {
      const name = parseInput(dappNameSchema, input.name);
      const chainIds = parseInput(chainIdsSchema, input.chainIds);
      refuseUnserved({ chainIds, served, kept: [] });
      const key = generateApiKey();
      const t = now();
      const dapp: DappRecord = {
        id: randomUUID(),
        accountId: input.accountId,
        name,
        chainIds,
        apiKeyPrefix: key.displayPrefix,
        apiKeyCiphertext: secretBox.seal(key.secret),
        limits: NO_DAPP_LIMITS,
        restrictions: NO_CALLER_RESTRICTIONS,
        createdAt: t,
        updatedAt: t,
      };
      await store.dapps.insert({ ...dapp, apiKeyHash: key.hash });
      return { ...dapp, apiKey: key.secret };
    },

    async listDapps(accountId: string): Promise<OwnedDapp[]> {
      return (await store.dapps.listByAccount(accountId)).map(withApiKey);
    },

    async getDapp(input: { accountId: string; dappId: string }): Promise<OwnedDapp> {
      const dapp = isRecordId(input.dappId) ? await store.dapps.findById(input.dappId) : undefined;
      // Another account's dApp is reported exactly like a missing one.
      if (dapp === undefined || dapp.accountId !== input.accountId) throw new NotFoundError('dApp not found');
      return withApiKey(dapp);
    },

    async updateDapp(input: {
      accountId: string;
      dappId: string;
      name?: unknown;
      chainIds?: unknown;
    }): Promise<OwnedDapp> {
      const name = input.name === undefined ? undefined : parseInput(dappNameSchema, input.name);
      const chainIds = input.chainIds === undefined ? undefined : parseInput(chainIdsSchema, input.chainIds);
      if (name === undefined && chainIds === undefined) throw new ValidationError('give name or chainIds to change');
      if (!isRecordId(input.dappId)) throw new NotFoundError('dApp not found');
      if (chainIds?.some((id) => !served.has(id))) {
        // A chain the dApp already lists may stay after the deployment stops serving it (the dashboard shows it as
        // "not served"), so removing another chain or renaming is never blocked; adding one is refused.
        const current = await store.dapps.findById(input.dappId);
        if (current === undefined || current.accountId !== input.accountId) throw new NotFoundError('dApp not found');
        refuseUnserved({ chainIds, served, kept: current.chainIds });
      }
      const updated = await store.dapps.update({
        accountId: input.accountId,
        dappId: input.dappId,
        ...(name === undefined ? {} : { name }),
        ...(chainIds === undefined ? {} : { chainIds }),
        now: now(),
      });
      if (updated === undefined) throw new NotFoundError('dApp not found');
      apiKeyCache.clear();
      return withApiKey(updated);
    },

    /**
     * The operator's limits of a dApp (CLI only: an operator action, not an account's). `limits` is the whole
     * document (docs/guides/signing-bounds.md, "Signing bounds"); it replaces the stored one. Takes effect here at once and in other
     * processes within the cache TTL.
     */
    async setDappLimits(input: { dappId: string; limits: unknown }): Promise<DappRecord> {
      const parsed = parseDappLimits(input.limits);
      if ('problem' in parsed) throw new ValidationError(parsed.problem);
      const { limits } = parsed;
      return changed(
        isRecordId(input.dappId)
          ? await store.dapps.setLimits({ dappId: input.dappId, limits, now: now() })
          : undefined,
      );
    },

    /**
     * Replaces who may call a dApp's paymaster URL (docs/guides/security-keys.md): the owner's whole document, so
     * `{}` lifts every restriction. Takes effect here at once and in other processes within the cache TTL.
     */
    async setDappRestrictions(input: {
      accountId: string;
      dappId: string;
      restrictions: unknown;
    }): Promise<CallerRestrictionsDoc> {
      const restrictions = parseInput(callerRestrictionsSchema, input.restrictions);
      const updated = isRecordId(input.dappId)
        ? await store.dapps.setRestrictions({ ...input, restrictions, now: now() })
        : undefined;
      return changed(updated).restrictions.doc;
    },

    /**
     * Replaces a dApp's sponsorship-token settings (docs/guides/sponsorship-tokens.md): the owner's whole document,
     * so `{}` turns tokens off. A pasted PEM that is no public key of its algorithm is refused here. Takes effect
     * here at once and in other processes within the cache TTL.
     */
    async setDappSponsorshipTokens(input: {
      accountId: string;
      dappId: string;
      settings: unknown;
    }): Promise<DappTokenSettings> {
      const settings = parseInput(dappTokenSettingsSchema, input.settings);
      const problems = await pemProblems(settings);
      if (problems.length > 0) throw new ValidationError(problems.join('; '));
      const updated = isRecordId(input.dappId)
        ? await store.dapps.setSponsorshipTokens({ ...input, settings, now: now() })
        : undefined;
      return changed(updated).sponsorshipTokens ?? { required: false, keys: [] };
    },

    /**
     * Replaces a dApp's token guarantees (dappSettings/tokenGuarantees.ts, docs/guides/token-mode.md): the whole document,
     * so `{"enabled":false}` turns them off; enabling needs a cap. `accountId` undefined: any account's dApp (the
     * operator's CLI). Takes effect here at once and in other processes within the cache TTL.
     */
    async setDappTokenGuarantees(input: {
      accountId: string | undefined;
      dappId: string;
      guarantees: unknown;
    }): Promise<TokenGuarantees> {
      const guarantees = parseInput(tokenGuaranteesSchema, input.guarantees);
      const updated = isRecordId(input.dappId)
        ? await store.dapps.setTokenGuarantees({ ...input, guarantees, now: now() })
        : undefined;
      return changed(updated).tokenGuarantees ?? NO_TOKEN_GUARANTEES;
    },

    /** Any account's dApp by id (operator commands). */
    findDappById: async (dappId: string): Promise<DappRecord | undefined> =>
      isRecordId(dappId) ? store.dapps.findById(dappId) : undefined,

    /** Replaces the dApp's API key; the old key stops working at once here and within the cache TTL elsewhere. */
    async rotateApiKey(input: { accountId: string; dappId: string }): Promise<OwnedDapp> {
      if (!isRecordId(input.dappId)) throw new NotFoundError('dApp not found');
      const key = generateApiKey();
      const updated = await store.dapps.replaceApiKey({
        ...input,
        apiKeyHash: key.hash,
        apiKeyPrefix: key.displayPrefix,
        apiKeyCiphertext: secretBox.seal(key.secret),
        now: now(),
      });
      if (updated === undefined) throw new NotFoundError('dApp not found');
      apiKeyCache.clear();
      return { ...updated, apiKey: key.secret };
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
