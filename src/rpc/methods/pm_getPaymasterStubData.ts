import { erc7677Stub } from '../dialects/erc7677.js';
import { defineRpcMethod } from '../rpcMethod.js';
import { erc7677Params, erc7677ParamsFast } from '../wire/erc7677.js';
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
  handler: (params, call, ctx) => erc7677Stub(params, call, ctx),
  outcome: () => 'quotes',
});
