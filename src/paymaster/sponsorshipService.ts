import type { Address, Hex } from 'viem';
import type { ChainRuntime } from '../chain/chainRegistry.js';
import type { FeeOracle } from '../chain/feeOracle.js';
import type { SigningBounds } from '../config/boundsSettings.js';
import { ValidationError } from '../errors/PatronError.js';
import type { PolicyGate, PolicyPass } from '../policies/policyGate.js';
import type { WebhookOperation } from '../webhooks/webhookOperation.js';
import { completeUserOperation, validityWindow } from './completeUserOperation.js';
import type { CryptoBackend } from './cryptoBackend.js';
import { DUMMY_SIGNATURE_BYTES, estimateGasV06, type GasLimitsV06 } from './gasEstimatorV06.js';
import {
  eip191Digest,
  encodeSponsoredPaymasterAndData,
  sponsoredHashV06,
  type UserOperationV06,
} from './patronPaymasterV06.js';
import type { PaymasterSigner } from './paymasterSigner.js';
import { type IssuedSignature, issuedSignature, type ReportFact } from './requestFacts.js';
import { assertFeesWithinBounds, assertGasWithinBounds, chainFees, worstCaseCostV06 } from './signingBounds.js';
import type { SpendGuard } from './spendGuard.js';
import type { PartialUserOperation } from './userOperationInput.js';
import { approveByDappWebhooks, type CheckWebhooks } from './webhookApproval.js';

export interface SponsorshipPolicy {
  /** Validity when the request names no `expiryDuration` (seconds). */
  readonly defaultExpirySeconds: number;
  /** Upper bound on any requested `expiryDuration` (seconds). */
  readonly maxExpirySeconds: number;
  /** `validAfter` is set this far in the past, so a bundler whose clock lags still accepts the op. */
  readonly validAfterSkewSeconds: number;
}

export interface SponsorshipDeps {
  readonly signer: PaymasterSigner;
  readonly crypto: CryptoBackend;
  readonly policy: SponsorshipPolicy;
  readonly now: () => number;
  /** The chains' current fees, for the signing bounds. */
  readonly fees: FeeOracle;
  /**
   * The solvency guard (src/solvency/): throws when the chain's paymaster deposit cannot cover what is promised,
   * before anything else is done for a request that would be signed.
   */
  readonly assertCanSign: (chainId: number) => void;
  /** The guard's check and record of a signature being issued, in one synchronous step (throws when held). */
  readonly admitSignature: (op: IssuedSignature) => void;
  /** The dApp's sponsorship policies: the rules before the webhook, the caps reserved at signing. */
  readonly policies: PolicyGate;
  /** Spec §6: the dApp's webhooks decide; see webhooks/webhookCheck.ts. */
  readonly checkWebhooks: CheckWebhooks;
}

export interface SponsorRequest {
  readonly dappId: string;
  readonly chain: ChainRuntime;
  readonly userOp: PartialUserOperation;
  /** true: compute limits; false: use the caller's (which must be present); undefined: compute if missing. */
  readonly calculateGasLimits: boolean | undefined;
  readonly expiryDuration: number | undefined;
  readonly webhookData: Record<string, unknown>;
  /** The policy the request names (`sponsorshipPolicyId`), if any; every policy that applies is checked anyway. */
  readonly sponsorshipPolicyId?: string | undefined;
  /** The signing bounds that apply to this dApp on this chain (README, "Signing bounds"). */
  readonly bounds: SigningBounds;
  /** Told what happens as the request goes (the request log, the metrics); see requestFacts.ts. */
  readonly report?: ReportFact | undefined;
  /** The request's budget for simulations and webhook calls. */
  readonly spend: SpendGuard;
}

export interface SponsoredUserOperation {
  readonly paymasterAndData: Hex;
  readonly callGasLimit: bigint;
  readonly verificationGasLimit: bigint;
  readonly preVerificationGas: bigint;
  readonly validUntil: number;
  readonly validAfter: number;
}

/** The first gas limit the caller left out, in the order the error names them. */
function firstMissingLimit(op: PartialUserOperation): string | undefined {
  if (op.callGasLimit === undefined) return 'callGasLimit';
  if (op.verificationGasLimit === undefined) return 'verificationGasLimit';
  if (op.preVerificationGas === undefined) return 'preVerificationGas';
  return undefined;
}

function policyRequest(req: {
  dappId: string;
  chain: ChainRuntime;
  userOp: PartialUserOperation;
  sponsorshipPolicyId?: string | undefined;
}) {
  return {
    dappId: req.dappId,
    chainId: req.chain.chainId,
    sender: req.userOp.sender,
    initCode: req.userOp.initCode,
    callData: req.userOp.callData,
    maxFeePerGas: req.userOp.maxFeePerGas,
    requestedPolicyId: req.sponsorshipPolicyId,
  };
}

