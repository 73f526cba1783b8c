import { STUB_PERMIT } from '../../paymaster/entryPoints/entryPointModule.js';
import { feeTokenOf } from '../feeToken.js';
import { defineRpcMethod } from '../rpcMethod.js';
import { guaranteeTerms } from '../sponsoredResult.js';
import { erc7677Params, erc7677ParamsFast } from '../wire/erc7677.js';
import { erc7677Fields } from '../wire/erc7677Result.js';
import { permitTypedDataField } from '../wire/permitContext.js';
import { erc7677Target } from './erc7677Target.js';
import { v09Options } from './erc7677V09Options.js';

/**
 * ERC-7677 stub: paymaster fields of the final length with a dummy signature (v0.6: 98 bytes sponsored, 154 in
 * ERC20 mode; v0.7+: the paymaster's gas limits as they will be signed), so the wallet's gas estimation (and the
 * preVerificationGas it derives from the op's size) stays valid for the real data. The webhook is consulted and
 * the policy caps reserved when the real data is signed (pm_getPaymasterData), not here; the policy rules (sender
 * lists, contracts, deployment, gas price) and the caps (read-only, with the gas the op gives) are checked here
 * too, so a denied op is refused before the wallet spends an estimation on it. In ERC20 mode, an op that batches its
 * approval for an account with no allowance (only the dApp's guarantee, mode 2, could pay it) is refused here when
 * the guarantee is (paymaster/token/guaranteeTerms.ts). On v0.9, `signingPhase: "commit"`
 * gives the stub of the parallel-signing flow (164 bytes: the signature in the suffix) and `validityUnit: "blocks"`
 * one of a block window (erc7677V09Options.ts). In ERC20 mode, for a token with a permit Patron can execute and an
 * account whose allowance does not cover the op's maximum, the answer adds `permitTypedData`, the EIP-2612 permit to
 * sign and send back in the context as `permit` (docs/reference/json-rpc.md, "The permit"); this asks the chain
 * (the allowance, the token's nonce, the gas the op needs when it gives none).
 */
export const pm_getPaymasterStubData = defineRpcMethod({
  method: 'pm_getPaymasterStubData',
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
    const v09 = v09Options({ chain, mode, method: 'pm_getPaymasterStubData' });
    // The stub signs nothing, but a client should learn here, not at the final data, that its fees are refused.
    await ctx.sponsorship.assertFeesWithinBounds({ chain, userOp: params[0], bounds: ctx.bounds });
    if (mode.mode === 'ERC20') {
      const feeToken = feeTokenOf(mode, 'params[3]');
      if (mode.permit !== undefined && feeToken !== undefined) await ctx.tokens.assertPermitUsable(chain, feeToken);
      // An op that batches its approval and can only be signed as the dApp's guarantee learns here if it is refused
      // (a permit in the context prefunds instead: no guarantee asked).
      if (mode.permit === undefined) {
        await ctx.tokens.precheckGuarantee({ chain, userOp: params[0], feeToken, guarantee: guaranteeTerms(ctx) });
      }
      // No permit yet: for a token with one and an account whose allowance falls short, what to sign.
      const asked =
        mode.permit === undefined && feeToken !== undefined
          ? await ctx.tokens.permitRequest({
              chain,
              userOp: params[0],
              feeToken,
              expiryDuration: mode.expiryDuration,
              bounds: ctx.bounds,
              spend: ctx.spend,
            })
          : undefined;
      // Sized as the final data will be: with the context's permit, or a dummy of one when asking for it.
      const permit = mode.permit ?? (asked === undefined ? undefined : STUB_PERMIT);
      const fields = ctx.tokens.stubFields(chain, feeToken, mode.expiryDuration, permit);
      return {
        ...erc7677Fields(fields, chain.entryPointVersion),
        sponsor: { name: 'Patron' },
        isFinal: false,
        ...(asked === undefined ? {} : { permitTypedData: permitTypedDataField(asked) }),
      };
    }
    await ctx.sponsorship.precheckPolicies({
      dappId: ctx.dapp.id,
      chain,
      userOp: params[0],
      sponsorshipPolicyId: mode.sponsorshipPolicyId,
      attestationUid: mode.attestationUid,
      token: ctx.token,
    });
    // A commit's stub has the suffixed form's length: the preVerificationGas estimated on it holds for the final op.
    const fields = ctx.sponsorship.stubFields(chain, mode.expiryDuration, {
      validityUnit: v09.validityUnit,
      signatureInSuffix: v09.signingPhase === 'commit',
    });
    return { ...erc7677Fields(fields, chain.entryPointVersion), sponsor: { name: 'Patron' }, isFinal: false };
  },
});
