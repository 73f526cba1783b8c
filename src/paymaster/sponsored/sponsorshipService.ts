import type { Hex } from 'viem';
import type { ChainRuntime } from '../../chain/chainRegistry.js';
import type { ChainFees, FeeOracle } from '../../chain/feeOracle.js';
import type { GatingReads } from '../../chain/gatingReads.js';
import type { ChainReads } from '../../chain/senderCode.js';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';
import type { PolicyGate, PolicyPass } from '../../policies/policyGate.js';
import { assertTokenCalls, assertTokenCost } from '../../sponsorshipTokens/sponsorshipGrant.js';
import type { WebhookOperation } from '../../webhooks/webhookOperation.js';
import {
  type EntryPointModule,
  type FinalUserOperation,
  finalUserOperation,
  type GasLimits,
  gasLimitsOf,
  type PaymasterFields,
  type SenderFacts,
  type ValidityWindow,
} from '../entryPoints/entryPointModule.js';
import { entryPointModule } from '../entryPoints/entryPointModules.js';
import { assertGasWithinBounds, assertPreVerificationGas, gasCapsFor, type OpGasBounds } from '../gasBounds.js';
import { maxBig } from '../maxBig.js';
import type { PartialUserOperation } from '../partialUserOperation.js';
import type { PaymasterCall } from '../paymasterCall.js';
import { policyRequest, type SponsoredUserOperation, type SponsorshipPolicy } from '../paymasterRequest.js';
import type { IssuedSignature } from '../requestFacts.js';
import { senderFactsResolver } from '../senderFacts.js';
import type { PaymasterSigner } from '../signer/paymasterSigner.js';
import { assertFeesWithinBounds, chainFees } from '../signingBounds.js';
import { callerLimits, gasBoundsOf, issueSignature } from '../signingPipeline.js';
import {
  blockWindow,
  currentBlockNumber,
  type IssuedWindow,
  secondsPerBlock,
  timeWindow,
  type ValidityUnit,
} from '../validityWindows.js';
import { approveByDappWebhooks, type CheckWebhooks } from '../webhookApproval.js';
import { createParallelSigning } from './parallelSigning.js';
import { createSizingFields } from './sizingFields.js';
import { assertV09, firstMissingLimit, type SigningRequest, type SponsorRequest } from './sponsorRequest.js';

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
  readonly assertCanSign: (chain: ChainRuntime) => void;
  /** The guard's check and record of a signature being issued, in one synchronous step (throws when held). */
  readonly admitSignature: (op: IssuedSignature) => void;
  /** The guard's claim on the deposit covering this op, where several instances share it (before the reservation). */
  readonly ensureHeadroom?: ((op: IssuedSignature) => Promise<void>) | undefined;
  /** The dApp's sponsorship policies: the rules before the webhook, the caps reserved at signing. */
  readonly policies: PolicyGate;
  /** Spec §6: the dApp's webhooks decide; see webhooks/webhookCheck.ts. */
  readonly checkWebhooks: CheckWebhooks;
  /** The sender's code and a proxy's implementation, read from the chain and cached (chain/senderCode.ts). */
  readonly chainReads: ChainReads;
  /** The gating rules' cached balance and attestation reads (chain/gatingReads.ts). */
  readonly gatingReads?: GatingReads | undefined;
}

/** The op's final gas: its validity window, limits and bounds checked, and the op as it will be hashed. */
interface FinalGas extends IssuedWindow {
  readonly final: FinalUserOperation;
  /** What the EntryPoint may charge the paymaster for it at most. */
  readonly worstCaseWei: bigint;
}

const SPONSORED = { mode: 'SPONSORED' } as const;

/** A stub's block window: the flag on both bounds and no zero byte (see stubFields). */
const STUB_BLOCK_WINDOW = { validUntil: 0x8101_0101_0101, validAfter: 0x8101_0101_0101 } as const;

/**
 * The sponsored mode: fee bounds → policy rules → webhook verdict → gas limits → gas bounds → signature → caps
 * reserved; when a webhook of the dApp has includeOperation, the gas limits and bounds come before its verdict.
 */
