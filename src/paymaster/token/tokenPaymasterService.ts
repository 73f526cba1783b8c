import type { Address, Hex } from 'viem';
import { erc20Abi } from 'viem';
import type { ChainRuntime } from '../../chain/chainRegistry.js';
import type { FeeOracle } from '../../chain/feeOracle.js';
import { createPermitModeSupport, type PermitModeSupport } from '../../chain/permitModeSupport.js';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';
import {
  OperationFieldError,
  SimulationFailedError,
  TokenPaymentError,
  UnsupportedError,
} from '../../errors/PatronError.js';
import type { PolicyPass } from '../../policies/policyGate.js';
import { assertTokenCalls, assertTokenCost } from '../../sponsorshipTokens/sponsorshipGrant.js';
import type { ChainTokens } from '../../tokens/tokenCatalog.js';
import {
  type Authorization,
  finalUserOperation,
  type GasLimits,
  type PaymasterFields,
  STUB_TOKEN_FIELDS,
  type ValidityWindow,
} from '../entryPoints/entryPointModule.js';
import { entryPointModule } from '../entryPoints/entryPointModules.js';
import type { TokenPermit } from '../entryPoints/paymasterModes.js';
import { signFields } from '../entryPoints/signFields.js';
import { assertGasWithinBounds, assertPreVerificationGas, gasCapsFor } from '../gasBounds.js';
import { maxBig } from '../maxBig.js';
import type { PartialUserOperation } from '../partialUserOperation.js';
import type { PaymasterCall } from '../paymasterCall.js';
import { policyRequest, type SponsoredUserOperation, type SponsorshipPolicy } from '../paymasterRequest.js';
import type { IssuedSignature } from '../requestFacts.js';
import { senderFactsResolver } from '../senderFacts.js';
import type { PaymasterSigner } from '../signer/paymasterSigner.js';
import { assertFeesWithinBounds, chainFees } from '../signingBounds.js';
import { callerLimits, gasBoundsOf, issueSignature } from '../signingPipeline.js';
import { validityWindow } from '../validityWindows.js';
import { approvalInCallData } from './callDataApproval.js';
import { type GuaranteeTerms, guaranteeShortfall, precheckGuarantee } from './guaranteeTerms.js';
import { findToken, prepare, selectTokens, type TokenQuotes, type TokenSelection } from './quotedTokens.js';
import { signedMaximum } from './signedMaximum.js';
import { createSimulationSigner } from './simulationSigner.js';
import {
  approveGuaranteeByWebhooks,
  type GuaranteeDeps,
  guaranteeBeforeSimulation,
  guaranteeDenial,
  reserveGuarantee,
} from './tokenGuarantee.js';
import { assertPermitUsable, type PermitRequest, permitRefusal, requestPermit } from './tokenPermit.js';
import { type TokenRateQuote, tokenRateQuotes } from './tokenRateQuotes.js';

/**
 * The token mode (spec §2.5/§2.7): fee quotes per token, and the final paymaster data of Patron's paymaster in
 * its token mode, on every EntryPoint version through the version's module (entryPoints/): window → limits →
 * bounds → charge simulated → maximum charge → hash → sign → encode. Prices come from the token catalog's snapshot
 * (refreshed in the background), so a quote with the op's own gas limits does no I/O at all. The arithmetic is
 * tokenMath.ts and the module's maxChargeWei; docs/guides/token-mode.md, "Token mode".
 */

/** The part of the token catalog this service reads: a synchronous snapshot per chain. */
export interface TokenSnapshots {
  snapshot(chainId: number): ChainTokens | undefined;
}

