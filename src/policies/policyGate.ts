import type { Address, Hex } from 'viem';
import { PolicyDeniedError, ValidationError } from '../errors/PatronError.js';
import type {
  ChainWindow,
  CounterState,
  LedgerCharge,
  ReservationKind,
  ReserveArgs,
  ReserveResult,
  TokenUse,
} from '../store/ledger/ledgerTypes.js';
import { reservationId } from '../store/ledger/reservationMerge.js';
import { type AccountCallsDecoding, decodeAccountCalls } from './accountCalls.js';
import { type CapThresholdCrossing, crossedThresholds } from './capThresholds.js';
import { checkGatingRules, type GatingReader, hasGatingRules } from './gatingRules.js';
import { type HoldCharge, type HoldShares, holdCharges } from './holdCharges.js';
import type { SenderAccount } from './knownAccounts.js';
import type { PolicyDenial } from './policyDenial.js';
import {
  type CapCharge,
  capCharges,
  checkPolicyRules,
  formatAmount,
  type SponsorshipFacts,
  selectPolicies,
} from './policyRules.js';
import { type CapUnit, microsToUsd, type Policy } from './policySchema.js';

/**
 * Where the policy engine meets a request: the rules first (before the webhook and any simulation: a denied op
 * costs Patron nothing else), then, once the op's gas is final, the caps: reserved in the ledger in one atomic
 * step at signing, or checked against the counters by a dry run. The pure decisions are policyRules.ts; the
 * ledger is the caller's, behind `PolicyLedger`, whose values are the spend ledger's own (store/ledger/ledgerTypes.ts).
 */
export interface PolicyLedger {
  /**
   * All or none: every charge fits (used + reserved + amount ≤ limit) and is reserved, or nothing is; and only
   * while the dApp's policy version is still `policyVersion` (else `{ok: false, policyVersion}`, nothing done).
   * The same id again holds the larger worst case and the later window (src/store/ledger/reservationMerge.ts).
   */
  reserve(args: ReserveArgs): Promise<ReserveResult>;
  counters(keys: readonly string[]): Promise<Map<string, CounterState>>;
}

/** A sponsorship token's jti to spend with the reservation (store/ledger/ledgerTypes.ts, TokenUse). */
export type PolicyTokenUse = TokenUse;

/**
 * The request's sponsorship token as the reservation spends it (sponsorshipTokens/sponsorshipGrant.ts makes it): its jti,
 * and the error a replay is refused with.
 */
export interface ReservedToken {
  use(): PolicyTokenUse;
  replayed(): Error;
}

export type { ChainWindow, LedgerCharge, ReservationKind };

/**
 * A charge a caller adds to a reservation beside the policies' caps, reserved in the same atomic step (the token
 * guarantees' cap, policies/guaranteeCap.ts); `refused` is the error its refusal throws, given the counters found.
 */
export interface ExtraCharge extends LedgerCharge {
  refused(counters: { readonly used: bigint; readonly reserved: bigint }): Error;
}

/** What a signature's reservation is asked with (PolicyGate's reserve and recordPrefunded). */
export interface ReserveRequest {
  readonly worstCaseWei: bigint;
  /** The signature being reserved (paymaster/requestFacts.ts IssuedSignature is one). */
  readonly signed: SignedOp;
  /** Unix seconds by which the window has surely closed (the request log's and the dashboard's expiry). */
  readonly validUntil: number;
  /** The signed window in the chain's terms: the ledger releases the reservation once the chain is past it. */
  readonly window: ChainWindow;
  /** The paymaster that signed (the settlement follower of its deployment settles and releases it). */
  readonly paymaster: Address;
  /**
   * 'guarantee': a token-mode op the dApp guarantees (mode 2), whose charge can fail after execution
   * (src/settlement/README.md); 'token': one the user prefunds (recordPrefunded); default 'sponsored'.
   */
  readonly kind?: ReservationKind | undefined;
  /** The request's sponsorship token: spent with the reservation, refused (its `replayed()`) if spent already. */
  readonly grant?: ReservedToken | undefined;
  /** Charges besides the policies' caps, all or none with them (ExtraCharge). */
  readonly extraCharges?: readonly ExtraCharge[] | undefined;
}