export function createSponsorshipService(deps: SponsorshipDeps) {
  /** The window a request asks for: seconds, or (v0.9, `validityUnit: "blocks"`) block numbers from the head. */
  const windowFor = async (
    req: { call: PaymasterCall; expiryDuration: number | undefined; validityUnit?: ValidityUnit | undefined },
    /** The chain's latest block time, from the fee read the request made (validityWindows.ts WindowClocks). */
    chainSeconds: number | undefined,
  ): Promise<IssuedWindow> => {
    if (req.validityUnit !== 'blocks') {
      return timeWindow(deps.policy, { nowMs: deps.now(), chainSeconds }, req.expiryDuration);
    }
    assertV09(req.call.chain, 'a window in block numbers');
    const currentBlock = await currentBlockNumber(req.call.chain.request);
    return blockWindow({
      policy: deps.policy,
      nowMs: deps.now(),
      expiryDuration: req.expiryDuration,
      currentBlock,
      secondsPerBlock: secondsPerBlock(req.call.chain),
    });
  };
  const tail = {
    sign: (digest: Uint8Array) => deps.signer.sign(digest),
    keccak: deps.crypto,
    admitSignature: deps.admitSignature,
    ensureHeadroom: deps.ensureHeadroom,
  };
  const sizingFields = createSizingFields(SPONSORED);
  /** undefined at once for an op that deploys its account (most): senderFacts.ts. */
  const senderOf = senderFactsResolver({ allowed: deps.policy.eip7702Delegates, reads: deps.chainReads });
  const rulesRequest = (req: Parameters<typeof policyRequest>[0]) => policyRequest(req, deps);

  /** Everything before the signature: fee bounds, policy rules, webhook, gas limits, gas bounds. */
  const prepare = async (req: SigningRequest): Promise<FinalGas & { pass: PolicyPass }> => {
    // Before the webhook and any simulation: an op priced out of bounds costs Patron nothing but this check.
    const fees = await chainFees(deps.fees, req.call.chain);
    assertFeesWithinBounds(req.userOp, fees, req.call.bounds);
    const pass = await deps.policies.check(rulesRequest(req));
    // The token's contracts bound, decoded as the policies decode (and with the sender they looked up).
    await assertTokenCalls({ grant: req.call.grant, request: pass.request });
    const resolving = senderOf(req.call.chain, req.userOp);
    const sender = resolving === undefined ? undefined : await resolving;
    // The gas work is done once: after the webhooks by default (an op they refuse costs no simulation), or
    // before them when the check asks for the operation (a webhook with includeOperation sees the final gas).
    let gas: Promise<FinalGas> | undefined;
    const finalGas = () => {
      gas ??= settleGas(req, sender, fees);
      return gas;
    };
    await approveByWebhooks(req, async () => webhookOperation(req, pass, await finalGas()));
    return { ...(await finalGas()), pass };
  };

  /** The validity window, the gas limits (the caller's or simulated) and the gas bounds, at the fees read. */
  const settleGas = async (
    req: SigningRequest,
    sender: SenderFacts | undefined,
    fees: ChainFees,
  ): Promise<FinalGas> => {
    const ep = entryPointModule(req.call.chain.entryPointVersion);
    const issued = req.window ?? (await windowFor(req, fees.timestamp));
    const paymasterGas = ep.paymasterGas('SPONSORED');
    const gas = gasBoundsOf({
      ep,
      op: req.userOp,
      paymasterGas,
      sender,
      fields: sizingFields(req.call.chain, req.signatureInSuffix === true),
      bounds: req.call.bounds,
      fees,
    });
    // An inflated preVerificationGas is refused before it costs a simulation.
    assertPreVerificationGas(gas, req.userOp.preVerificationGas);
    const limits = await gasLimits({ ep, req, window: issued, gas, sender });
    const op = finalUserOperation(req.userOp, limits, paymasterGas, sender);
    const estimated = firstMissingLimit(req.userOp) !== undefined;
    const caps =
      req.limitsMayChange === true && estimated && ep.version !== '0.6' ? gasCapsFor(limits, gas) : undefined;
    const final = caps === undefined ? op : { ...op, gasCaps: caps };
    const worstCaseWei = ep.worstCaseCost(final, final.maxFeePerGas);
    assertGasWithinBounds({ gas, limits, caps, worstCaseWei });
    return { ...issued, final, worstCaseWei };
  };

  const approveByWebhooks = (req: SponsorRequest, operation: () => Promise<WebhookOperation>): Promise<void> =>
    approveByDappWebhooks({
      checkWebhooks: deps.checkWebhooks,
      call: req.call,
      webhookData: req.webhookData,
      operation,
    });

  /** What a webhook with includeOperation is shown: the op as it will be signed, where, and at what worst case. */
  const webhookOperation = (req: SponsorRequest, pass: PolicyPass, gas: FinalGas): WebhookOperation => ({
    userOperation: gas.final,
    chainId: req.call.chain.chainId,
    entryPointVersion: req.call.chain.entryPointVersion,
    entryPoint: req.call.chain.entryPoint,
    paymaster: req.call.chain.paymaster,
    dappId: req.call.dappId,
    policyIds: pass.policies.map((p) => p.id),
    worstCaseCostWei: gas.worstCaseWei,
    validUntil: gas.validUntil,
    validAfter: gas.validAfter,
  });

  /** The caller's limits, or simulated ones (docs/reference/json-rpc.md, "Gas limits"). */
  const gasLimits = async (args: {
    ep: EntryPointModule;
    req: SigningRequest;
    window: ValidityWindow;
    gas: OpGasBounds;
    sender: SenderFacts | undefined;
  }): Promise<GasLimits> => {
    const { ep, req } = args;
    const op = req.userOp;
    const given = callerLimits(op, req.calculateGasLimits);
    if (given !== undefined) return given;
    // Simulated with paymaster fields of the final length and the real window (a dummy signature).
    const fields = ep.stub({
      chain: req.call.chain,
      window: args.window,
      authorization: SPONSORED,
      signatureInSuffix: req.signatureInSuffix,
    });
    await req.call.spend.simulation(ep.simulations({ verified: false }));
    const needed = args.gas.preVerificationGasNeeded;
    return ep.estimate({
      chain: req.call.chain,
      op: finalUserOperation(op, op, fields, args.sender),
      fields,
      // Patron's own figure for the op (the chain's L1 data included), or the caller's if higher (within bounds).
      callerPreVerificationGas: maxBig(op.preVerificationGas ?? 0n, needed),
    });
  };

  /** The signed op: rules, webhook, gas, bounds, then the caps reserved and the signature. */
  const sponsorOp = async (req: SigningRequest): Promise<SponsoredUserOperation> => {
    // The op's mode and sender first: a request the solvency guard refuses is logged with them too.
    req.call.report?.({ kind: 'op', mode: 'SPONSORED', sender: req.userOp.sender });
    if (req.signatureInSuffix === true) assertV09(req.call.chain, 'a paymasterSignature suffix');
    deps.assertCanSign(req.call.chain);
    const ready = await prepare(req);
    const { final, pass, worstCaseWei, expiresAt } = ready;
    assertTokenCost({ grant: req.call.grant, worstCaseWei });
    const ep = entryPointModule(req.call.chain.entryPointVersion);
    const window = { validUntil: ready.validUntil, validAfter: ready.validAfter };
    const fields = await issueSignature(tail, {
      chain: req.call.chain,
      ep,
      op: final,
      window,
      expiresAt,
      authorization: SPONSORED,
      signatureInSuffix: req.signatureInSuffix,
      worstCaseWei,
      prefix: req.prefix,
      reserve: (issued) =>
        deps.policies.reserve({
          pass,
          worstCaseWei,
          validUntil: expiresAt,
          window: issued.window,
          paymaster: req.call.chain.paymaster,
          signed: issued,
          // Spent in the reservation's transaction, once the caps took the op: a webhook's denial, a failed
          // simulation, a bound or a cap refused leaves the token usable; of two calls with one token, exactly one
          // is reserved (and signed), the other refused as a replay.
          grant: req.call.grant,
        }),
      report: req.call.report,
    });
    return { ...fields, ...gasLimitsOf(final), ...window };
  };

  const parallel = createParallelSigning({ deps, windowFor, senderOf, rulesRequest, sponsorOp });

  return {
    /**
     * The ERC-7677 stub: the final length, a dummy signature. A block window's bounds are placeholders with every
     * byte non-zero, so the stub's calldata costs at least what the final window's does (its preVerificationGas
     * stays valid); a stub is never valid on chain anyway.
     */
    stubFields: (
      chain: ChainRuntime,
      expiryDuration?: number,
      options: { validityUnit?: ValidityUnit | undefined; signatureInSuffix?: boolean | undefined } = {},
    ): PaymasterFields => {
      if (options.validityUnit === 'blocks') assertV09(chain, 'a window in block numbers');
      if (options.signatureInSuffix === true) assertV09(chain, 'a paymasterSignature suffix');
      return entryPointModule(chain.entryPointVersion).stub({
        chain,
        window:
          // Never valid on chain (a dummy signature): the server's clock gives it the final window's length.
          options.validityUnit === 'blocks'
            ? STUB_BLOCK_WINDOW
            : timeWindow(deps.policy, { nowMs: deps.now() }, expiryDuration),
        authorization: SPONSORED,
        signatureInSuffix: options.signatureInSuffix,
      });
    },

    /** The fee bounds alone (the stub's check: its gas limits are not final yet). */
    async assertFeesWithinBounds(args: {
      call: PaymasterCall;
      userOp: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
    }): Promise<void> {
      assertFeesWithinBounds(args.userOp, await chainFees(deps.fees, args.call.chain), args.call.bounds);
    },

    /** The signed op: rules, webhook, gas, bounds, then the caps reserved and the signature. */
    sponsor: (req: SponsorRequest): Promise<SponsoredUserOperation> => sponsorOp(req),

    /** Parallel signing on v0.9, its two steps (parallelSigning.ts). */
    ...parallel,

    /**
     * The dry run (pm_validateSponsorshipPolicies): every check sponsor makes, the webhook included, and the caps
     * against the counters as they are, without signing or reserving. Throws what sponsor would.
     */
    async validate(req: SponsorRequest): Promise<{ policies: readonly { id: string; name: string }[] }> {
      req.call.report?.({ kind: 'op', mode: 'SPONSORED', sender: req.userOp.sender });
      const { pass, worstCaseWei } = await prepare(req);
      assertTokenCost({ grant: req.call.grant, worstCaseWei });
      await deps.policies.fits({ pass, worstCaseWei });
      return { policies: pass.policies.map((p) => ({ id: p.id, name: p.name })) };
    },

    /**
     * The ERC-7677 stub's policy check, so a wallet learns of a denial before it pays for an estimation: the rules,
     * and the caps read-only with the gas the op already gives (missing limits count as 0: a spent op-count cap, or
     * a cap with nothing left, refuses; the final call reserves the real worst case).
     */
    async precheckPolicies(req: {
      call: PaymasterCall;
      userOp: PartialUserOperation;
      sponsorshipPolicyId: string | undefined;
      attestationUid?: Hex | undefined;
    }): Promise<void> {
      const pass = await deps.policies.check(rulesRequest(req));
      await assertTokenCalls({ grant: req.call.grant, request: pass.request });
      await senderOf(req.call.chain, req.userOp);
      const ep = entryPointModule(req.call.chain.entryPointVersion);
      const known = finalUserOperation(req.userOp, req.userOp, ep.paymasterGas('SPONSORED'));
      // A lower bound of the final worst case (missing limits count as 0): above the token's bound, it is refused now.
      const knownWorstCase = ep.worstCaseCost(known, known.maxFeePerGas);
      assertTokenCost({ grant: req.call.grant, worstCaseWei: knownWorstCase });
      await deps.policies.fits({ pass, worstCaseWei: knownWorstCase });
    },
  };
}

export type SponsorshipService = ReturnType<typeof createSponsorshipService>;
