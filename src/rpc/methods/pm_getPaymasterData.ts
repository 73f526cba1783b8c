import { erc7677Fields, gasLimitFields } from '../erc7677Result.js';
import { defineRpcMethod } from '../rpcMethod.js';
import { tokenPaid } from '../sponsoredResult.js';
import { erc7677Params, erc7677ParamsFast, erc7677Target } from './erc7677Params.js';

/**
 * ERC-7677 final data. By default it is signed over the op's own gas values: the wallet estimated them on the
 * stub, so they are not recomputed (a missing one is an error). With `calculateGasLimits: true` in the context
 * (what @biconomy/abstractjs sends: it makes this one call, before estimation, with zero limits) Patron computes
 * the limits the op leaves out, signs over them, and returns them beside the paymaster fields; limits the op
 * gives are kept even then, since a wallet that estimated on a stub sends its final values here.
 */
export const pm_getPaymasterData = defineRpcMethod({
  method: 'pm_getPaymasterData',
  params: erc7677Params,
  fastParams: erc7677ParamsFast,
  async handler(params, ctx) {
    const { chain, mode } = erc7677Target(params, ctx);
    const calculate = mode.calculateGasLimits === true;
    // undefined: "compute what is missing" (sponsorshipService's gas rule); false: the op's limits or an error.
    const calculateGasLimits = calculate ? undefined : false;
    if (mode.mode === 'ERC20') {
      const paid = await tokenPaid(
        params[0],
        { ...mode, calculateGasLimits },
        { ...ctx, chain },
        calculate,
        'params[3]',
      );
      return { ...erc7677Fields(paid, chain.entryPointVersion), ...(calculate ? gasLimitFields(paid) : {}) };
    }
    const sponsored = await ctx.sponsorship.sponsor({
      dappId: ctx.dapp.id,
      chain,
      userOp: params[0],
      calculateGasLimits,
      // viem keeps only the paymaster fields of this answer: what it computed, the client's bundler estimates again.
      limitsMayChange: calculate,
      expiryDuration: mode.expiryDuration,
      webhookData: mode.webhookData,
      sponsorshipPolicyId: mode.sponsorshipPolicyId,
      bounds: ctx.bounds,
      spend: ctx.spend,
      report: ctx.report,
    });
    return { ...erc7677Fields(sponsored, chain.entryPointVersion), ...(calculate ? gasLimitFields(sponsored) : {}) };
  },
});
