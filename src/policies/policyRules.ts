import type { Address, Hex } from 'viem';
import { toAddress } from '../crypto/address.js';
import { usdMicrosOfWei } from '../pricing/usdMicrosOfWei.js';
import { type AccountCallsDecoding, decodeAccountCalls } from './accountCalls.js';
import { type CapWindow, capWindow } from './capWindows.js';
import type { SenderAccount } from './knownAccounts.js';
import type { PolicyDenial } from './policyDenial.js';
import { type CapScope, type CapUnit, microsToUsd, type Policy, type PolicyCap } from './policySchema.js';
import { hasUser, userScopeKey } from './userScopeKey.js';

/**
 * The policy engine's pure part: which of a dApp's policies apply to a request, whether the request passes
 * each one's rules, and what it must reserve against each cap. No I/O: the ledger (reserve, settle, release)
 * and the price source are the caller's. Combination: every active policy that applies must pass ("all that
 * apply"), and a dApp with policies of which none applies is denied (fail closed); a dApp without any policy
 * is served as before, within the signing bounds. A request naming a policy is checked against all that apply
 * too (the name must exist and apply): a caller holding the public key must not be able to skip a policy.
 */
export interface SponsorshipFacts {
  readonly chainId: number;
  readonly sender: Address;
  /** The end user's id from the dApp's verified sponsorship token (`sub`), when the request carried one. */
  readonly user?: string | undefined;
  readonly deploysAccount: boolean;
  readonly callData: Hex;
  readonly maxFeePerGas: bigint;
  /** The op's worst-case cost to the paymaster (the signing bounds' formula) plus any premium, in wei. */
  readonly worstCaseWei: bigint;
  readonly nowMs: number;
  /** The native token's price in micro-USD, with its age; undefined where no price source is configured. */
  readonly nativeUsd: { readonly microUsd: bigint; readonly ageMs: number } | undefined;
  /**
   * The kind of account the sender is (policies/knownAccounts.ts), resolved by the caller when a contract allowlist
   * applies: the allowlist matches only a sender Patron knows, decoded with its kind's layouts. Absent: unknown.
   */
  readonly account?: SenderAccount;
  /** The decoded calls (with the account's kind), memoised by the caller so that several policies decode once. */
  readonly calls?: () => AccountCallsDecoding;
  /** The token's `addr` claim, when present: the holder a gating rule with `subject: 'user'` reads. */
  readonly userAddress?: Address | undefined;
}

/** One amount to reserve against one cap's window, atomically with every other charge of the request. */
export interface CapCharge {
  readonly policyId: string;
  readonly policyName: string;
  readonly scope: Exclude<CapScope, 'op'>;
  readonly unit: CapUnit;
  /** The ledger row: policy, cap kind, scope key and window, so a changed limit keeps the usage counted. */
  readonly key: string;
  /** wei, micro-USD or 1. */
  readonly amount: bigint;
  readonly limit: bigint;
  readonly window: CapWindow;
}

/**
 * A policy's address lists as sets, built once per parsed rules object (the service caches parsed policies):
 * a list of 10,000 senders or 1,000 contracts scanned with isAddressEqual cost ~1 µs an entry per call, and an
 * op may carry thousands of calls.
 */
interface Lookup {
  readonly allow: ReadonlySet<string> | undefined;
  readonly block: ReadonlySet<string> | undefined;
  /** Lower-case contract → its allowed selectors (undefined: any method). */
  readonly contracts: ReadonlyMap<string, ReadonlySet<string> | undefined> | undefined;
  /** A `user` cap applies: the request must name its user (a verified sponsorship token). */
  readonly needsUser: boolean;
}
const lookups = new WeakMap<Policy['rules'], Lookup>();

function lookupOf(rules: Policy['rules']): Lookup {
  let l = lookups.get(rules);
  if (l === undefined) {
    const lower = (xs: readonly string[] | undefined) =>
      xs === undefined ? undefined : new Set(xs.map((x) => x.toLowerCase()));
    l = {
      allow: lower(rules.senders?.allow),
      block: lower(rules.senders?.block),
      contracts:
        rules.contracts === undefined
          ? undefined
          : new Map(rules.contracts.map((c) => [c.address.toLowerCase(), lower(c.selectors)])),
      needsUser: (rules.caps ?? []).some((c) => c.scope === 'user'),
    };
    lookups.set(rules, l);
  }
  return l;
}

/** Whether the policy applies to this request at all: active, inside its time window, on one of its chains. */
export function policyApplies(policy: Policy, facts: SponsorshipFacts): boolean {
  const { rules } = policy;
  const nowS = Math.floor(facts.nowMs / 1000);
  if (!policy.active) return false;
  if (rules.startsAt !== undefined && nowS < rules.startsAt) return false;
  if (rules.endsAt !== undefined && nowS >= rules.endsAt) return false;
  return rules.chainIds === undefined || rules.chainIds.includes(facts.chainId);
}

