import { type Address, type Hex, isAddressEqual } from 'viem';
import type { BalanceCall, EasAttestation } from '../chain/gatingReads.js';
import type { GatingReason, PolicyDenial } from './policyDenial.js';
import type { AttestationRule, MinBalanceRule, NftRule, Policy } from './policySchema.js';

/**
 * The gating rules of a policy (attestation, nft, minBalance: docs/guides/policies.md, "Gating rules"): what the
 * subject holds on the request's chain. They run after every cheap rule of every applying policy (a request a
 * cheap rule denies reads nothing) and before the webhook; a read that fails denies (fail closed, reason
 * `readFailed`).
 */
export interface GatingReader {
  balance(call: BalanceCall): Promise<bigint>;
  attestation(args: { readonly eas: Address; readonly uid: Hex }): Promise<EasAttestation>;
}

export interface GatingFacts {
  readonly sender: Address;
  /** The verified sponsorship token's `addr` claim, when present. */
  readonly userAddress: Address | undefined;
  /** The EAS attestation the request names (paymaster context `attestationUid`). */
  readonly attestationUid: Hex | undefined;
  readonly nowMs: number;
  /** The chain reads, bound to the request's chain; absent: a gating rule denies with `readFailed`. */
  readonly reader: GatingReader | undefined;
}

export function hasGatingRules(rules: Policy['rules']): boolean {
  return rules.attestation !== undefined || rules.nft !== undefined || rules.minBalance !== undefined;
}

const about = (p: Policy) => ({ policyId: p.id, policyName: p.name });
const ZERO_UID: Hex = `0x${'0'.repeat(64)}`;

/**
 * Why an attestation does not vouch for `holder` under the rule, or undefined when it does: it exists, is of the
 * rule's schema, by one of its attesters, to `holder`, not revoked, not expired, and, with maxAgeSeconds, recent.
 */
export function attestationProblem(args: {
  readonly rule: AttestationRule;
  readonly attestation: EasAttestation;
  readonly holder: Address;
  readonly nowS: bigint;
}): { readonly reason: GatingReason; readonly detail: string } | undefined {
  const { rule, attestation: a, holder, nowS } = args;
  if (a.uid.toLowerCase() === ZERO_UID) return { reason: 'notFound', detail: 'no attestation has this uid' };
  if (a.schema.toLowerCase() !== rule.schema.toLowerCase()) {
    return { reason: 'wrongSchema', detail: `it is of schema ${a.schema}` };
  }
  if (!rule.attesters.some((t) => isAddressEqual(t, a.attester))) {
    return { reason: 'wrongAttester', detail: `its attester ${a.attester} is not a trusted one` };
  }
  if (!isAddressEqual(a.recipient, holder)) {
    return { reason: 'wrongRecipient', detail: `it was made to ${a.recipient}` };
  }
  if (a.revocationTime !== 0n) return { reason: 'revoked', detail: `it was revoked at ${a.revocationTime}` };
  if (a.expirationTime !== 0n && a.expirationTime <= nowS) {
    return { reason: 'expired', detail: `it expired at ${a.expirationTime}` };
  }
  if (rule.maxAgeSeconds !== undefined && a.time < nowS - BigInt(rule.maxAgeSeconds)) {
    return { reason: 'tooOld', detail: `it was made at ${a.time}, more than ${rule.maxAgeSeconds} s ago` };
  }
  return undefined;
}

type Check = () => Promise<PolicyDenial | undefined>;

/** The policy's first gating rule the request breaks (attestation, nft, minBalance), or undefined. */
export async function checkGatingRules(policy: Policy, facts: GatingFacts): Promise<PolicyDenial | undefined> {
  const { rules } = policy;
  const checks: Check[] = [];
  if (rules.attestation !== undefined) {
    const rule = rules.attestation;
    checks.push(() => checkAttestation(policy, rule, facts));
  }
  if (rules.nft !== undefined) {
    const rule = rules.nft;
    checks.push(() => checkNft(policy, rule, facts));
  }
  if (rules.minBalance !== undefined) {
    const rule = rules.minBalance;
    checks.push(() => checkMinBalance(policy, rule, facts));
  }
  // Read at once, judged in order: the first rule broken is the denial.
  const denials = await Promise.all(checks.map((c) => c()));
  return denials.find((d) => d !== undefined);
}

function holderOf(subject: 'sender' | 'user', facts: GatingFacts): Address | undefined {
  return subject === 'sender' ? facts.sender : facts.userAddress;
}

const whose = (subject: 'sender' | 'user', holder: Address | undefined) =>
  subject === 'user' ? `the user's address${holder === undefined ? '' : ` ${holder}`}` : `sender ${holder}`;

const NO_USER = 'the request carries no user address (a verified sponsorship token with an `addr` claim)';

