import { PolicyDeniedError, SponsorshipDeniedError } from '../../errors/PatronError.js';
import type { PartialUserOperation } from '../../paymaster/partialUserOperation.js';
import { callOn, type PaymasterCall } from '../../paymaster/paymasterCall.js';
import type { RpcContext } from '../rpcMethod.js';
import { urlChain } from '../servedChain.js';
import { biconomyQuotesResult } from '../wire/biconomyQuotes.js';
import { biconomyPaymasterResult } from '../wire/biconomyResult.js';
import type { ModeObject } from '../wire/modeObject.js';
import { parseTokenInfo } from '../wire/tokenInfo.js';
import { tokenPaid } from './tokenPaid.js';

/**
 * Biconomy's dialect (spec §4.2, and what Biconomy's SDKs send): `[userOperation, modeObject]`, served on the URL's
 * EntryPoint version (rpc/servedChain.ts urlChain), answered with `mode`/`MODE` and decimal quantities.
 */

export type BiconomyPaymasterResult = ReturnType<typeof biconomyPaymasterResult>;
export type BiconomyQuotesResult = ReturnType<typeof biconomyQuotesResult>;

async function sponsored(
  userOp: PartialUserOperation,
  mode: ModeObject,
  call: PaymasterCall,
  ctx: RpcContext,
): Promise<BiconomyPaymasterResult> {
  const s = await ctx.sponsorship.sponsor({
    call,
    userOp,
    calculateGasLimits: mode.calculateGasLimits,
    expiryDuration: mode.expiryDuration,
    webhookData: mode.webhookData,
    sponsorshipPolicyId: mode.sponsorshipPolicyId,
    attestationUid: mode.attestationUid,
  });
  return biconomyPaymasterResult(s, 'SPONSORED', call.chain.entryPointVersion);
}

async function quotes(
  userOp: PartialUserOperation,
  mode: ModeObject,
  call: PaymasterCall,
  ctx: RpcContext,
): Promise<BiconomyQuotesResult> {
  const info = parseTokenInfo(mode.tokenInfo);
  const q = await ctx.tokenPaymaster.quote({
    call,
    userOp,
    // Pimlico's `token` is the token the user will pay in: quoted first, like preferredToken.
    tokens: { preferredToken: mode.token ?? info.preferredToken, tokenList: info.tokenList },
    calculateGasLimits: mode.calculateGasLimits,
    expiryDuration: mode.expiryDuration,
  });
  return biconomyQuotesResult(q);
}

/**
 * pm_getFeeQuoteOrData (spec §4.2): SPONSORED → paymaster data; ERC20 → fee quotes; no mode → sponsorship
 * first and, when the dApp's conditions refuse it (-32010, or a policy: -32012), token quotes instead (Biconomy's
 * documented behaviour). A webhook that fails (-32011) is not a refusal and is reported as such.
 */
export async function feeQuoteOrData(
  userOp: PartialUserOperation,
  mode: ModeObject,
  scope: PaymasterCall,
  ctx: RpcContext,
): Promise<BiconomyPaymasterResult | BiconomyQuotesResult> {
  const call = callOn(scope, urlChain(ctx));
  if (mode.mode === 'ERC20') return quotes(userOp, mode, call, ctx);
  if (mode.mode === 'SPONSORED') return sponsored(userOp, mode, call, ctx);
  try {
    return await sponsored(userOp, mode, call, ctx);
  } catch (err) {
    const refused = err instanceof SponsorshipDeniedError || err instanceof PolicyDeniedError;
    if (!refused || ctx.tokenPaymaster.hasTokens(call.chain) === false) throw err;
    return quotes(userOp, mode, call, ctx);
  }
}

/**
 * pm_sponsorUserOperation with a mode object: the final paymasterAndData of either mode; for ERC20 the token is
 * `tokenInfo.feeTokenAddress`.
 */
export async function sponsorUserOperation(
  userOp: PartialUserOperation,
  mode: ModeObject,
  scope: PaymasterCall,
  ctx: RpcContext,
): Promise<BiconomyPaymasterResult> {
  const call = callOn(scope, urlChain(ctx));
  if (mode.mode !== 'ERC20') return sponsored(userOp, mode, call, ctx);
  const paid = await tokenPaid({ call, ctx, userOp, mode, where: 'params[1]' });
  return biconomyPaymasterResult(paid, 'ERC20', call.chain.entryPointVersion);
}