/**
 * The policies to check, or the denial. All that apply are checked, also when the request names one: the name
 * comes from whoever holds the public API key, so it may choose which policy sponsors (it must exist and apply)
 * but never skip another's rules or caps.
 */
export function selectPolicies(args: {
  readonly policies: readonly Policy[];
  readonly facts: SponsorshipFacts;
  readonly requestedId?: string | undefined;
}): { readonly policies: readonly Policy[] } | { readonly denial: PolicyDenial } {
  const { policies, facts, requestedId } = args;
  if (requestedId !== undefined) {
    const named = policies.find((p) => p.id === requestedId);
    if (named === undefined) {
      return { denial: { rule: 'policyNotFound', message: `No sponsorship policy ${requestedId} for this dApp` } };
    }
    if (!policyApplies(named, facts)) {
      return {
        denial: {
          ...about(named),
          rule: 'noPolicyApplies',
          message: `Policy ${named.name} does not apply now or on this chain`,
        },
      };
    }
  }
  if (policies.length === 0) return { policies: [] };
  const applying = policies.filter((p) => policyApplies(p, facts));
  if (applying.length === 0) {
    return {
      denial: {
        rule: 'noPolicyApplies',
        message: 'None of the dApp’s sponsorship policies applies now or on this chain',
      },
    };
  }
  return { policies: applying };
}

const about = (p: Policy) => ({ policyId: p.id, policyName: p.name });

/**
 * A policy with a `user` cap and a request that names no user (no sponsorship token): denied, never counted
 * without the cap. Skipping the cap would let anyone farm it by leaving the token out.
 */
const userRequired = (p: Policy): PolicyDenial => ({
  ...about(p),
  rule: 'userRequired',
  message: `Policy ${p.name} caps each end user, and this request carries no sponsorship token naming one: the dApp must send a sponsorship token from its backend with every request (and should require tokens)`,
});

/** The first rule (other than caps) the request breaks, or undefined when it passes them all. */
export function checkPolicyRules(policy: Policy, facts: SponsorshipFacts): PolicyDenial | undefined {
  const { rules } = policy;
  const sender = toAddress(facts.sender);
  const lookup = lookupOf(rules);
  const key = sender.toLowerCase();
  // First: a request without a token is refused for that alone, whatever the op.
  if (lookup.needsUser && !hasUser(facts.user)) return userRequired(policy);
  if (lookup.block?.has(key) === true) {
    return {
      ...about(policy),
      rule: 'senderBlocked',
      value: sender,
      message: `Sender ${sender} is blocked by policy ${policy.name}`,
    };
  }
  if (lookup.allow !== undefined && !lookup.allow.has(key)) {
    return {
      ...about(policy),
      rule: 'senderNotAllowed',
      value: sender,
      message: `Sender ${sender} is not on policy ${policy.name}'s allowlist`,
    };
  }
  if (facts.deploysAccount && rules.sponsorDeployment === false) {
    return {
      ...about(policy),
      rule: 'deploymentNotSponsored',
      message: `Policy ${policy.name} does not sponsor account deployment (initCode)`,
    };
  }
  if (rules.maxFeePerGas !== undefined && facts.maxFeePerGas > rules.maxFeePerGas) {
    return {
      ...about(policy),
      rule: 'maxFeePerGas',
      value: facts.maxFeePerGas.toString(),
      limit: rules.maxFeePerGas.toString(),
      message: `maxFeePerGas ${facts.maxFeePerGas} wei is above policy ${policy.name}'s ceiling of ${rules.maxFeePerGas} wei`,
    };
  }
  return lookup.contracts === undefined ? undefined : checkContracts(policy, lookup.contracts, facts);
}

function checkContracts(
  policy: Policy,
  allowed: NonNullable<Lookup['contracts']>,
  facts: SponsorshipFacts,
): PolicyDenial | undefined {
  const account = facts.account;
  if (account === undefined || !account.known) {
    const sender = toAddress(facts.sender);
    const { reason, ...found } = account?.found ?? { reason: 'the sender was not looked up' };
    return {
      ...about(policy),
      rule: 'unknownAccount',
      sender,
      ...found,
      message: `Policy ${policy.name} allows listed contracts only, and sender ${sender} is not an account Patron knows (${reason}), so its callData says nothing of what it will call`,
    };
  }
  const decoded = facts.calls?.() ?? decodeAccountCalls(facts.callData, account.kind);
  if (!decoded.ok) {
    return {
      ...about(policy),
      rule: 'undecodableCall',
      ...(decoded.selector === undefined ? {} : { selector: decoded.selector }),
      message: `Policy ${policy.name} allows listed contracts only, and this call cannot be checked: ${decoded.reason}`,
    };
  }
  for (const call of decoded.calls) {
    const to = call.to.toLowerCase();
    if (!allowed.has(to)) {
      return {
        ...about(policy),
        rule: 'contractNotAllowed',
        contract: call.to,
        message: `Contract ${call.to} is not allowed by policy ${policy.name}`,
      };
    }
    const selectors = allowed.get(to);
    if (selectors !== undefined && (call.selector === undefined || !selectors.has(call.selector.toLowerCase()))) {
      const method = call.selector ?? '(a call without data)';
      return {
        ...about(policy),
        rule: 'methodNotAllowed',
        contract: call.to,
        ...(call.selector === undefined ? {} : { selector: call.selector }),
        message: `Method ${method} on ${call.to} is not allowed by policy ${policy.name}`,
      };
    }
  }
  return undefined;
}

