import type { Address, Hex } from 'viem';
import { PolicyDeniedError } from '../errors/PatronError.js';
import { type AccountCallsDecoding, decodeAccountCalls } from './accountCalls.js';
import type { SenderAccount } from './knownAccounts.js';
import {
  type CapCharge,
  capCharges,
  checkPolicyRules,
  formatAmount,
  type PolicyDenial,
  type SponsorshipFacts,
  selectPolicies,
} from './policyRules.js';
import { type CapUnit, microsToUsd, type Policy } from './policySchema.js';

/**
 * Where the policy engine meets a request: the rules first (before the webhook and any simulation: a denied op
 * costs Patron nothing else), then, once the op's gas is final, the caps: reserved in the ledger in one atomic
 * step at signing, or checked against the counters by a dry run. The pure decisions are policyRules.ts; the
 * ledger is the caller's, behind `PolicyLedger`.
 */
export interface PolicyLedger {
  /** All or none: every charge fits (used + reserved + amount ≤ limit) and is reserved, or nothing is. */
  reserve(args: {
    readonly id: string;
    readonly dappId: string;
    readonly chainId: number;
    readonly userOpHash: string;
    readonly charges: readonly LedgerCharge[];
    readonly expiresAt: number;
    readonly now: number;
  }): Promise<
    | { readonly ok: true }
    | { readonly ok: false; readonly charge: LedgerCharge; readonly used: bigint; readonly reserved: bigint }
  >;
  counters(keys: readonly string[]): Promise<Map<string, { readonly used: bigint; readonly reserved: bigint }>>;
}

export interface LedgerCharge {
  readonly key: string;
  readonly unit: CapUnit;
  readonly amount: bigint;
  readonly limit: bigint;
  readonly windowEnd: number | undefined;
}

export interface PolicyGateDeps {
  readonly policiesOf: (dappId: string) => Promise<readonly Policy[]>;
  readonly ledger: PolicyLedger;
  /** The native coin's price in micro-USD on a chain, fresh (the token catalog's rule), or undefined. */
  readonly nativeUsdMicros: (chainId: number) => bigint | undefined;
  readonly now: () => number;
}

/** The request's facts the rules read, known before gas is final. */
export interface PolicyRequest {
  readonly dappId: string;
  readonly chainId: number;
  readonly sender: Address;
  readonly initCode: Hex;
  readonly callData: Hex;
  readonly maxFeePerGas: bigint;
  /** `sponsorshipPolicyId` from the request, when it names one. */
  readonly requestedPolicyId: string | undefined;
  /**
   * What kind of account the sender is (a chain read, cached): asked only when a contract allowlist applies.
   * Absent: the sender counts as unknown, and an allowlist refuses it.
   */
  readonly senderAccount?: (() => Promise<SenderAccount>) | undefined;
}

/** The rules passed; what is left to do once the worst case is known. */
export interface PolicyPass {
  readonly request: PolicyRequest;
  readonly policies: readonly Policy[];
}

/** What the request log and the answer learn of the decision. */
export interface PolicyDecision {
  /** The policies that applied (empty: the dApp has none). */
  readonly policyIds: readonly string[];
  /** The reservation's id, when caps applied; settled from the chain by (chain, userOpHash). */
  readonly reservationId?: string;
  readonly charges: readonly { readonly key: string; readonly unit: CapUnit; readonly amount: string }[];
}

/** Amounts in `data` are in the cap's unit as strings: wei and op counts as integers, USD as a decimal. */
const AMOUNT_FIELDS = ['value', 'limit', 'used', 'reserved'] as const;

function deny(d: PolicyDenial): never {
  const { message, ...data } = d;
  const shown: Record<string, unknown> = { ...data };
  if (d.unit === 'usd') {
    for (const f of AMOUNT_FIELDS) {
      const v = d[f];
      if (v !== undefined) shown[f] = microsToUsd(BigInt(v));
    }
  }
  throw new PolicyDeniedError(message, { ...shown, rule: d.rule });
}

/** The denial of a cap whose window has no room left for this op, with its counters. */
function capDenial(c: CapCharge, used: bigint, reserved: bigint): PolicyDenial {
  const left = c.limit - used - reserved;
  return {
    policyId: c.policyId,
    policyName: c.policyName,
    rule: 'cap',
    scope: c.scope,
    unit: c.unit,
    value: c.amount.toString(),
    limit: c.limit.toString(),
    used: used.toString(),
    reserved: reserved.toString(),
    ...(c.window.end === undefined ? {} : { resetsAt: Math.floor(c.window.end / 1000) }),
    message:
      `policy ${c.policyName}'s ${c.scope === 'dapp' ? 'dApp-wide' : 'per-sender'} cap of ${formatAmount(c.limit, c.unit)}` +
      `${c.window.end === undefined ? '' : ` (until ${new Date(c.window.end).toISOString()})`} has ` +
      `${formatAmount(left < 0n ? 0n : left, c.unit)} left and this op needs ${formatAmount(c.amount, c.unit)}`,
  };
}

