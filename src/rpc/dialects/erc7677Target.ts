import { callOn, type PaymasterCall } from '../../paymaster/paymasterCall.js';
import type { RpcContext } from '../rpcMethod.js';
import { assertUrlChainId, entryPointChain } from '../servedChain.js';
import type { Erc7677Context, Erc7677Params } from '../wire/erc7677.js';
import { modeObjectSchema } from '../wire/modeObject.js';

/**
 * The call on the deployment of the EntryPoint the params name (any the URL's chain has), after checking that the
 * chain id they name is the URL's; and the context (an absent one is an empty mode object).
 */
export function erc7677Target(
  params: Erc7677Params,
  call: PaymasterCall,
  ctx: RpcContext,
): { call: PaymasterCall; mode: Erc7677Context } {
  const [, entryPoint, chainId] = params;
  const chain = entryPointChain(ctx, entryPoint, 'params[1]');
  assertUrlChainId(ctx, chainId, 'params[2]');
  return { call: callOn(call, chain), mode: params[3] ?? modeObjectSchema.parse({}) };
}
