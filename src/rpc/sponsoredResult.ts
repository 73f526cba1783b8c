import { PolicyDeniedError, SponsorshipDeniedError, ValidationError } from '../errors/PatronError.js';
import type { SponsoredUserOperation } from '../paymaster/sponsorshipService.js';
import { parseTokenInfo } from '../paymaster/tokenInfo.js';
import type { TokenQuotes } from '../paymaster/tokenPaymasterService.js';
import type { ModeObject, PartialUserOperation } from '../paymaster/userOperationInput.js';
import type { RpcContext } from './rpcMethod.js';

/**
 * The paymaster data on the wire (spec §2.6 and clients.md): `mode` *and* `MODE` (every Biconomy SDK reads
 * lower-case `mode`, the spec writes `MODE`), preVerificationGas as a decimal string, the two limits as
 * integers (numbers while they are exact in a double, decimal strings beyond). The token mode's final data
 * has the same shape with mode ERC20.
 */
export function sponsoredResult(s: SponsoredUserOperation, mode: 'SPONSORED' | 'ERC20' = 'SPONSORED') {
  return {
    mode,
    MODE: mode,
    paymasterAndData: s.paymasterAndData,
    preVerificationGas: s.preVerificationGas.toString(10),
    verificationGasLimit: integer(s.verificationGasLimit),
    callGasLimit: integer(s.callGasLimit),
  };
}

/** Spec §2.7: the token quotes, with `mode` and `MODE`. */
export function quotesResult(q: TokenQuotes) {
  return {
    mode: 'ERC20' as const,
    MODE: 'ERC20' as const,
    paymasterAddress: q.paymasterAddress,
    feeQuotes: q.feeQuotes,
    unsupportedTokens: q.unsupportedTokens,
  };
}

function integer(n: bigint): number | string {
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString(10);
}

async function sponsored(userOp: PartialUserOperation, mode: ModeObject, ctx: RpcContext) {
  const s = await ctx.sponsorship.sponsor({
    dappId: ctx.dapp.id,
    chain: ctx.chain,
    userOp,
    calculateGasLimits: mode.calculateGasLimits,
    expiryDuration: mode.expiryDuration,
    webhookData: mode.webhookData,
    sponsorshipPolicyId: mode.sponsorshipPolicyId,
    bounds: ctx.bounds,
    spend: ctx.spend,
    report: ctx.report,
  });
  return sponsoredResult(s);
}

async function quotes(userOp: PartialUserOperation, mode: ModeObject, ctx: RpcContext) {
  const info = parseTokenInfo(mode.tokenInfo);
  const q = await ctx.tokens.quote({
    chain: ctx.chain,
    userOp,
    tokens: { preferredToken: info.preferredToken, tokenList: info.tokenList },
    calculateGasLimits: mode.calculateGasLimits,
    expiryDuration: mode.expiryDuration,
    bounds: ctx.bounds,
    report: ctx.report,
    spend: ctx.spend,
  });
  return quotesResult(q);
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
    if (!refused || ctx.tokens.hasTokens(ctx.chain) === false) throw err;
    return quotes(userOp, mode, ctx);
  }
}

/**
 * pm_sponsorUserOperation (Biconomy dialect): the final paymasterAndData of either mode; for ERC20 the token
 * is `tokenInfo.feeTokenAddress`.
 */
export async function sponsorUserOperation(userOp: PartialUserOperation, mode: ModeObject, ctx: RpcContext) {
  if (mode.mode !== 'ERC20') return sponsored(userOp, mode, ctx);
  return sponsoredResult(await tokenPaid(userOp, mode, ctx), 'ERC20');
}

/** The token mode's final data; `calculateGasLimits` is the caller's (ERC-7677 passes false). */
export function tokenPaid(userOp: PartialUserOperation, mode: ModeObject, ctx: RpcContext) {
  const info = parseTokenInfo(mode.tokenInfo);
  const feeToken = info.feeTokenAddress ?? info.preferredToken;
  if (feeToken === undefined) {
    throw new ValidationError('Invalid params: params[1].tokenInfo.feeTokenAddress: required in ERC20 mode');
  }
  return ctx.tokens.sponsor({
    chain: ctx.chain,
    userOp,
    feeToken,
    calculateGasLimits: mode.calculateGasLimits,
    expiryDuration: mode.expiryDuration,
    bounds: ctx.bounds,
    report: ctx.report,
    spend: ctx.spend,
  });
}