/** The signature a reservation is made for: its op key (the reservation's key), userOpHash and fingerprint. */
export interface SignedOp {
  userOpHash(): Hex;
  opKey(): Hex;
  readonly signature: string;
}

/** A dApp's policies as read at one policy version. */
export interface PolicySet {
  readonly policies: readonly Policy[];
  readonly version: number;
}

/** Times a request re-reads the policies when they changed under it before it gives up (policyChanged). */
const MAX_POLICY_RECHECKS = 5;

export interface PolicyGateDeps {
  /** The dApp's policies and their version; `fresh`: read from the database, not a cache. */
  readonly policiesOf: (dappId: string, options?: { readonly fresh?: boolean }) => Promise<PolicySet>;
  readonly ledger: PolicyLedger;
  /** The native coin's price in micro-USD on a chain, fresh (the token catalog's rule), or undefined. */
  readonly nativeUsdMicros: (chainId: number) => bigint | undefined;
  readonly now: () => number;
  /**
   * Told of every cap threshold (80 %, 100 %) a reservation crossed (policies/capThresholds.ts), after it
   * committed; absent: the ledger is not asked for usage at all. Must not throw or wait (it is on the request path).
   */
  readonly onThreshold?:
    | ((args: { readonly request: PolicyRequest; readonly crossing: CapThresholdCrossing }) => void)
    | undefined;
}

/** The request's facts the rules read, known before gas is final. */
export interface PolicyRequest {
  readonly dappId: string;
  readonly chainId: number;
  readonly sender: Address;
  /** The end user's id from the dApp's verified sponsorship token (`sub`), when the request carried one. */
  readonly user?: string | undefined;
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
  /** The token's `addr` claim, when present: the holder a gating rule with `subject: 'user'` reads. */
  readonly userAddress?: Address | undefined;
  /** The EAS attestation uid the request names (paymaster context `attestationUid`), for an attestation rule. */
  readonly attestationUid?: Hex | undefined;
  /**
   * The gating rules' chain reads on the request's chain (chain/gatingReads.ts, cached): asked only when an applying
   * policy has a gating rule, after every cheap rule passed. Absent: such a rule denies (`readFailed`).
   */
  readonly gating?: GatingReader | undefined;
  /**
   * How much of each cap the request's holder and its sender may hold in signatures the chain has not included
   * (holdCharges.ts). Absent: no share applies (a dry run, a test).
   */
  readonly holds?: HoldShares | undefined;
}

/** The rules passed; what is left to do once the worst case is known. */
export interface PolicyPass {
  readonly request: PolicyRequest;
  readonly policies: readonly Policy[];
  /** The policy version the rules were checked at. */
  readonly version: number;
}

/** What the request log and the answer learn of the decision. */
export interface PolicyDecision {
  /** The policies that applied (empty: the dApp has none). */
  readonly policyIds: readonly string[];
  /** The reservation's id, when caps applied; settled from the chain by (chain, userOpHash). */
  readonly reservationId?: string;
  readonly charges: readonly { readonly key: string; readonly unit: CapUnit; readonly amount: string }[];
  /** A token-mode op signed in mode 2: the dApp guarantees its charge (docs/guides/token-mode.md, "Paying gas in ERC-20"). */
  readonly guarantee?: true;
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

const SCOPE_WORDS: Record<CapCharge['scope'], string> = { dapp: 'dApp-wide', sender: 'per-sender', user: 'per-user' };

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
      `policy ${c.policyName}'s ${SCOPE_WORDS[c.scope]} cap of ${formatAmount(c.limit, c.unit)}` +
      `${c.window.end === undefined ? '' : ` (until ${new Date(c.window.end).toISOString()})`} has ` +
      `${formatAmount(left < 0n ? 0n : left, c.unit)} left and this op needs ${formatAmount(c.amount, c.unit)}`,
  };
}

