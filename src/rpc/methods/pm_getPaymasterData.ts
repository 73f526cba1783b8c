import { defineRpcMethod } from '../rpcMethod.js';
import { tokenPaid } from '../sponsoredResult.js';
import { assertErc7677Target, erc7677Params } from './erc7677Params.js';

/**
 * ERC-7677 final data for EntryPoint v0.6: `{ paymasterAndData }`, signed over the op's own gas values. The
 * wallet estimated them on the stub, so they are never recomputed here (a missing one is an error).
 */
export const pm_getPaymasterData = defineRpcMethod({
  method: 'pm_getPaymasterData',
  params: erc7677Params,
  async handler(params, ctx) {
    const mode = assertErc7677Target(params, ctx);
    if (mode.mode === 'ERC20') {
      const paid = await tokenPaid(params[0], { ...mode, calculateGasLimits: false }, ctx);
      return { paymasterAndData: paid.paymasterAndData };
    }
    const sponsored = await ctx.sponsorship.sponsor({
      dappId: ctx.dapp.id,
      chain: ctx.chain,
      userOp: params[0],
      calculateGasLimits: false,
      expiryDuration: mode.expiryDuration,
      webhookData: mode.webhookData,
      sponsorshipPolicyId: mode.sponsorshipPolicyId,
      bounds: ctx.bounds,
      spend: ctx.spend,
      report: ctx.report,
    });
    return { paymasterAndData: sponsored.paymasterAndData };
  },
});
