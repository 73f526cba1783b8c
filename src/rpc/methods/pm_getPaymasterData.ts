import { defineRpcMethod } from '../rpcMethod.js';
import { tokenPaid } from '../sponsoredResult.js';
import { erc7677Params, erc7677ParamsFast } from '../wire/erc7677.js';
import { erc7677Fields, gasLimitFields } from '../wire/erc7677Result.js';
import { erc7677Target } from './erc7677Target.js';
import { committedPaymaster, v09Options } from './erc7677V09Options.js';

/**
 * ERC-7677 final data. By default it is signed over the op's own gas values: the wallet estimated them on the
 * stub, so they are not recomputed (a missing one is an error). With `calculateGasLimits: true` in the context
 * (what @biconomy/abstractjs sends: it makes this one call, before estimation, with zero limits) Patron computes
 * the limits the op leaves out, signs over them, and returns them beside the paymaster fields; limits the op
 * gives are kept even then, since a wallet that estimated on a stub sends its final values here.
 *
 * On v0.9, `signingPhase` runs the parallel-signing flow: "commit" answers the final paymasterData with a
 * placeholder signature in the suffix (`isFinal: false`, nothing signed or reserved), "finalize" signs the op that
 * comes back with it (`isFinal: true`, the same prefix). See docs/reference/json-rpc.md, "Parallel signing on v0.9".
 */
export const pm_getPaymasterData = defineRpcMethod({
  method: 'pm_getPaymasterData',
  params: erc7677Params,
  fastParams: erc7677ParamsFast,
  family: (params) => (params[3]?.mode === 'ERC20' ? 'tokenQuotes' : 'sponsorship'),
  sponsorshipToken: ([op, , , context]) => ({
    contextToken: context?.sponsorshipToken,
    webhookData: context?.webhookData ?? {},
    sender: op.sender,
  }),
  async handler(params, ctx) {
    const { chain, mode } = erc7677Target(params, ctx);
    const v09 = v09Options({ chain, mode, method: 'pm_getPaymasterData' });
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
    const request = {
      dappId: ctx.dapp.id,
      chain,
      userOp: params[0],
      calculateGasLimits,
      // viem keeps only the paymaster fields of this answer: what it computed, the client's bundler estimates again.
      limitsMayChange: calculate,
      expiryDuration: mode.expiryDuration,
      validityUnit: v09.validityUnit,
      webhookData: mode.webhookData,
      sponsorshipPolicyId: mode.sponsorshipPolicyId,
      attestationUid: mode.attestationUid,
      bounds: ctx.bounds,
      spend: ctx.spend,
      report: ctx.report,
      token: ctx.token,
    };
    if (v09.signingPhase === 'commit') {
      const committed = await ctx.sponsorship.commit(request);
      return { ...erc7677Fields(committed, chain.entryPointVersion), isFinal: false };
    }
    if (v09.signingPhase === 'finalize') {
      const committed = committedPaymaster(params[0].committed);
      const finalized = await ctx.sponsorship.finalize({ ...request, committed });
      return { ...erc7677Fields(finalized, chain.entryPointVersion), isFinal: true };
    }
    const sponsored = await ctx.sponsorship.sponsor(request);
    return { ...erc7677Fields(sponsored, chain.entryPointVersion), ...(calculate ? gasLimitFields(sponsored) : {}) };
  },
});
