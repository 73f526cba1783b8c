import { randomUUID } from 'node:crypto';
import { getAddress, isAddress } from 'viem';
import { z } from 'zod';
import type { CachePolicy } from '../cache/cachePolicy.js';
import { createTtlCache } from '../cache/ttlCache.js';
import type { GuaranteeCapSetting } from '../dappSettings/tokenGuarantees.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors/PatronError.js';
import { isRecordId } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { PolicyRecord } from '../store/tenants/policyRepository.js';
import { capWindow } from './capWindows.js';
import { type GuaranteeCapUsage, guaranteeCapUsage } from './guaranteeCap.js';
import type { PolicySet } from './policyGate.js';
import { capLedgerKey } from './policyRules.js';
import { type Policy, policyRulesSchema } from './policySchema.js';
import { MAX_USER_ID_LENGTH, userScopeKey } from './userScopeKey.js';

/**
 * A dApp's sponsorship policies: validated writes, and the hot path's read of the dApp's policies (cached like
 * the webhooks: this process's writes clear the entry at once, another process's are seen per cachePolicy.ts).
 * Rules are stored in the owner's own wire form (amounts as decimal strings) and parsed on read, so what the API
 * returns is what was sent, and a policy that no longer parses (a schema tightened later) fails closed.
 */
export const POLICY_NOT_FOUND = 'Policy not found';

export const policyNameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters')
  .refine((n) => ![...n].some((ch) => (ch.codePointAt(0) ?? 0) < 0x20 || ch === '\u007f'), {
    message: 'must not contain control characters',
  });

