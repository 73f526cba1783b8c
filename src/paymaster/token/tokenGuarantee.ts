import type { Address, Hex } from 'viem';
import type { GatingReads } from '../../chain/gatingReads.js';
import type { ChainReads } from '../../chain/senderCode.js';
import type { GuaranteeCapSetting } from '../../dappSettings/tokenGuarantees.js';
import { PolicyDeniedError, SponsorshipDeniedError, WebhookFailedError } from '../../errors/PatronError.js';
import { guaranteeCapCharge } from '../../policies/guaranteeCap.js';
import type { PolicyDecision, PolicyGate, PolicyPass, ReservedToken } from '../../policies/policyGate.js';
import type { WebhookOperation } from '../../webhooks/webhookOperation.js';
import type { FinalUserOperation, ValidityWindow } from '../entryPoints/entryPointModule.js';
import type { PartialUserOperation } from '../partialUserOperation.js';
import type { PaymasterCall } from '../paymasterCall.js';
import { policyRequest } from '../paymasterRequest.js';
import type { IssuedSignature } from '../requestFacts.js';
import { approveByDappWebhooks, type CheckWebhooks } from '../webhookApproval.js';
import { type GuaranteeTerms, guaranteeCapRefused, guaranteeRefused } from './guaranteeTerms.js';

/**
 * The token mode's mode 2 (docs/guides/token-mode.md, "Paying gas in ERC-20"): an op that batches `approve(paymaster, X)` into its own
 * callData cannot be prefunded (the approval runs after validation), so its charge is collected in postOp and can
 * fail, leaving the paymaster's deposit to pay its gas. That worst case is sponsorship the dApp guarantees, so the
 * op passes the dApp's sponsorship gates exactly as a sponsored op would: the policy rules (before the
 * simulation), the dApp's webhooks (with `mode: "ERC20"` in the operation), and the caps, reserved at the op's
 * worst case in wei as a `guarantee`, together with the dApp's token-guarantee cap (policies/guaranteeCap.ts). A
 * denial is the sponsored mode's error with a note saying why and how to avoid it. None of it runs unless the dApp
 * turned guarantees on and the key may ask for sponsorship (guaranteeTerms.ts). An op with an allowance already in
 * place is mode 1 (prefunded, the user's own money): no gate.
 */
export interface GuaranteeDeps {
  readonly policies: PolicyGate;
  /** The sender's code, for a contract allowlist's known-account check (chain/senderCode.ts). */
  readonly chainReads: ChainReads;
  /** The gating rules' cached balance and attestation reads (chain/gatingReads.ts). */
  readonly gatingReads?: GatingReads | undefined;
  readonly checkWebhooks: CheckWebhooks;
}

export interface GuaranteeRequest {
  readonly call: PaymasterCall;
  readonly userOp: PartialUserOperation;
  readonly webhookData: Record<string, unknown>;
  readonly sponsorshipPolicyId?: string | undefined;
  readonly attestationUid?: Hex | undefined;
}

/** The rules' verdict, held: a denial only counts once the op turns out to need the guarantee. */
export type GuaranteeRules = { readonly pass: PolicyPass } | { readonly denied: unknown };

/** The policy rules (cached, nothing written), before any simulation. */
export function checkGuaranteeRules(deps: GuaranteeDeps, req: GuaranteeRequest): Promise<GuaranteeRules> {
  return deps.policies.check(policyRequest(req, deps)).then(
    (pass) => ({ pass }),
    (denied: unknown) => ({ denied }),
  );
}

/** What the final data knows of the guarantee before its simulation (guaranteeBeforeSimulation). */
export interface GuaranteeOutlook {
  /** The op batches its approval and the dApp's guarantee is open to this call: mode 2 if the allowance falls short. */
  readonly mayGuarantee: boolean;
  /** The op batches its approval and the guarantee is refused: what to throw if the op turns out to need it. */
  readonly refused: Error | undefined;
  /** The policy rules, where the op may get mode 2. */
  readonly rules: GuaranteeRules | undefined;
}

/**
 * Before any simulation: whether an op that batches its approval may get mode 2 (guaranteeTerms.ts), and its policy
 * rules if so. A refusal waits for the mode (an allowance already given may make it mode 1), unless the account has
 * no allowance at all: then mode 1 is impossible and it is thrown now, before any simulation or webhook.
 */
