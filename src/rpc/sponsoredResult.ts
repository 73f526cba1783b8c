import { PolicyDeniedError, SponsorshipDeniedError, ValidationError } from '../errors/PatronError.js';
import type { TokenPermit } from '../paymaster/entryPoints/paymasterModes.js';
import type { PartialUserOperation } from '../paymaster/partialUserOperation.js';
import { type GuaranteeTerms, guaranteeTermsOf } from '../paymaster/token/guaranteeTerms.js';
import { feeTokenOf } from './feeToken.js';
import type { RpcContext } from './rpcMethod.js';
import { entryPointChain, urlChain } from './servedChain.js';
import { biconomyQuotesResult } from './wire/biconomyQuotes.js';
import { biconomyPaymasterResult } from './wire/biconomyResult.js';
import { erc7677Fields, gasLimitFields } from './wire/erc7677Result.js';
import type { ModeObject } from './wire/modeObject.js';
import type { PimlicoContext } from './wire/pimlico.js';
import { parseTokenInfo } from './wire/tokenInfo.js';

async function sponsored(userOp: PartialUserOperation, mode: ModeObject, ctx: RpcContext) {
  const chain = urlChain(ctx);
  const s = await ctx.sponsorship.sponsor({
    dappId: ctx.dapp.id,
    chain,
    userOp,
    calculateGasLimits: mode.calculateGasLimits,
    expiryDuration: mode.expiryDuration,
    webhookData: mode.webhookData,
    sponsorshipPolicyId: mode.sponsorshipPolicyId,
    attestationUid: mode.attestationUid,
    bounds: ctx.bounds,
    spend: ctx.spend,
    report: ctx.report,
    token: ctx.token,
  });
  return biconomyPaymasterResult(s, 'SPONSORED', chain.entryPointVersion);
}

/**
 * Pimlico's pm_sponsorUserOperation (permissionless `sponsorUserOperation`): the EntryPoint it names, the limits
 * the op leaves out computed, the answer in hex with v0.6's paymasterAndData or v0.7's paymaster fields. A
 * `token` in the context is the ERC20 mode in that token, with the context's policy, window and webhookData.
 */
export async function pimlicoSponsorUserOperation(
  userOp: PartialUserOperation,
  entryPoint: string,
  context: PimlicoContext,
  ctx: RpcContext,
) {
  const chain = entryPointChain(ctx, entryPoint, 'params[1]');
  if (context?.token !== undefined) {
    const mode: ModeObject & { readonly permit?: TokenPermit | undefined } = {
      mode: 'ERC20',
      token: context.token,
      calculateGasLimits: undefined,
      expiryDuration: context.validForSeconds,
      webhookData: context.webhookData ?? {},
      tokenInfo: undefined,
      sponsorshipPolicyId: context.sponsorshipPolicyId,
      attestationUid: context.attestationUid,
      sponsorshipToken: context.sponsorshipToken,
      permit: context.permit,
    };
    const paid = await tokenPaid(userOp, mode, { ...ctx, chain }, false, 'params[2]');
    return { ...gasLimitFields(paid), ...erc7677Fields(paid, chain.entryPointVersion) };
  }
  const s = await ctx.sponsorship.sponsor({
    dappId: ctx.dapp.id,
    chain,
    userOp,
    calculateGasLimits: undefined,
    expiryDuration: context?.validForSeconds,
    webhookData: context?.webhookData ?? {},
    sponsorshipPolicyId: context?.sponsorshipPolicyId,
    attestationUid: context?.attestationUid,
    bounds: ctx.bounds,
    spend: ctx.spend,
    report: ctx.report,
    token: ctx.token,
  });
  return { ...gasLimitFields(s), ...erc7677Fields(s, chain.entryPointVersion) };
}