/** A hold's refusal: the caller or sender holds its share of the cap in signatures the chain has not included. */
function holdDenial(h: HoldCharge, held: bigint): PolicyDenial {
  const c = h.cap;
  const who = h.party === 'caller' ? 'this caller (IP, or the person its sponsorship token names)' : `sender`;
  return {
    policyId: c.policyId,
    policyName: c.policyName,
    rule: 'hold',
    scope: h.party,
    unit: c.unit,
    value: h.amount.toString(),
    limit: h.limit.toString(),
    reserved: held.toString(),
    message:
      `policy ${c.policyName}'s ${SCOPE_WORDS[c.scope]} cap of ${formatAmount(c.limit, c.unit)}: ${who} already holds ` +
      `${formatAmount(held, c.unit)} of it in signatures the chain has not included, and may hold ${h.percent} % ` +
      '(at least one op); retry once they are included or their window has passed',
  };
}

const toHold = (h: HoldCharge): LedgerCharge => ({
  key: h.key,
  unit: h.unit,
  amount: h.amount,
  limit: h.limit,
  windowEnd: h.windowEnd,
  bindsWhenBusy: h.bindsWhenBusy,
});

/** An extra charge as the ledger stores it (its `refused` stays here). */
const plainCharge = (x: ExtraCharge): LedgerCharge => ({
  key: x.key,
  unit: x.unit,
  amount: x.amount,
  limit: x.limit,
  windowEnd: x.windowEnd,
});

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
      user: req.user,
      deploysAccount: req.initCode.length > 2,
      callData: req.callData,
      maxFeePerGas: req.maxFeePerGas,
      ...(req.userAddress === undefined ? {} : { userAddress: req.userAddress }),
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

  const checkAt = async (request: PolicyRequest, fresh: boolean): Promise<PolicyPass> => {
    const set = await deps.policiesOf(request.dappId, fresh ? { fresh } : undefined);
    const all = set.policies;
    if (all.length === 0 && request.requestedPolicyId === undefined) {
      return { request, policies: [], version: set.version };
    }
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
    // The chain reads last: a request a cheap rule of any policy denies reads nothing.
    // `some` first: a request without gating rules allocates nothing here.
    if (selected.policies.some((p) => hasGatingRules(p.rules))) {
      const gated = selected.policies.filter((p) => hasGatingRules(p.rules));
      const gatingFacts = {
        sender: request.sender,
        userAddress: request.userAddress,
        attestationUid: request.attestationUid,
        nowMs: f.nowMs,
        reader: request.gating,
      };
      const denials = await Promise.all(gated.map((p) => checkGatingRules(p, gatingFacts)));
      const denial = denials.find((d) => d !== undefined);
      if (denial !== undefined) deny(denial);
    }
    return { request, policies: selected.policies, version: set.version };
  };

  /**
   * One attempt at the op's row: reserved (its decision), or refused by a cap or the token (thrown), or
   * `{policyChanged}` when the dApp's policies changed since `policyVersion` (the caller checks again).
   */
  const place = async (
    args: ReserveRequest,
    at: {
      readonly request: PolicyRequest;
      readonly charges: readonly CapCharge[];
      readonly policyIds: readonly string[];
      readonly policyVersion: number | undefined;
    },
  ): Promise<{ readonly decision: PolicyDecision } | { readonly policyChanged: true }> => {
    const { request, charges } = at;
    const holds = holdCharges({ charges, holds: request.holds, sender: request.sender });
    const opKey = args.signed.opKey();
    const id = reservationId(request.dappId, opKey);
    const result = await deps.ledger.reserve({
      id,
      dappId: request.dappId,
      chainId: request.chainId,
      userOpHash: args.signed.userOpHash(),
      opKey,
      signature: args.signed.signature,
      charges: [...charges.map(toLedger), ...holds.map(toHold), ...(args.extraCharges ?? []).map(plainCharge)],
      expiresAt: args.validUntil * 1000,
      now: deps.now(),
      window: args.window,
      paymaster: args.paymaster.toLowerCase(),
      kind: args.kind ?? 'sponsored',
      ...(at.policyVersion === undefined ? {} : { policyVersion: at.policyVersion }),
      item: {
        sender: request.sender.toLowerCase(),
        user: request.user,
        policyIds: at.policyIds,
        worstCaseWei: args.worstCaseWei,
      },
      ...(deps.onThreshold === undefined ? {} : { reportUsage: true }),
      ...(args.grant === undefined ? {} : { tokenUse: args.grant.use() }),
    });
    if (result.ok) {
      if (result.usage !== undefined && deps.onThreshold !== undefined) {
        for (const crossing of crossedThresholds(charges, result.usage)) deps.onThreshold({ request, crossing });
      }
      return {
        decision: {
          policyIds: at.policyIds,
          reservationId: id,
          // What the request log and the events show as reserved: the caps' and the extra charges (not the holds).
          charges: [...charges, ...(args.extraCharges ?? [])].map((c) => ({
            key: c.key,
            unit: c.unit,
            amount: c.amount.toString(),
          })),
          ...(args.kind === 'guarantee' ? { guarantee: true as const } : {}),
        },
      };
    }
    if ('tokenReplayed' in result) {
      throw args.grant?.replayed() ?? new Error('spend ledger: a token replay answered without a token');
    }
    if ('tooManySignatures' in result) {
      // Not transient (a retry meets the same row): a refusal of the request as made, not a rate limit.
      throw new ValidationError(
        `this dApp signed sender ${request.sender}'s op of this nonce ${result.tooManySignatures} times already; sign the op with a new nonce`,
      );
    }
    if ('charge' in result) {
      const extra = args.extraCharges?.find((x) => x.key === result.charge.key);
      if (extra !== undefined) throw extra.refused({ used: result.used, reserved: result.reserved });
      const hold = holds.find((x) => x.key === result.charge.key);
      if (hold !== undefined) deny(holdDenial(hold, result.reserved));
      const c = charges.find((x) => x.key === result.charge.key) ?? charges[0];
      if (c !== undefined) deny(capDenial(c, result.used, result.reserved));
    }
    return { policyChanged: true };
  };

  return {
    /** The rules other than caps; throws PolicyDeniedError. Cheap: the policies are cached, nothing is written. */
    check: (request: PolicyRequest): Promise<PolicyPass> => checkAt(request, false),

    /**
     * Reserves the op's worst case against every cap that applies, keyed by its userOpHash or op key (the same op
     * signed again holds the larger worst case); throws PolicyDeniedError when a cap has no room. An op no cap
     * applies to gets a row too, with no charges: the itemized ledger lists every signed op. Atomically with the
     * reservation the dApp's policy version must still be the one the rules were checked at: if a policy was written meanwhile, the request reads the policies again and
     * re-runs the rules and the caps against the op as it is (no webhook, no simulation), then tries again. So a
     * signature issued after a policy write was acknowledged obeys it.
     */
    async reserve(args: ReserveRequest & { readonly pass: PolicyPass }): Promise<PolicyDecision> {
      let pass = args.pass;
      for (let attempt = 0; ; attempt++) {
        const charges = chargesOf(pass, args.worstCaseWei);
        // Every signed op gets its ledger row, one with no cap too (its row holds no charges): the itemized ledger
        // lists every sponsorship. The row's INSERT also checks the policy version, in place of a separate read.
        const placed = await place(args, {
          request: pass.request,
          charges,
          policyIds: pass.policies.map((p) => p.id),
          policyVersion: pass.version,
        });
        if ('decision' in placed) return placed.decision;
        if (attempt >= MAX_POLICY_RECHECKS) {
          throw new PolicyDeniedError(
            'the dApp’s sponsorship policies kept changing while this request was checked; try again',
            { rule: 'policyChanged' },
          );
        }
        pass = await checkAt(pass.request, true);
      }
    },

    /**
     * The ledger row of a token-mode op the user prefunds (mode 1, kind 'token'): no policy applies and nothing is
     * reserved against a cap, but the row says which dApp signed the op key (settlement's attribution) and spends the
     * request's sponsorship token in its transaction, as every other signature does.
     */
    recordPrefunded(args: ReserveRequest & { readonly request: PolicyRequest }): Promise<PolicyDecision> {
      return place(
        { ...args, kind: 'token' },
        { request: args.request, charges: [], policyIds: [], policyVersion: undefined },
      ).then((placed) => {
        if ('decision' in placed) return placed.decision;
        throw new Error('spend ledger: a reservation without charges or a policy version was refused');
      });
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