export async function guaranteeBeforeSimulation(args: {
  readonly deps: GuaranteeDeps;
  readonly req: GuaranteeRequest & { readonly guarantee: GuaranteeTerms };
  /** The largest approval of the paymaster in the op's callData, if any. */
  readonly approved: bigint | undefined;
  /** The allowance already given on chain, being read. */
  readonly allowance: Promise<bigint>;
  readonly named: { readonly symbol: string; readonly paymaster: Address };
}): Promise<GuaranteeOutlook> {
  const terms = args.req.guarantee;
  const batched = args.approved !== undefined;
  const refused = terms.allowed || !batched ? undefined : guaranteeRefused({ ...args.named, ...terms });
  if (refused !== undefined && (await args.allowance) === 0n) throw refused;
  const mayGuarantee = batched && terms.allowed;
  const rules = mayGuarantee ? await checkGuaranteeRules(args.deps, args.req) : undefined;
  if (rules !== undefined && 'denied' in rules && (await args.allowance) === 0n) {
    throw guaranteeDenial(rules.denied, args.named);
  }
  return { mayGuarantee, refused, rules };
}

/** A denial of the sponsored mode's kind, told that this op needed the dApp's guarantee and how to avoid it. */
export function guaranteeDenial(err: unknown, args: { readonly symbol: string; readonly paymaster: Address }): unknown {
  const note = `this operation batches its ${args.symbol} approval, so its charge is collected after it runs and the dApp guarantees it; approve the paymaster ${args.paymaster} for ${args.symbol} before the operation to pay without that guarantee`;
  if (err instanceof PolicyDeniedError) {
    const message = err.message.replace(/^Sponsorship denied by policy: /, '');
    return new PolicyDeniedError(`${message} (${note})`, { ...err.data, rule: err.rule });
  }
  if (err instanceof SponsorshipDeniedError) return new SponsorshipDeniedError(`${err.message} (${note})`);
  if (err instanceof WebhookFailedError) return new WebhookFailedError(`${err.message} (${note})`, err.reason);
  return err;
}

/** The dApp's webhooks, shown the op as it will be signed (mode ERC20), with the request's webhookData. */
export async function approveGuaranteeByWebhooks(args: {
  readonly deps: GuaranteeDeps;
  readonly req: GuaranteeRequest;
  readonly pass: PolicyPass;
  readonly final: FinalUserOperation;
  readonly worstCaseWei: bigint;
  readonly window: ValidityWindow;
}): Promise<void> {
  const { req } = args;
  const operation = async (): Promise<WebhookOperation> => ({
    mode: 'ERC20',
    userOperation: args.final,
    chainId: req.call.chain.chainId,
    entryPointVersion: req.call.chain.entryPointVersion,
    entryPoint: req.call.chain.entryPoint,
    paymaster: req.call.chain.paymaster,
    dappId: req.call.dappId,
    policyIds: args.pass.policies.map((p) => p.id),
    worstCaseCostWei: args.worstCaseWei,
    ...args.window,
  });
  await approveByDappWebhooks({
    checkWebhooks: args.deps.checkWebhooks,
    call: req.call,
    webhookData: req.webhookData,
    operation,
  });
}

/**
 * The caps: the op's worst case in wei (what the deposit can lose), reserved as a guarantee against the policies'
 * caps and the dApp's token-guarantee cap, all or none.
 */
export function reserveGuarantee(args: {
  readonly deps: GuaranteeDeps;
  readonly pass: PolicyPass;
  readonly issued: IssuedSignature;
  readonly cap: GuaranteeCapSetting;
  readonly nowMs: number;
  /** What the cap's refusal names. */
  readonly token: { readonly symbol: string; readonly paymaster: Address };
  /** The request's sponsorship token, spent in the reservation's transaction. */
  readonly grant?: ReservedToken | undefined;
}): Promise<PolicyDecision> {
  const { cap } = args;
  const charge = guaranteeCapCharge({
    dappId: args.pass.request.dappId,
    cap,
    worstCaseWei: args.issued.worstCaseWei,
    nowMs: args.nowMs,
  });
  const refused = (counters: { readonly used: bigint; readonly reserved: bigint }) =>
    guaranteeCapRefused({ ...args.token, charge, resets: cap.resets, ...counters });
  return args.deps.policies.reserve({
    pass: args.pass,
    worstCaseWei: args.issued.worstCaseWei,
    validUntil: args.issued.validUntil,
    // Held until the chain passes the signed window; closed by settlement (TokenCharged: released, else settled).
    window: args.issued.window,
    paymaster: args.issued.paymaster,
    signed: args.issued,
    kind: 'guarantee',
    extraCharges: [{ ...charge, refused }],
    grant: args.grant,
  });
}