export interface TokenPaymasterDeps extends GuaranteeDeps {
  readonly signer: PaymasterSigner;
  readonly crypto: CryptoBackend;
  readonly policy: SponsorshipPolicy;
  readonly now: () => number;
  readonly tokens: TokenSnapshots;
  /** The chains' current fees, for the signing bounds. */
  readonly fees: FeeOracle;
  /** The solvency guard: throws when the chain's paymaster deposit cannot cover what is promised. */
  readonly assertCanSign: (chain: ChainRuntime) => void;
  /** The guard's check and record of a signature being issued, in one synchronous step (throws when held). */
  readonly admitSignature: (op: IssuedSignature) => void;
  /** The guard's claim on the deposit covering this op, where several instances share it (before the reservation). */
  readonly ensureHeadroom?: ((op: IssuedSignature) => Promise<void>) | undefined;
  /**
   * Throws when the chain's paymaster is known not to be staked (ERC-7562: the token mode writes token storage in
   * validation and returns a context, which bundlers accept from a staked paymaster only); from the last stake read,
   * never a chain read of its own.
   */
  readonly assertStaked: (chain: ChainRuntime) => void;
  /** Where the token mode says that its simulations fall back to the signer (simulationSigner.ts). */
  readonly logger?: { warn(obj: object, msg: string): void } | undefined;
  /** Which paymaster deployments have the permit mode (chain/permitModeSupport.ts); one is made when not given. */
  readonly permitModes?: PermitModeSupport | undefined;
}

/** What a quote adds for the approval the client batches into the op after quoting (docs/guides/token-mode.md, "Token mode"). */
export const QUOTE_APPROVAL_CALL_GAS = 50_000n;
export const QUOTE_APPROVAL_CALLDATA_GAS = 6_000n;
/**
 * The token mode's extra validation work on v0.6 (the prefund's transferFrom into a paymaster holding none of the
 * token, or the reads and the callData scan of mode 2), with margin: 38,635 gas more than a sponsored op measured
 * on a deployed SimpleAccount (test/contract.patronPaymaster.token.test.ts), ~11k for heavier tokens.
 */
export const TOKEN_VALIDATION_GAS = 50_000n;
/**
 * v0.6 gives the paymaster's validation and postOp the op's verificationGasLimit (paymasterInAccountGas): a quote
 * adds TOKEN_VALIDATION_GAS to it, and no token op has less than this: a deployed SimpleAccount's mode-1 op needs
 * ~84,045 (the prefund in validation, the refund and payment to an empty fee receiver in postOp).
 */
export const TOKEN_MIN_VERIFICATION_GAS = 100_000n;

export interface QuoteRequest {
  /** The call's scope; its bounds refuse a quote the final data could not be signed for, its token spends nothing. */
  readonly call: PaymasterCall;
  readonly userOp: PartialUserOperation;
  readonly tokens: TokenSelection;
  readonly calculateGasLimits: boolean | undefined;
  readonly expiryDuration: number | undefined;
}

export interface TokenSponsorRequest {
  /** The call's scope; a token-paid op's worst case is the paymaster's too, so its bounds apply as in sponsorship. */
  readonly call: PaymasterCall;
  readonly userOp: PartialUserOperation;
  readonly feeToken: string;
  readonly calculateGasLimits: boolean | undefined;
  readonly expiryDuration: number | undefined;
  /** The client's bundler estimates the gas after this answer: v0.7+ signs caps (gasBounds.ts), as sponsorship does. */
  readonly limitsMayChange?: boolean | undefined;
  /** For the dApp's webhooks when the op needs its guarantee (mode 2): the request's, or {}. */
  readonly webhookData: Record<string, unknown>;
  /** `sponsorshipPolicyId` from the request, for the policy rules of mode 2. */
  readonly sponsorshipPolicyId?: string | undefined;
  /** The EAS attestation uid the context names, for a policy's attestation rule of mode 2. */
  readonly attestationUid?: Hex | undefined;
  /** Whether mode 2 may be signed for this call at all: the dApp's setting and the key (guaranteeTerms.ts). */
  readonly guarantee: GuaranteeTerms;
  /**
   * The account's EIP-2612 permit for the paymaster (ERC-7677 context `permit`): mode 3 when the allowance in place
   * does not cover the maximum (docs/guides/token-mode.md, "First-time users: the permit").
   */
  readonly permit?: TokenPermit | undefined;
}

/** The stub's request for the account's permit (ERC-7677 `pm_getPaymasterStubData` with a fee token). */
export interface PermitStubRequest {
  readonly call: PaymasterCall;
  readonly userOp: PartialUserOperation;
  readonly feeToken: string;
  readonly expiryDuration: number | undefined;
}