/**
 * What the request must reserve against the policy's caps (dApp, sender and user scopes), or the denial of a
 * per-op cap, which needs no ledger, or of a user cap without a user. A USD cap needs a price no older than `maxPriceAgeMs`: without one the request is
 * denied, never counted at a guess. The amount is the worst case, rounded up; settlement replaces it by the
 * real cost.
 */
export function capCharges(args: {
  readonly policy: Policy;
  readonly facts: SponsorshipFacts;
  readonly maxPriceAgeMs: number;
}): { readonly charges: readonly CapCharge[] } | { readonly denial: PolicyDenial } {
  const { policy, facts } = args;
  const charges: CapCharge[] = [];
  for (const cap of policy.rules.caps ?? []) {
    const amount = capAmount(cap, facts, args.maxPriceAgeMs);
    if (typeof amount !== 'bigint') return { denial: { ...about(policy), ...amount } };
    if (cap.scope === 'op') {
      if (amount > cap.limit) {
        return {
          denial: {
            ...about(policy),
            rule: 'cap',
            scope: 'op',
            unit: cap.unit,
            value: amount.toString(),
            limit: cap.limit.toString(),
            message: `The op's worst case of ${formatAmount(amount, cap.unit)} is above policy ${policy.name}'s per-op cap of ${formatAmount(cap.limit, cap.unit)}`,
          },
        };
      }
      continue;
    }
    let scopeKey = 'dapp';
    if (cap.scope === 'sender') scopeKey = toAddress(facts.sender);
    else if (cap.scope === 'user') {
      if (!hasUser(facts.user)) return { denial: userRequired(policy) };
      scopeKey = userScopeKey(facts.user);
    }
    const window = capWindow(cap.resets, facts.nowMs);
    charges.push({
      policyId: policy.id,
      policyName: policy.name,
      scope: cap.scope,
      unit: cap.unit,
      key: capLedgerKey({ policyId: policy.id, cap, scopeKey, windowStart: window.start }),
      amount,
      limit: cap.limit,
      window,
    });
  }
  return { charges };
}

/**
 * The ledger row of one cap's window: policy, cap kind, scope key (the checksummed sender, the escaped user id of
 * userScopeKey.ts, or `dapp`; none holds `|`, and the scope part tells them apart) and window start. A changed limit keeps the row (usage stays counted); a changed unit, scope or cycle starts anew.
 */
export function capLedgerKey(args: {
  readonly policyId: string;
  readonly cap: Pick<PolicyCap, 'scope' | 'unit' | 'resets'>;
  readonly scopeKey: string;
  readonly windowStart: number;
}): string {
  const { cap } = args;
  return `${args.policyId}|${cap.scope}|${cap.unit}|${cap.resets}|${args.scopeKey}|${args.windowStart}`;
}

function capAmount(
  cap: PolicyCap,
  facts: SponsorshipFacts,
  maxPriceAgeMs: number,
): bigint | Omit<PolicyDenial, 'policyId' | 'policyName'> {
  if (cap.unit === 'ops') return 1n;
  if (cap.unit === 'wei') return facts.worstCaseWei;
  const price = facts.nativeUsd;
  if (price === undefined || price.ageMs > maxPriceAgeMs) {
    return {
      rule: 'priceUnavailable',
      unit: 'usd',
      message:
        price === undefined
          ? 'A USD cap applies and no native-token price is available'
          : `A USD cap applies and the native-token price is ${Math.round(price.ageMs / 1000)} s old (at most ${Math.round(maxPriceAgeMs / 1000)} s)`,
    };
  }
  // Rounded up: a cap is never under-counted; settlement converts the actual cost the same way.
  return usdMicrosOfWei(facts.worstCaseWei, price.microUsd);
}

/** An amount in its unit as a person reads it: wei, USD with 6 decimals, or a count. */
export function formatAmount(amount: bigint, unit: CapUnit): string {
  if (unit === 'wei') return `${amount} wei`;
  if (unit === 'ops') return `${amount} op${amount === 1n ? '' : 's'}`;
  return `${microsToUsd(amount)} USD`;
}
