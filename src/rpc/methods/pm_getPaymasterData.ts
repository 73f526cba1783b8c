import { erc7677Data } from '../dialects/erc7677.js';
import { defineRpcMethod } from '../rpcMethod.js';
import { erc7677Params, erc7677ParamsFast } from '../wire/erc7677.js';
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
  handler: (params, call, ctx) => erc7677Data(params, call, ctx),
  // A parallel-signing commit answers a placeholder signature (isFinal: false): nothing is signed yet.
  outcome: (result) => (result.isFinal === false ? 'quotes' : 'signs'),
});