export interface TokenSponsoredUserOperation extends SponsoredUserOperation {
  readonly token: Address;
  readonly maxTokenCost: bigint;
  /** Signed in mode 2: the op batches its approval and the dApp guarantees its charge. */
  readonly guaranteed: boolean;
}

const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000';

const SPONSORED = { mode: 'SPONSORED' } as const;

export function createTokenPaymasterService(deps: TokenPaymasterDeps) {
  /** The window by the server's clock and, when the request read the chain's fees, the chain's (validityWindows.ts). */
  const window = (expiryDuration: number | undefined, chainSeconds?: number) =>
    validityWindow({ policy: deps.policy, nowMs: deps.now(), chainSeconds, expiryDuration });
  const sign = (digest: Uint8Array) => deps.signer.sign(digest);
  // The final data's simulation signs with a key of its own, which the simulation alone accepts: the signer (a
  // device, maybe) is asked once per op. Why that holds as much as the signer's signature did: simulationSigner.ts.
  const simulationSigner = createSimulationSigner({ crypto: deps.crypto, now: deps.now, logger: deps.logger });
  const tail = {
    sign,
    keccak: deps.crypto,
    admitSignature: deps.admitSignature,
    ensureHeadroom: deps.ensureHeadroom,
  };
  /** The sender's EIP-7702 delegate and code hash, checked (undefined at once for a deployment): senderFacts.ts. */
  const senderOf = senderFactsResolver({ allowed: deps.policy.eip7702Delegates, reads: deps.chainReads });
  const permitModes = deps.permitModes ?? createPermitModeSupport();

  const chainTokens = (chain: ChainRuntime): ChainTokens => {
    const s = deps.tokens.snapshot(chain.chainId);
    if (s === undefined) throw new UnsupportedError(`ERC20 mode: chain ${chain.chainId} has no fee tokens configured`);
    return s;
  };

  /** The token stub: the final length (mode 3's with a permit), a dummy signature, placeholder price fields. */
  const tokenStub = (chain: ChainRuntime, v: ValidityWindow, token: Address, permit?: TokenPermit): PaymasterFields =>
    entryPointModule(chain.entryPointVersion).stub({
      chain,
      window: v,
      authorization: { mode: 'ERC20', token, ...STUB_TOKEN_FIELDS, permit },
    });

  return {
    /** Pimlico's token quotes (tokenRateQuotes.ts): prices and the postOp gas for the EntryPoint's deployment. */
    rateQuotes: (chain: ChainRuntime, tokens: readonly string[]): TokenRateQuote[] =>
      tokenRateQuotes({ chain, snapshot: deps.tokens.snapshot(chain.chainId), tokens }),

    /** Whether the chain has fee tokens configured at all (usable now or not). */
    hasTokens: (chain: ChainRuntime): boolean => deps.tokens.snapshot(chain.chainId) !== undefined,

    /**
     * The ERC-7677 stub for token mode: the final length, a dummy signature; with a permit (the context's, or the
     * dummy of one the stub asks for), mode 3's length and gas limits.
     */
    stubFields(
      chain: ChainRuntime,
      feeToken: string | undefined,
      expiryDuration?: number,
      permit?: TokenPermit,
    ): PaymasterFields {
      const token = feeToken === undefined ? ZERO_ADDRESS : findToken(chainTokens(chain), feeToken).address;
      return tokenStub(chain, window(expiryDuration), token, permit);
    },

    /** Refuses a permit the chain's token, EntryPoint or deployment cannot use (UnsupportedError, -32030). */
    async assertPermitUsable(chain: ChainRuntime, feeToken: string): Promise<void> {
      const ep = entryPointModule(chain.entryPointVersion);
      await assertPermitUsable({ ep, chain, token: findToken(chainTokens(chain), feeToken), permitModes });
    },

    /** What the stub asks the account to sign instead of a prior approval (tokenPermit.ts), or undefined. */
    async permitRequest(req: PermitStubRequest): Promise<PermitRequest | undefined> {
      const token = findToken(chainTokens(req.call.chain), req.feeToken);
      if (token.permit === undefined) return undefined;
      const ep = entryPointModule(req.call.chain.entryPointVersion);
      // The window by both clocks, as a quote's: the estimate runs at the latest block's time.
      const fees = await chainFees(deps.fees, req.call.chain);
      const v = window(req.expiryDuration, fees.timestamp);
      return requestPermit({
        ep,
        chain: req.call.chain,
        op: req.userOp,
        token,
        sender: await senderOf(req.call.chain, req.userOp),
        window: v,
        bounds: req.call.bounds,
        fees,
        spend: req.call.spend,
        permitModes,
        stub: (permit) =>
          permit === undefined
            ? ep.stub({ chain: req.call.chain, window: v, authorization: SPONSORED })
            : tokenStub(req.call.chain, v, token.address, permit),
      });
    },

    /** The ERC-7677 stub's early word on the dApp's guarantee (guaranteeTerms.ts precheckGuarantee). */
    precheckGuarantee(args: {
      readonly chain: ChainRuntime;
      readonly userOp: PartialUserOperation;
      readonly feeToken: string | undefined;
      readonly guarantee: GuaranteeTerms;
    }): Promise<void> {
      if (args.guarantee.allowed || args.feeToken === undefined) return Promise.resolve();
      return precheckGuarantee({ ...args, token: findToken(chainTokens(args.chain), args.feeToken) });
    },

    /** Fee quotes: one per usable requested token (preferred first), the rest listed as unsupported. */
    async quote(req: QuoteRequest): Promise<TokenQuotes> {
      req.call.report?.({ kind: 'op', mode: 'ERC20', sender: req.userOp.sender });
      const { selected, unsupported } = selectTokens(prepare(chainTokens(req.call.chain)), req.tokens);
      const op = req.userOp;
      if (op.maxFeePerGas === 0n) {
        throw new OperationFieldError('maxFeePerGas', 'must be set to quote a fee in tokens');
      }
      const fees = await chainFees(deps.fees, req.call.chain);
      assertFeesWithinBounds(op, fees, req.call.bounds);
      const ep = entryPointModule(req.call.chain.entryPointVersion);
      const paymasterGas = ep.paymasterGas('ERC20');
      const v = window(req.expiryDuration, fees.timestamp);
      const sender = await senderOf(req.call.chain, op);
      // The client batches approve(paymaster, maxGasFee) into the op after this quote, and the op is then
      // estimated again: the quote covers that approval so that the final maximum stays under it.
      const approves = approvalInCallData(op.callData, req.call.chain.paymaster) !== undefined;
      const approvalGas = approves ? 0n : QUOTE_APPROVAL_CALLDATA_GAS;
      const gas = gasBoundsOf({
        ep,
        op,
        paymasterGas,
        sender,
        fields: tokenStub(req.call.chain, v, ZERO_ADDRESS),
        bounds: req.call.bounds,
        fees,
        extraPreVerificationGas: approvalGas,
      });
      const tokenSized = gas.preVerificationGasNeeded - approvalGas;
      // A quote estimates what the caller leaves out, whatever calculateGasLimits says (it signs nothing).
      const given = callerLimits(op, req.calculateGasLimits === false ? undefined : req.calculateGasLimits);
      let limits: GasLimits;
      if (given !== undefined) {
        limits = given;
      } else if (selected.length === 0) {
        limits = { callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n };
      } else {
        // Measured with the sponsored stub: it needs no token balance, so a user can see a quote before
        // holding the token. The token mode's extra validation and postOp are added below (v0.6) or have limits
        // of their own (v0.7+); preVerificationGas is sized for the token data.
        assertPreVerificationGas(gas, op.preVerificationGas);
        const base = finalUserOperation(op, op, paymasterGas, sender);
        await req.call.spend.simulation(ep.simulations({ verified: false }));
        const estimate = await ep.estimate({
          chain: req.call.chain,
          op: base,
          fields: ep.stub({ chain: req.call.chain, window: v, authorization: SPONSORED }),
          callerPreVerificationGas: op.preVerificationGas,
        });
        limits = {
          callGasLimit: estimate.callGasLimit,
          verificationGasLimit: estimate.verificationGasLimit,
          preVerificationGas: maxBig(estimate.preVerificationGas, tokenSized),
        };
      }
      const quoted: GasLimits = {
        callGasLimit: limits.callGasLimit + (approves ? 0n : QUOTE_APPROVAL_CALL_GAS),
        verificationGasLimit: ep.paymasterInAccountGas
          ? maxBig(limits.verificationGasLimit + TOKEN_VALIDATION_GAS, TOKEN_MIN_VERIFICATION_GAS)
          : limits.verificationGasLimit,
        preVerificationGas: limits.preVerificationGas + (approves ? 0n : QUOTE_APPROVAL_CALLDATA_GAS),
      };
      // v0.7+: the one client that quotes here (@biconomy/abstractjs) then asks for the final data before its bundler
      // estimates, which Patron signs as caps (gasBounds.ts): the quote prices those caps, so that the approval it
      // leads to covers the most the op can cost (affordableCaps.ts shrinks caps an approval cannot pay for).
      const caps = ep.paymasterInAccountGas ? undefined : gasCapsFor(quoted, gas);
      const gasValues = { ...quoted, ...paymasterGas };
      assertGasWithinBounds({
        gas,
        limits: quoted,
        worstCaseWei: ep.worstCaseCost(gasValues, op.maxFeePerGas),
      });
      const priced = caps === undefined ? gasValues : { ...gasValues, gasCaps: caps };
      assertTokenCost({ grant: req.call.grant, worstCaseWei: ep.worstCaseCost(priced, op.maxFeePerGas) });
      return {
        paymasterAddress: req.call.chain.paymaster,
        maxChargeWei: ep.maxChargeWei(priced, op.maxFeePerGas),
        validUntil: v.validUntil,
        tokens: selected,
        unsupportedTokens: unsupported,
      };
    },

    /**
     * Final token-mode data for an op that pays in `feeToken`. The op is always simulated with a valid paymaster
     * signature (at 1 wei, maximum charge 1 unit; the simulation's own key: simulationSigner.ts), so that the
     * paymaster's validation and postOp run, and the version's charge probe (ChargeProbe) tells whether the charge
     * was collected, so an op whose charge would fail (an approval of the wrong token, a balance spent by the call)
     * is refused here instead of costing the deposit.
     */
    async sponsor(req: TokenSponsorRequest): Promise<TokenSponsoredUserOperation> {
      req.call.report?.({ kind: 'op', mode: 'ERC20', sender: req.userOp.sender });
      deps.assertCanSign(req.call.chain);
      deps.assertStaked(req.call.chain);
      const chain = req.call.chain;
      const token = findToken(chainTokens(chain), req.feeToken);
      const op = req.userOp;
      const fees = await chainFees(deps.fees, chain);
      assertFeesWithinBounds(op, fees, req.call.bounds);
      // The token's contracts bound before any simulation, decoded as a policy's allowlist decodes.
      if (req.call.grant?.claims.contracts !== undefined) {
        await assertTokenCalls({ grant: req.call.grant, request: policyRequest(req, deps) });
      }
      const ep = entryPointModule(chain.entryPointVersion);
      const permit = req.permit;
      if (permit !== undefined) await assertPermitUsable({ ep, chain, token, permitModes });
      const paymasterGas = ep.paymasterGas(permit === undefined ? 'ERC20' : 'ERC20_PERMIT');
      const v = window(req.expiryDuration, fees.timestamp);
      const given = callerLimits(op, req.calculateGasLimits);
      const sender = await senderOf(chain, op);
      const stub = tokenStub(chain, v, token.address, permit);
      const gas = gasBoundsOf({ ep, op, paymasterGas, sender, fields: stub, bounds: req.call.bounds, fees });
      // The caller's own limits are final: out of bounds, the op is refused before it costs a simulation.
      if (given !== undefined) {
        const known = finalUserOperation(op, given, paymasterGas);
        assertGasWithinBounds({ gas, limits: given, worstCaseWei: ep.worstCaseCost(known, op.maxFeePerGas) });
      } else {
        assertPreVerificationGas(gas, op.preVerificationGas);
      }
      const price = { exchangeRate: token.exchangeRate, priceMarkup: token.priceMarkup };
      const approved = approvalInCallData(op.callData, chain.paymaster);
      const erc20 = { address: token.address, abi: erc20Abi } as const;
      // The allowance already given decides the mode (mode 1 when it covers the maximum); read beside the rest.
      const allowance = chain.client.readContract({
        ...erc20,
        functionName: 'allowance',
        args: [op.sender, chain.paymaster],
      });
      allowance.catch(() => undefined);
      const named = { symbol: token.symbol, paymaster: chain.paymaster };
      const denial = (err: unknown) => guaranteeDenial(err, named);
      // Before the simulation: whether the op may get mode 2 (the dApp's setting, the key, its policy rules), refused
      // at once where the account has no allowance at all (mode 1 is then impossible).
      const terms = req.guarantee;
      // A permit prefunds: no guarantee is asked (mode 3 or, with the allowance in place, mode 1).
      const { mayGuarantee, refused, rules } = await guaranteeBeforeSimulation({
        deps,
        req,
        approved: permit === undefined ? approved : undefined,
        allowance,
        named,
      });
      // The simulation signs the mode the op will most likely get: 3 with a permit (which the simulation executes),
      // 2 with a batched approval it may guarantee (which prefunds anyway when an allowance is there), 1 otherwise.
      const simulationAuth: Authorization = {
        mode: 'ERC20',
        token: token.address,
        ...price,
        maxTokenCost: 1n,
        guaranteed: mayGuarantee,
        permit,
      };
      const probe = ep.chargeProbe({ chain, sender: op.sender, token: token.address });
      // The simulation's own key where this paymaster is known to accept it under the override (once per process).
      const simulation = await simulationSigner.forChain(chain);
      await req.call.spend.simulation(ep.simulations({ verified: true }));
      const [estimate, balance, onChainAllowance] = await Promise.all([
        ep
          .estimate({
            chain,
            op: finalUserOperation(op, op, paymasterGas, sender),
            fields: stub,
            callerPreVerificationGas: maxBig(op.preVerificationGas ?? 0n, gas.preVerificationGasNeeded),
            simulationFields: (simulated) =>
              signFields(ep, {
                chain,
                op: simulated,
                window: v,
                authorization: simulationAuth,
                sign: simulation?.sign ?? sign,
                keccak: deps.crypto,
              }),
            after: probe.after,
            stateDiff: simulation === undefined ? probe.stateDiff : simulation.stateDiff(probe.stateDiff),
          })
          .catch((err: unknown) => {
            throw permitRefusal(err, { token, sender: op.sender, paymaster: chain.paymaster, permit });
          }),
        chain.client.readContract({ ...erc20, functionName: 'balanceOf', args: [op.sender] }),
        allowance,
      ]);
      if (estimate.after?.success !== true || !probe.collected(estimate.after.result)) {
        // v0.6's paymaster records a charge it could not collect, which the account must settle first.
        const unpaid = ep.version === '0.6' ? ', and settle any unpaid charge' : '';
        throw new SimulationFailedError(
          `Simulation failed: the ${token.symbol} charge of this operation could not be collected; approve the paymaster ${chain.paymaster} for ${token.symbol} in the operation (or before it)${unpaid}`,
          'token charge failed',
        );
      }
      const limits: GasLimits = given ?? {
        callGasLimit: estimate.callGasLimit,
        verificationGasLimit: ep.paymasterInAccountGas
          ? maxBig(estimate.verificationGasLimit, TOKEN_MIN_VERIFICATION_GAS)
          : estimate.verificationGasLimit,
        preVerificationGas: estimate.preVerificationGas,
      };
      const exact = finalUserOperation(op, limits, paymasterGas, sender);
      const { final, maxTokenCost } = signedMaximum({
        ep,
        exact,
        caps: req.limitsMayChange === true && given === undefined ? gasCapsFor(limits, gas) : undefined,
        price,
        // The better of the two: the approval batched in the op (where it may be guaranteed), or the permit it
        // carries, and the allowance already given. Without either, only an allowance covering the op's maximum.
        ...availableFor({
          permit,
          approved: mayGuarantee ? approved : undefined,
          onChainAllowance,
          symbol: token.symbol,
        }),
        expectedGas: estimate.gasUsed,
        symbol: token.symbol,
        shortfallRefused: terms.allowed
          ? undefined
          : (available, maximum) => refused ?? guaranteeShortfall({ ...named, rule: terms.rule, available, maximum }),
      });
      const worstCaseWei = ep.worstCaseCost(final, op.maxFeePerGas);
      assertGasWithinBounds({ gas, limits, caps: final.gasCaps, worstCaseWei });
      if (balance < maxTokenCost) {
        throw new TokenPaymentError(
          `The account holds ${balance} base units of ${token.symbol}, below the maximum charge of ${maxTokenCost}`,
        );
      }
      // Mode 1 when the allowance already given covers the maximum (prefunded: the user's own money, no gate); else
      // mode 3 when the op carries a permit (signedMaximum held it to the maximum), prefunded after it; otherwise
      // only the batched approval made the op payable (signedMaximum refuses anything else): mode 2.
      const permitted = permit !== undefined && onChainAllowance < maxTokenCost ? permit : undefined;
      const guaranteed = permitted === undefined && onChainAllowance < maxTokenCost;
      let pass: PolicyPass | undefined;
      if (guaranteed) {
        if (rules === undefined) throw new TokenPaymentError(`No ${token.symbol} approval for the paymaster`);
        if ('denied' in rules) throw denial(rules.denied);
        pass = rules.pass;
        const window = { validUntil: v.validUntil, validAfter: v.validAfter };
        await approveGuaranteeByWebhooks({ deps, req, pass, final, worstCaseWei, window }).catch((err: unknown) => {
          throw denial(err);
        });
      }
      const authorization: Authorization = {
        mode: 'ERC20',
        token: token.address,
        ...price,
        maxTokenCost,
        guaranteed,
        permit: permitted,
      };
      // As the sponsored mode: the token's cost bound on the worst case; its jti is spent with the op's ledger row
      // (the guarantee's reservation, or a prefunded op's record), after every refusal the request can meet.
      assertTokenCost({ grant: req.call.grant, worstCaseWei });
      const fields = await issueSignature(tail, {
        chain,
        ep,
        op: final,
        window: v,
        expiresAt: v.validUntil,
        authorization,
        worstCaseWei,
        reserve: (issued) => {
          // A prefunded op (mode 1): its row says which dApp signed it and spends the request's token.
          if (pass === undefined) {
            return deps.policies.recordPrefunded({
              request: policyRequest(req, deps),
              worstCaseWei,
              signed: issued,
              validUntil: issued.validUntil,
              window: issued.window,
              paymaster: issued.paymaster,
              grant: req.call.grant,
            });
          }
          // signedMaximum refuses a shortfall unless the terms allow the guarantee: mode 2 implies they do.
          if (!terms.allowed)
            throw new Error('token mode: a guarantee reached signing for a dApp that does not allow it');
          return reserveGuarantee({
            deps,
            pass,
            issued,
            cap: terms.cap,
            nowMs: deps.now(),
            token: named,
            grant: req.call.grant,
          }).then(
            (decision) => ({ ...decision, guarantee: true }),
            (err: unknown) => {
              throw denial(err);
            },
          );
        },
        report: req.call.report,
      });
      return { ...fields, ...limits, ...v, token: token.address, maxTokenCost, guaranteed };
    },
  };
}

/**
 * What the account allows the paymaster for signedMaximum: the better of the batched approval and the allowance in
 * place; with a permit, the better of the permit's value and the allowance, and a maximum above it is refused rather
 * than signed down to it (the permit was asked for at the maximum: tokenPermit.ts).
 */
function availableFor(args: {
  readonly permit: TokenPermit | undefined;
  readonly approved: bigint | undefined;
  readonly onChainAllowance: bigint;
  readonly symbol: string;
}): Pick<Parameters<typeof signedMaximum>[0], 'available' | 'refuseBelowMaximum'> {
  const { permit, approved, onChainAllowance } = args;
  if (permit === undefined) {
    return { available: approved !== undefined && approved > onChainAllowance ? approved : onChainAllowance };
  }
  return {
    available: maxBig(permit.value, onChainAllowance),
    refuseBelowMaximum: (maximum) =>
      new TokenPaymentError(
        `The ${args.symbol} permit allows ${permit.value} base units, below this operation's maximum charge of ${maximum}: sign the permitTypedData a new pm_getPaymasterStubData returns for this operation`,
      ),
  };
}

export type TokenPaymasterService = ReturnType<typeof createTokenPaymasterService>;