async function quotes(userOp: PartialUserOperation, mode: ModeObject, ctx: RpcContext) {
  const info = parseTokenInfo(mode.tokenInfo);
  const q = await ctx.tokens.quote({
    chain: urlChain(ctx),
    userOp,
    // Pimlico's `token` is the token the user will pay in: quoted first, like preferredToken.
    tokens: { preferredToken: mode.token ?? info.preferredToken, tokenList: info.tokenList },
    calculateGasLimits: mode.calculateGasLimits,
    expiryDuration: mode.expiryDuration,
    bounds: ctx.bounds,
    report: ctx.report,
    token: ctx.token,
    spend: ctx.spend,
  });
  return biconomyQuotesResult(q);
}

/**
 * pm_getFeeQuoteOrData (spec §4.2): SPONSORED → paymaster data; ERC20 → fee quotes; no mode → sponsorship
 * first and, when the dApp's conditions refuse it (-32010, or a policy: -32012), token quotes instead (Biconomy's
 * documented behaviour). A webhook that fails (-32011) is not a refusal and is reported as such.
 */
export async function feeQuoteOrData(userOp: PartialUserOperation, mode: ModeObject, ctx: RpcContext) {
  if (mode.mode === 'ERC20') return quotes(userOp, mode, ctx);
  if (mode.mode === 'SPONSORED') return sponsored(userOp, mode, ctx);
  try {
    return await sponsored(userOp, mode, ctx);
  } catch (err) {
    const refused = err instanceof SponsorshipDeniedError || err instanceof PolicyDeniedError;
    if (!refused || ctx.tokens.hasTokens(urlChain(ctx)) === false) throw err;
    return quotes(userOp, mode, ctx);
  }
}

/**
 * pm_sponsorUserOperation (Biconomy dialect): the final paymasterAndData of either mode; for ERC20 the token
 * is `tokenInfo.feeTokenAddress`.
 */
export async function sponsorUserOperation(userOp: PartialUserOperation, mode: ModeObject, ctx: RpcContext) {
  if (mode.mode !== 'ERC20') return sponsored(userOp, mode, ctx);
  const chain = urlChain(ctx);
  return biconomyPaymasterResult(await tokenPaid(userOp, mode, { ...ctx, chain }), 'ERC20', chain.entryPointVersion);
}

/**
 * The token mode's final data; `calculateGasLimits` is the caller's (ERC-7677 passes false), `limitsMayChange`
 * as sponsorship's (an ERC-7677 data call before the bundler's estimate).
 */
export function tokenPaid(
  userOp: PartialUserOperation,
  mode: ModeObject & { readonly permit?: TokenPermit | undefined },
  ctx: RpcContext,
  limitsMayChange = false,
  where = 'params[1]',
) {
  const feeToken = feeTokenOf(mode, where);
  if (feeToken === undefined) {
    throw new ValidationError(
      `Invalid params: ${where}.tokenInfo.feeTokenAddress: required in ERC20 mode (or ${where}.token)`,
    );
  }
  return ctx.tokens.sponsor({
    dappId: ctx.dapp.id,
    chain: ctx.chain,
    // Asked only when the op needs the dApp's guarantee (it batches its approval: mode 2).
    webhookData: mode.webhookData ?? {},
    sponsorshipPolicyId: mode.sponsorshipPolicyId,
    attestationUid: mode.attestationUid,
    userOp,
    feeToken,
    calculateGasLimits: mode.calculateGasLimits,
    expiryDuration: mode.expiryDuration,
    bounds: ctx.bounds,
    report: ctx.report,
    token: ctx.token,
    spend: ctx.spend,
    limitsMayChange,
    guarantee: guaranteeTerms(ctx),
    permit: mode.permit,
  });
}

/** Mode 2 is sponsorship: only for a dApp that turned guarantees on, through a key that may ask for sponsorship. */
export const guaranteeTerms = (ctx: RpcContext): GuaranteeTerms =>
  guaranteeTermsOf({ guarantees: ctx.dapp.tokenGuarantees, methods: ctx.dapp.restrictions.rules?.methods });
