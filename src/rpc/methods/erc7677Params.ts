import { z } from 'zod';
import type { ChainRuntime } from '../../chain/chainRegistry.js';
import {
  address,
  type ModeObject,
  modeObjectSchema,
  parseErc7677ParamsFast,
  partialUserOperationSchema,
  quantity,
} from '../../paymaster/userOperationInput.js';
import type { RpcContext } from '../rpcMethod.js';
import { assertUrlChainId, entryPointChain } from '../servedChain.js';

/**
 * ERC-7677 params: `[userOp, entryPoint, chainId (hex), context]`; permissionless 0.1.x leaves the context
 * out when it is undefined. The context is the same mode object as the Biconomy dialect's.
 */
export const erc7677Params = z.union(
  [
    z.tuple([partialUserOperationSchema, address, quantity, modeObjectSchema.nullable()]),
    z.tuple([partialUserOperationSchema, address, quantity]),
  ],
  { error: 'must be [userOperation, entryPoint, chainId, context?]' },
);

/** The common shape by hand (the hot path of every v0.7+ client), else the schema: userOperationInput.ts. */
export const erc7677ParamsFast: (params: unknown) => z.infer<typeof erc7677Params> | undefined = parseErc7677ParamsFast;

/**
 * The deployment of the EntryPoint the params name (any the URL's chain has), after checking that the chain id
 * they name is the URL's; and the context (an absent one is an empty mode object).
 */
export function erc7677Target(
  params: z.infer<typeof erc7677Params>,
  ctx: RpcContext,
): { chain: ChainRuntime; mode: ModeObject } {
  const [, entryPoint, chainId] = params;
  const chain = entryPointChain(ctx, entryPoint, 'params[1]');
  assertUrlChainId(ctx, chainId, 'params[2]');
  return { chain, mode: params[3] ?? modeObjectSchema.parse({}) };
}