/** The op's final gas: its validity window, limits and bounds checked, and the op as it will be hashed. */
interface FinalGas {
  readonly validUntil: number;
  readonly validAfter: number;
  readonly limits: GasLimitsV06;
  readonly final: UserOperationV06;
}

/**
 * The sponsored mode: fee bounds → policy rules → webhook verdict → gas limits → gas bounds → signature → caps
 * reserved; when a webhook of the dApp has includeOperation, the gas limits and bounds come before its verdict.
 */
export function createSponsorshipService(deps: SponsorshipDeps) {
  const window = (expiryDuration: number | undefined) => validityWindow(deps.policy, deps.now(), expiryDuration);

  const sign = (args: { chain: ChainRuntime; userOp: UserOperationV06; validUntil: number; validAfter: number }) => {
    const { chain, validUntil, validAfter } = args;
    const hash = sponsoredHashV06(
      { userOp: args.userOp, chainId: BigInt(chain.chainId), paymaster: chain.paymaster, validUntil, validAfter },
      deps.crypto,
    );
    const signature = deps.signer.sign(eip191Digest(hash, deps.crypto));
    return encodeSponsoredPaymasterAndData({ paymaster: chain.paymaster, validUntil, validAfter, signature });
  };

  /** A `paymasterAndData` of the final length with a dummy signature, for estimation. */
  const stub = (paymaster: Address, validity: { validUntil: number; validAfter: number }): Hex =>
    encodeSponsoredPaymasterAndData({ paymaster, ...validity, signature: DUMMY_SIGNATURE_BYTES });

  /** Everything before the signature: fee bounds, policy rules, webhook, gas limits, gas bounds. */
  const prepare = async (req: SponsorRequest): Promise<FinalGas & { pass: PolicyPass }> => {
    req.report?.({ kind: 'op', mode: 'SPONSORED', sender: req.userOp.sender });
    // Before the webhook and any simulation: an op priced out of bounds costs Patron nothing but this check.
    assertFeesWithinBounds(req.userOp, await chainFees(deps.fees, req.chain), req.bounds);
    const pass = await deps.policies.check(policyRequest(req));
    // The gas work is done once: after the webhooks by default (an op they refuse costs no simulation), or
    // before them when the check asks for the operation (a webhook with includeOperation sees the final gas).
    let gas: Promise<FinalGas> | undefined;
    const finalGas = () => {
      gas ??= settleGas(req);
      return gas;
    };
    await approveByWebhooks(req, async () => webhookOperation(req, pass, await finalGas()));
    return { ...(await finalGas()), pass };
  };

  /** The validity window, the gas limits (the caller's or simulated) and the gas bounds. */
  const settleGas = async (req: SponsorRequest): Promise<FinalGas> => {
    const { validUntil, validAfter } = window(req.expiryDuration);
    const limits = await gasLimits(req, { validUntil, validAfter });
    assertGasWithinBounds(limits, req.userOp.maxFeePerGas, req.bounds);
    // paymasterAndData is not part of the signed hash.
    return { validUntil, validAfter, limits, final: completeUserOperation(req.userOp, limits, '0x') };
  };

  const approveByWebhooks = (req: SponsorRequest, operation: () => Promise<WebhookOperation>): Promise<void> =>
    approveByDappWebhooks({ checkWebhooks: deps.checkWebhooks, ...req, operation });

  /** What a webhook with includeOperation is shown: the op as it will be signed, where, and at what worst case. */
  const webhookOperation = (req: SponsorRequest, pass: PolicyPass, gas: FinalGas): WebhookOperation => ({
    // The serializer sends the listed fields only: this op's paymasterAndData ('0x') is not one of them.
    userOperation: gas.final,
    chainId: req.chain.chainId,
    entryPoint: req.chain.entryPoint,
    paymaster: req.chain.paymaster,
    dappId: req.dappId,
    policyIds: pass.policies.map((p) => p.id),
    worstCaseCostWei: worstCaseCostV06(gas.limits, gas.final.maxFeePerGas),
    validUntil: gas.validUntil,
    validAfter: gas.validAfter,
  });

  /** The caller's limits, or simulated ones (README, "Gas limits"). */
  const gasLimits = async (
    req: SponsorRequest,
    validity: { validUntil: number; validAfter: number },
  ): Promise<GasLimitsV06> => {
    const op = req.userOp;
    const missing = firstMissingLimit(op);
    if (req.calculateGasLimits === false && missing !== undefined) {
      throw new ValidationError(`Invalid params: params[0].${missing}: required when calculateGasLimits is false`);
    }
    if (req.calculateGasLimits !== true && missing === undefined) {
      return {
        callGasLimit: op.callGasLimit ?? 0n,
        verificationGasLimit: op.verificationGasLimit ?? 0n,
        preVerificationGas: op.preVerificationGas ?? 0n,
      };
    }
    // Simulated with a paymasterAndData of the final length: its bytes are part of what the op costs.
    const base = completeUserOperation(op, op, stub(req.chain.paymaster, validity));
    await req.spend.simulation();
    return estimateGasV06({
      chain: req.chain,
      userOp: base,
      ...(op.preVerificationGas === undefined ? {} : { callerPreVerificationGas: op.preVerificationGas }),
    });
  };

  return {
    /** The ERC-7677 stub: the final length, a dummy signature. */
    stubPaymasterAndData: (paymaster: Address, expiryDuration?: number): Hex => stub(paymaster, window(expiryDuration)),

    /** The fee bounds alone (the stub's check: its gas limits are not final yet). */
    async assertFeesWithinBounds(args: {
      chain: ChainRuntime;
      userOp: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
      bounds: SigningBounds;
    }): Promise<void> {
      assertFeesWithinBounds(args.userOp, await chainFees(deps.fees, args.chain), args.bounds);
    },

    /** The signed op: rules, webhook, gas, bounds, then the caps reserved and the signature. */
    async sponsor(req: SponsorRequest): Promise<SponsoredUserOperation> {
      deps.assertCanSign(req.chain.chainId);
      const ready = await prepare(req);
      const { validUntil, validAfter, limits, final, pass } = ready;
      const paymasterAndData = sign({ chain: req.chain, userOp: final, validUntil, validAfter });
      const worstCaseWei = worstCaseCostV06(limits, final.maxFeePerGas);
      const issued = issuedSignature({
        chainId: req.chain.chainId,
        userOp: { ...final, paymasterAndData },
        entryPoint: req.chain.entryPoint,
        worstCaseWei,
        validUntil,
        keccak: deps.crypto,
      });
      // Reserved after signing (the userOpHash covers paymasterAndData); a denial discards the signature unseen.
      const decision = await deps.policies.reserve({ pass, worstCaseWei, validUntil, userOpHash: issued.userOpHash });
      // After the last await: the guard's check and its record of this signature are one step.
      deps.admitSignature(issued);
      if (req.report !== undefined) {
        req.report({ kind: 'policy', decision });
        req.report({ kind: 'signed', mode: 'SPONSORED', paymaster: req.chain.paymaster, paymasterAndData, ...issued });
      }
      return {
        paymasterAndData,
        callGasLimit: limits.callGasLimit,
        verificationGasLimit: limits.verificationGasLimit,
        preVerificationGas: limits.preVerificationGas,
        validUntil,
        validAfter,
      };
    },

    /**
     * The dry run (pm_validateSponsorshipPolicies): every check sponsor makes, the webhook included, and the caps
     * against the counters as they are, without signing or reserving. Throws what sponsor would.
     */
    async validate(req: SponsorRequest): Promise<{ policies: readonly { id: string; name: string }[] }> {
      const { limits, final, pass } = await prepare(req);
      await deps.policies.fits({ pass, worstCaseWei: worstCaseCostV06(limits, final.maxFeePerGas) });
      return { policies: pass.policies.map((p) => ({ id: p.id, name: p.name })) };
    },

    /**
     * The ERC-7677 stub's policy check, so a wallet learns of a denial before it pays for an estimation: the rules,
     * and the caps read-only with the gas the op already gives (missing limits count as 0: a spent op-count cap, or
     * a cap with nothing left, refuses; the final call reserves the real worst case).
     */
    async precheckPolicies(req: {
      dappId: string;
      chain: ChainRuntime;
      userOp: PartialUserOperation;
      sponsorshipPolicyId: string | undefined;
    }): Promise<void> {
      const pass = await deps.policies.check(policyRequest(req));
      const op = req.userOp;
      const known = {
        callGasLimit: op.callGasLimit ?? 0n,
        verificationGasLimit: op.verificationGasLimit ?? 0n,
        preVerificationGas: op.preVerificationGas ?? 0n,
      };
      await deps.policies.fits({ pass, worstCaseWei: worstCaseCostV06(known, op.maxFeePerGas) });
    },
  };
}

export type SponsorshipService = ReturnType<typeof createSponsorshipService>;