async function attempt<T>(
  reader: GatingReader | undefined,
  read: (r: GatingReader) => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false }> {
  if (reader === undefined) return { ok: false };
  try {
    return { ok: true, value: await read(reader) };
  } catch {
    return { ok: false };
  }
}

async function checkAttestation(
  policy: Policy,
  rule: AttestationRule,
  facts: GatingFacts,
): Promise<PolicyDenial | undefined> {
  const uid = facts.attestationUid;
  const holder = holderOf(rule.subject, facts);
  const read =
    holder === undefined || uid === undefined
      ? undefined
      : await attempt(facts.reader, (r) => r.attestation({ eas: rule.eas, uid }));
  const problem =
    read?.ok === true && holder !== undefined
      ? attestationProblem({
          rule,
          attestation: read.value,
          holder,
          nowS: BigInt(Math.floor(facts.nowMs / 1000)),
        })
      : undefined;
  if (read?.ok === true && problem === undefined) return undefined;
  const base = {
    ...about(policy),
    rule: 'attestationMissing' as const,
    eas: rule.eas,
    schema: rule.schema,
    subject: rule.subject,
    ...(uid === undefined ? {} : { uid }),
    ...(holder === undefined ? {} : { holder }),
  };
  const lead = `Policy ${policy.name} needs an attestation of schema ${rule.schema} for ${whose(rule.subject, holder)}`;
  if (holder === undefined) return { ...base, reason: 'noUserAddress', message: `${lead}, and ${NO_USER}` };
  if (uid === undefined) {
    return {
      ...base,
      reason: 'noAttestationUid',
      message: `${lead}: pass its uid as \`attestationUid\` in the paymaster context`,
    };
  }
  if (problem === undefined) {
    return { ...base, reason: 'readFailed', message: `${lead}, and EAS at ${rule.eas} could not be read` };
  }
  return { ...base, reason: problem.reason, message: `${lead}, and attestation ${uid} does not: ${problem.detail}` };
}

async function checkNft(policy: Policy, rule: NftRule, facts: GatingFacts): Promise<PolicyDenial | undefined> {
  const holder = holderOf(rule.subject, facts);
  const read =
    holder === undefined
      ? undefined
      : await attempt(facts.reader, (r) =>
          r.balance(
            rule.standard === 'erc1155'
              ? { kind: 'erc1155', contract: rule.contract, owner: holder, tokenId: rule.tokenId ?? 0n }
              : { kind: 'erc721', contract: rule.contract, owner: holder },
          ),
        );
  // The pass path builds nothing: the denial's data and message only when there is one.
  if (read?.ok === true && read.value >= rule.minCount) return undefined;
  const base = {
    ...about(policy),
    rule: 'nftMissing' as const,
    standard: rule.standard,
    contract: rule.contract,
    ...(rule.tokenId === undefined ? {} : { tokenId: rule.tokenId.toString() }),
    minCount: rule.minCount.toString(),
    subject: rule.subject,
    ...(holder === undefined ? {} : { holder }),
  };
  const token = rule.tokenId === undefined ? '' : ` id ${rule.tokenId}`;
  const lead = `Policy ${policy.name} needs ${whose(rule.subject, holder)} to hold at least ${rule.minCount} of ${rule.standard} ${rule.contract}${token}`;
  if (read === undefined) return { ...base, reason: 'noUserAddress', message: `${lead}, and ${NO_USER}` };
  if (!read.ok) return { ...base, reason: 'readFailed', message: `${lead}, and its balance could not be read` };
  return { ...base, reason: 'tooFew', count: read.value.toString(), message: `${lead}; it holds ${read.value}` };
}

async function checkMinBalance(
  policy: Policy,
  rule: MinBalanceRule,
  facts: GatingFacts,
): Promise<PolicyDenial | undefined> {
  const holder = holderOf(rule.subject, facts);
  const read =
    holder === undefined
      ? undefined
      : await attempt(facts.reader, (r) =>
          r.balance(
            rule.token === 'native'
              ? { kind: 'native', owner: holder }
              : { kind: 'erc20', contract: rule.token, owner: holder },
          ),
        );
  if (read?.ok === true && read.value >= rule.min) return undefined;
  const base = {
    ...about(policy),
    rule: 'balanceTooLow' as const,
    token: rule.token,
    min: rule.min.toString(),
    subject: rule.subject,
    ...(holder === undefined ? {} : { holder }),
  };
  const what = rule.token === 'native' ? 'of the native coin (wei)' : `of token ${rule.token} (base units)`;
  const lead = `Policy ${policy.name} needs ${whose(rule.subject, holder)} to hold at least ${rule.min} ${what}`;
  if (read === undefined) return { ...base, reason: 'noUserAddress', message: `${lead}, and ${NO_USER}` };
  if (!read.ok) return { ...base, reason: 'readFailed', message: `${lead}, and the balance could not be read` };
  return { ...base, reason: 'tooLow', balance: read.value.toString(), message: `${lead}; it holds ${read.value}` };
}
