import type { ChainRuntime } from '../../chain/chainRegistry.js';
import type { FeeOracle } from '../../chain/feeOracle.js';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';
import { OperationFieldError } from '../../errors/PatronError.js';
import type { PolicyGate, PolicyRequest } from '../../policies/policyGate.js';
import { assertTokenCalls, assertTokenCost } from '../../sponsorshipTokens/sponsorshipGrant.js';
import { finalUserOperation, gasLimitsOf, type SenderFacts } from '../entryPoints/entryPointModule.js';
import { entryPointModule } from '../entryPoints/entryPointModules.js';
import { DUMMY_PAYMASTER_SIGNATURE } from '../entryPoints/v07/patronPaymasterV07.js';
import { assertGasWithinBounds } from '../gasBounds.js';
import type { PartialUserOperation } from '../partialUserOperation.js';
import type { SponsoredUserOperation } from '../paymasterRequest.js';
import { assertFeesWithinBounds, chainFees } from '../signingBounds.js';
import { gasBoundsOf } from '../signingPipeline.js';
import {
  checkIssuedWindow,
  currentBlockNumber,
  type IssuedWindow,
  isBlockWindow,
  secondsPerBlock,
  type WindowPolicy,
} from '../validityWindows.js';
import { readCommitment } from './parallelSigningCommitment.js';
import {
  assertV09,
  type FinalizeRequest,
  firstMissingLimit,
  type SigningRequest,
  type SponsorRequest,
} from './sponsorRequest.js';

/**
 * EntryPoint v0.9's opt-in parallel signing (docs/reference/json-rpc.md, "Parallel signing on v0.9"): its userOpHash leaves the
 * paymasterSignature suffix out, so a commit fixes every paymaster byte but the signature, the account signs, and
 * a finalize signs with the sponsored mode's whole pipeline. The sponsorship service lends its steps (the window,
 * the EIP-7702 delegate, the signing pipeline) rather than this file repeating them.
 */
export interface ParallelSigningArgs {
  readonly deps: {
    readonly crypto: CryptoBackend;
    readonly policy: WindowPolicy;
    readonly now: () => number;
    readonly fees: FeeOracle;
    readonly assertCanSign: (chain: ChainRuntime) => void;
    readonly policies: PolicyGate;
  };
  /** The window a request asks for (seconds, or block numbers), by the server's and the chain's clocks. */
  readonly windowFor: (req: SponsorRequest, chainSeconds: number | undefined) => Promise<IssuedWindow>;
  /** What the sender is on chain: its EIP-7702 delegate, its code hash (undefined at once for a deployment). */
  readonly senderOf: (chain: ChainRuntime, op: PartialUserOperation) => Promise<SenderFacts> | undefined;
  /** The policy rules' view of a request (its sender's account kind asked only when an allowlist needs it). */
  readonly rulesRequest: (req: SponsorRequest) => PolicyRequest;
  /** The sponsored mode's signing pipeline. */
  readonly sponsorOp: (req: SigningRequest) => Promise<SponsoredUserOperation>;
}

const SPONSORED = { mode: 'SPONSORED' } as const;

export function createParallelSigning(args: ParallelSigningArgs) {
  return {
    /**
     * Parallel signing, first step (v0.9): the cheap checks (solvency, fee bounds, policy rules and caps read-only,
     * the EIP-7702 delegate, gas bounds) and the final paymasterData over the op's own gas limits, with a
     * placeholder in the signature suffix. Nothing is signed or reserved: the account signs the userOpHash, which
     * the suffix does not enter, while Patron finalizes.
     */
    async commit(req: SponsorRequest): Promise<SponsoredUserOperation> {
      assertV09(req.call.chain, 'signingPhase');
      // Reported before the solvency check, so a refused request is logged with its mode and sender.
      req.call.report?.({ kind: 'op', mode: 'SPONSORED', sender: req.userOp.sender });
      args.deps.assertCanSign(req.call.chain);
      const fees = await chainFees(args.deps.fees, req.call.chain);
      assertFeesWithinBounds(req.userOp, fees, req.call.bounds);
      const missing = firstMissingLimit(req.userOp);
      if (missing !== undefined) {
        throw new OperationFieldError(missing, 'required with signingPhase "commit" (estimate on the stub first)');
      }
      const pass = await args.deps.policies.check(args.rulesRequest(req));
      await assertTokenCalls({ grant: req.call.grant, request: pass.request });
      const sender = await args.senderOf(req.call.chain, req.userOp);
      const ep = entryPointModule(req.call.chain.entryPointVersion);
      const window = await args.windowFor(req, fees.timestamp);
      const paymasterGas = ep.paymasterGas('SPONSORED');
      const final = finalUserOperation(req.userOp, req.userOp, paymasterGas, sender);
      const fields = ep.stub({ chain: req.call.chain, window, authorization: SPONSORED, signatureInSuffix: true });
      const gas = gasBoundsOf({ ep, op: req.userOp, paymasterGas, sender, fields, bounds: req.call.bounds, fees });
      const worstCaseWei = ep.worstCaseCost(final, final.maxFeePerGas);
      assertGasWithinBounds({ gas, limits: final, worstCaseWei });
      // A commit signs nothing: the token is checked here and spent by the finalize that signs.
      assertTokenCost({ grant: req.call.grant, worstCaseWei });
      await args.deps.policies.fits({ pass, worstCaseWei });
      // The signing step with a placeholder for the signer: the prefix comes out of the one encoder finalize uses.
      const committed = ep
        .signing({
          chain: req.call.chain,
          op: final,
          window,
          authorization: SPONSORED,
          keccak: args.deps.crypto,
          signatureInSuffix: true,
        })
        .fields(DUMMY_PAYMASTER_SIGNATURE);
      return { ...committed, ...gasLimitsOf(final), validUntil: window.validUntil, validAfter: window.validAfter };
    },

    /**
     * Parallel signing, second step (v0.9): the op comes back with the commit's paymaster fields; they must be
     * Patron's, over the op's gas, in a window the policy still allows (parallelSigningCommitment.ts). Then the
     * whole sponsor pipeline runs on that window, and the answer's prefix is the commit's byte for byte.
     */
    async finalize(req: FinalizeRequest): Promise<SponsoredUserOperation> {
      assertV09(req.call.chain, 'signingPhase');
      const ep = entryPointModule(req.call.chain.entryPointVersion);
      const commitment = readCommitment({
        chain: req.call.chain,
        committed: req.committed,
        op: req.userOp,
        paymasterGas: ep.paymasterGas('SPONSORED'),
      });
      const head = isBlockWindow(commitment.window) ? await currentBlockNumber(req.call.chain.request) : undefined;
      const window = checkIssuedWindow({
        window: commitment.window,
        policy: args.deps.policy,
        nowMs: args.deps.now(),
        chainSeconds: (await chainFees(args.deps.fees, req.call.chain)).timestamp,
        currentBlock: head,
        secondsPerBlock: secondsPerBlock(req.call.chain),
      });
      return args.sponsorOp({
        ...req,
        calculateGasLimits: false,
        limitsMayChange: false,
        signatureInSuffix: true,
        window,
        prefix: commitment.prefix,
      });
    },
  };
}