export function createPolicyGate(deps: PolicyGateDeps) {
  const facts = (req: PolicyRequest, worstCaseWei: bigint, account?: SenderAccount): SponsorshipFacts => {
    const micro = deps.nativeUsdMicros(req.chainId);
    let decoded: AccountCallsDecoding | undefined;
    return {
      ...(account === undefined ? {} : { account }),
      // Decoded at most once per request, with the sender's kind, and only when a contract allowlist asks.
      ...(account?.known === true
        ? {
            calls: () => {
              decoded ??= decodeAccountCalls(req.callData, account.kind);
              return decoded;
            },
          }
        : {}),
      chainId: req.chainId,
      sender: req.sender,
      deploysAccount: req.initCode.length > 2,
      callData: req.callData,
      maxFeePerGas: req.maxFeePerGas,
      worstCaseWei,
      nowMs: deps.now(),
      nativeUsd: micro === undefined ? undefined : { microUsd: micro, ageMs: 0 },
    };
  };

  /**
   * Every charge of every applying policy, or the first denial (a per-op cap, a price missing). Charges on one
   * ledger row (a policy stored before duplicate caps were refused) count once, under the tighter limit.
   */
  const chargesOf = (pass: PolicyPass, worstCaseWei: bigint): CapCharge[] => {
    const f = facts(pass.request, worstCaseWei);
    const byKey = new Map<string, CapCharge>();
    for (const policy of pass.policies) {
      // The catalog already withholds a stale price, so any price it gives is fresh enough.
      const r = capCharges({ policy, facts: f, maxPriceAgeMs: Number.POSITIVE_INFINITY });
      if ('denial' in r) deny(r.denial);
      for (const c of r.charges) {
        const seen = byKey.get(c.key);
        if (seen === undefined || c.limit < seen.limit) byKey.set(c.key, c);
      }
    }
    return [...byKey.values()];
  };

  const toLedger = (c: CapCharge): LedgerCharge => ({
    key: c.key,
    unit: c.unit,
    amount: c.amount,
    limit: c.limit,
    windowEnd: c.window.end,
  });

  return {
    /** The rules other than caps; throws PolicyDeniedError. Cheap: the policies are cached, nothing is written. */
    async check(request: PolicyRequest): Promise<PolicyPass> {
      const all = await deps.policiesOf(request.dappId);
      if (all.length === 0 && request.requestedPolicyId === undefined) return { request, policies: [] };
      const selected = selectPolicies({
        policies: all,
        facts: facts(request, 0n),
        requestedId: request.requestedPolicyId,
      });
      if ('denial' in selected) deny(selected.denial);
      // The chain is read for the sender only when a contract allowlist needs to know what it will run.
      const needsAccount = selected.policies.some((p) => p.rules.contracts !== undefined);
      const account = needsAccount ? await request.senderAccount?.() : undefined;
      const f = facts(request, 0n, account);
      for (const policy of selected.policies) {
        const denial = checkPolicyRules(policy, f);
        if (denial !== undefined) deny(denial);
      }
      return { request, policies: selected.policies };
    },

    /**
     * Reserves the op's worst case against every cap that applies, keyed by its userOpHash (one reservation per
     * op and chain: the same op signed twice is reserved once); throws PolicyDeniedError when a cap has no room.
     */
    async reserve(args: {
      readonly pass: PolicyPass;
      readonly worstCaseWei: bigint;
      readonly userOpHash: () => Hex;
      /** Unix seconds: the signature's validUntil; the reservation is released if the op is not in by then. */
      readonly validUntil: number;
    }): Promise<PolicyDecision> {
      const { pass } = args;
      const policyIds = pass.policies.map((p) => p.id);
      const charges = chargesOf(pass, args.worstCaseWei);
      if (charges.length === 0) return { policyIds, charges: [] };
      const hash = args.userOpHash().toLowerCase();
      const id = `${pass.request.chainId}:${hash}`;
      const result = await deps.ledger.reserve({
        id,
        dappId: pass.request.dappId,
        chainId: pass.request.chainId,
        userOpHash: hash,
        charges: charges.map(toLedger),
        expiresAt: args.validUntil * 1000,
        now: deps.now(),
      });
      if (!result.ok) {
        const c = charges.find((x) => x.key === result.charge.key) ?? charges[0];
        if (c !== undefined) deny(capDenial(c, result.used, result.reserved));
      }
      return {
        policyIds,
        reservationId: id,
        charges: charges.map((c) => ({ key: c.key, unit: c.unit, amount: c.amount.toString() })),
      };
    },

    /** The dry run's cap check: would every charge fit now? Reads the counters, reserves nothing. */
    async fits(args: { readonly pass: PolicyPass; readonly worstCaseWei: bigint }): Promise<void> {
      const charges = chargesOf(args.pass, args.worstCaseWei);
      if (charges.length === 0) return;
      const counters = await deps.ledger.counters(charges.map((c) => c.key));
      const pending = new Map<string, bigint>();
      for (const c of charges) {
        const state = counters.get(c.key) ?? { used: 0n, reserved: 0n };
        const before = pending.get(c.key) ?? 0n;
        if (state.used + state.reserved + before + c.amount > c.limit) {
          deny(capDenial(c, state.used, state.reserved + before));
        }
        pending.set(c.key, before + c.amount);
      }
    },
  };
}

export type PolicyGate = ReturnType<typeof createPolicyGate>;
