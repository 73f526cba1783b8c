import { tokenQuotes } from '../dialects/pimlico.js';
import { defineRpcMethod } from '../rpcMethod.js';
import { tokenQuotesParams } from '../wire/pimlico.js';

/**
 * Pimlico's `pimlico_getTokenQuotes([{ tokens }, entryPoint, chainId])`
 * (https://docs.pimlico.io/references/paymaster/erc20-paymaster/endpoints/pimlico_getTokenQuotes), what
 * permissionless's prepareUserOperationForErc20Paymaster asks before it batches the approval: the paymaster of the
 * EntryPoint named (any the chain has; another is -32602 like every call naming one), and per requested token the
 * chain can price now its marked-up exchange rate and the postOp gas (paymaster/token/tokenRateQuotes.ts). A token the
 * chain does not take is left out and the call succeeds, as Pimlico documents.
 */
export const pimlico_getTokenQuotes = defineRpcMethod({
  method: 'pimlico_getTokenQuotes',
  params: tokenQuotesParams,
  family: () => 'tokenQuotes',
  // No op and no context: only the Authorization header can carry the token here.
  sponsorshipToken: () => ({ contextToken: undefined, webhookData: {}, sender: undefined }),
  handler: async ([{ tokens }, entryPoint, chainId], _call, ctx) => tokenQuotes({ tokens, entryPoint, chainId, ctx }),
  outcome: () => 'quotes',
});
