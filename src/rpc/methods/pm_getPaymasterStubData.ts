import { parseTokenInfo } from '../../paymaster/tokenInfo.js';
import { defineRpcMethod } from '../rpcMethod.js';
import { assertErc7677Target, erc7677Params } from './erc7677Params.js';

/**
 * ERC-7677 stub: a `paymasterAndData` of the final length (98 bytes sponsored, 154 in ERC20 mode) with a
 * dummy signature, so the wallet's
 * gas estimation (and the preVerificationGas it derives from the op's size) stays valid for the real data.
 * The webhook is consulted and the policy caps reserved when the real data is signed (pm_getPaymasterData), not
 * here; the policy rules (sender lists, contracts, deployment, gas price) and the caps (read-only, with the gas
 * the op gives) are checked here too, so a denied op is refused before the wallet spends an estimation on it.
 */
export const pm_getPaymasterStubData = defineRpcMethod({
  method: 'pm_getPaymasterStubData',
  params: erc7677Params,
  async handler(params, ctx) {
    const mode = assertErc7677Target(params, ctx);
    // The stub signs nothing, but a client should learn here, not at the final data, that its fees are refused.
    await ctx.sponsorship.assertFeesWithinBounds({ chain: ctx.chain, userOp: params[0], bounds: ctx.bounds });
    if (mode.mode === 'ERC20') {
      const info = parseTokenInfo(mode.tokenInfo);
      return {
        paymasterAndData: ctx.tokens.stubPaymasterAndData(
          ctx.chain,
          info.feeTokenAddress ?? info.preferredToken,
          mode.expiryDuration,
        ),
        sponsor: { name: 'Patron' },
        isFinal: false,
      };
    }
    await ctx.sponsorship.precheckPolicies({
      dappId: ctx.dapp.id,
      chain: ctx.chain,
      userOp: params[0],
      sponsorshipPolicyId: mode.sponsorshipPolicyId,
    });
    return {
      paymasterAndData: ctx.sponsorship.stubPaymasterAndData(ctx.chain.paymaster, mode.expiryDuration),
      sponsor: { name: 'Patron' },
      isFinal: false,
    };
  },
});