/** A policy as the admin API and the CLI show it. */
export interface PolicyView {
  readonly id: string;
  readonly dappId: string;
  readonly name: string;
  readonly active: boolean;
  /** The rules as the owner sent them. */
  readonly rules: unknown;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** One cap's current window, for the admin API: what is used (settled) and reserved (signed, not settled). */
export interface CapUsage {
  readonly scope: 'dapp' | 'sender' | 'user';
  readonly unit: 'wei' | 'usd' | 'ops';
  readonly resets: string;
  readonly limit: string;
  readonly used: string;
  readonly reserved: string;
  readonly windowStart: number;
  /** Unix ms; absent for a cap that never resets. */
  readonly windowEnd?: number;
}

export interface PolicyServiceDeps {
  readonly store: Store;
  readonly cache: CachePolicy;
  readonly now: () => number;
}

/**
 * Every sponsored request checks each policy that applies; a bound keeps that work and the admin lists small. The
 * service's own (the server's and the CLI's alike).
 */
export const MAX_POLICIES_PER_DAPP = 20;

function parseRules(rules: unknown): Policy['rules'] {
  const parsed = policyRulesSchema.safeParse(rules);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue === undefined ? '' : issue.path.join('.');
    throw new ValidationError(`Invalid rules${path === '' ? '' : `.${path}`}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

const view = (r: PolicyRecord): PolicyView => ({
  id: r.id,
  dappId: r.dappId,
  name: r.name,
  active: r.active,
  rules: r.rules,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export function createPolicyService(deps: PolicyServiceDeps) {
  const { store, now } = deps;
  const cache = createTtlCache<PolicySet>(deps.cache);

  const find = async (dappId: string, policyId: string): Promise<PolicyRecord> => {
    const r = isRecordId(policyId) ? await store.policies.findInDapp({ dappId, policyId }) : undefined;
    if (r === undefined) throw new NotFoundError(POLICY_NOT_FOUND);
    return r;
  };

  const nameTaken = (name: string) => new ConflictError(`A policy named "${name}" already exists for this dApp`);

  return {
    async create(input: { dappId: string; name: string; active?: boolean; rules: unknown }): Promise<PolicyView> {
      parseRules(input.rules);
      const existing = await store.policies.listByDapp(input.dappId);
      if (existing.length >= MAX_POLICIES_PER_DAPP) {
        throw new ConflictError(`Policy limit reached: a dApp can have at most ${MAX_POLICIES_PER_DAPP} policies`);
      }
      const t = now();
      const record: PolicyRecord = {
        id: randomUUID(),
        dappId: input.dappId,
        name: input.name,
        active: input.active ?? true,
        rules: input.rules,
        createdAt: t,
        updatedAt: t,
      };
      if ((await store.policies.insert(record)) === 'name-taken') throw nameTaken(input.name);
      cache.delete(input.dappId);
      return view(record);
    },

    async list(dappId: string): Promise<PolicyView[]> {
      return (await store.policies.listByDapp(dappId)).map(view);
    },

    async get(input: { dappId: string; policyId: string }): Promise<PolicyView> {
      return view(await find(input.dappId, input.policyId));
    },

    async update(input: {
      dappId: string;
      policyId: string;
      name?: string | undefined;
      active?: boolean | undefined;
      rules?: unknown;
    }): Promise<PolicyView> {
      if (input.rules !== undefined) parseRules(input.rules);
      if (!isRecordId(input.policyId)) throw new NotFoundError(POLICY_NOT_FOUND);
      const updated = await store.policies.update({
        dappId: input.dappId,
        policyId: input.policyId,
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.active === undefined ? {} : { active: input.active }),
        ...(input.rules === undefined ? {} : { rules: input.rules }),
        now: now(),
      });
      if (updated === 'name-taken') throw nameTaken(input.name ?? '');
      if (updated === undefined) throw new NotFoundError(POLICY_NOT_FOUND);
      cache.delete(input.dappId);
      return view(updated);
    },

    async delete(input: { dappId: string; policyId: string }): Promise<void> {
      const ok = isRecordId(input.policyId) && (await store.policies.delete(input));
      if (!ok) throw new NotFoundError(POLICY_NOT_FOUND);
      cache.delete(input.dappId);
    },

    /**
     * The dApp's policies, parsed, with their version, for the sponsorship path. A stored policy that no longer
     * parses makes the whole read fail (the request is refused, never served without that policy's rules). The
     * version is read before the policies: a write between the two makes the pair look stale (the reservation
     * then reads again), never current with older rules. `fresh`: from the database (a reservation found the
     * version moved).
     */
    policiesOf(dappId: string, options: { readonly fresh?: boolean } = {}): Promise<PolicySet> {
      if (options.fresh === true) cache.delete(dappId);
      return cache.get(dappId, async () => {
        const version = await store.policies.version(dappId);
        const policies: Policy[] = (await store.policies.listByDapp(dappId)).map((r) => ({
          id: r.id,
          name: r.name,
          active: r.active,
          rules: parseRules(r.rules),
        }));
        return { policies, version };
      });
    },

    /**
     * The policy's dApp-wide caps in their current window, per-sender caps for `sender` and per-user caps for `user`
     * (the sponsorship token's `sub`) when given.
     */
    async usage(input: {
      dappId: string;
      policyId: string;
      sender?: string | undefined;
      user?: string | undefined;
    }): Promise<CapUsage[]> {
      if (input.sender !== undefined && !isAddress(input.sender, { strict: false })) {
        throw new ValidationError('Invalid sender: expected a 20-byte 0x address');
      }
      const { user } = input;
      if (user !== undefined && (user.length === 0 || user.length > MAX_USER_ID_LENGTH)) {
        throw new ValidationError(`Invalid user: expected 1 to ${MAX_USER_ID_LENGTH} characters (the token's sub)`);
      }
      const record = await find(input.dappId, input.policyId);
      const rules = parseRules(record.rules);
      const t = now();
      const rows: (Omit<CapUsage, 'used' | 'reserved'> & { key: string })[] = [];
      for (const cap of rules.caps ?? []) {
        let scopeKey: string;
        if (cap.scope === 'op') continue;
        if (cap.scope === 'sender') {
          if (input.sender === undefined) continue;
          scopeKey = getAddress(input.sender);
        } else if (cap.scope === 'user') {
          if (user === undefined) continue;
          scopeKey = userScopeKey(user);
        } else scopeKey = 'dapp';
        const w = capWindow(cap.resets, t);
        rows.push({
          key: capLedgerKey({ policyId: record.id, cap, scopeKey, windowStart: w.start }),
          scope: cap.scope,
          unit: cap.unit,
          resets: cap.resets,
          limit: cap.limit.toString(),
          windowStart: w.start,
          ...(w.end === undefined ? {} : { windowEnd: w.end }),
        });
      }
      const counters = await store.spendLedger.counters(rows.map((r) => r.key));
      return rows.map(({ key, ...r }) => {
        const c = counters.get(key);
        return { ...r, used: (c?.used ?? 0n).toString(), reserved: (c?.reserved ?? 0n).toString() };
      });
    },

    /** A dApp's token-guarantee cap in its current window (guaranteeCap.ts): what it used and holds reserved. */
    guaranteeUsage: (dappId: string, cap: GuaranteeCapSetting): Promise<GuaranteeCapUsage> =>
      guaranteeCapUsage({ dappId, cap, nowMs: now(), counters: (keys) => store.spendLedger.counters(keys) }),
  };
}

export type PolicyService = ReturnType<typeof createPolicyService>;
