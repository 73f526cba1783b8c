import { z } from 'zod';
import { defineRpcMethod } from '../rpcMethod.js';

/** The EntryPoints this URL's chain has a Patron paymaster for (ERC-7677 clients and Pimlico's dialect ask). */
export const pm_supportedEntryPoints = defineRpcMethod({
  method: 'pm_supportedEntryPoints',
  params: z.tuple([], { error: 'takes no params' }).or(z.undefined()),
  // Metadata every client asks first: no family, so a key limited to any family may still ask it.
  family: () => undefined,
  handler: async (_params, _call, ctx) => ctx.chain.deployments.map((d) => d.entryPoint),
  // Signs nothing: reported with the answers that are not a usable signature.
  outcome: () => 'quotes',
});
