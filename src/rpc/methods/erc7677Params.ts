import { z } from 'zod';
import { ChainNotServedError, ValidationError } from '../../errors/PatronError.js';
import { address, modeObjectSchema, partialUserOperationSchema, quantity } from '../../paymaster/userOperationInput.js';
import type { RpcContext } from '../rpcMethod.js';

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

/** The EntryPoint and chain id named in the params must be the ones this URL serves. */
export function assertErc7677Target(params: z.infer<typeof erc7677Params>, ctx: RpcContext) {
  const [, entryPoint, chainId] = params;
  if (entryPoint.toLowerCase() !== ctx.chain.entryPoint.toLowerCase()) {
    throw new ValidationError(
      `Invalid params: params[1]: EntryPoint ${entryPoint} is not served here; this endpoint serves EntryPoint v0.6 at ${ctx.chain.entryPoint}`,
    );
  }
  if (chainId !== BigInt(ctx.chain.chainId)) {
    throw new ChainNotServedError(
      `params[2] names chain ${chainId}, but this endpoint serves chain ${ctx.chain.chainId}`,
    );
  }
  const mode = params[3] ?? modeObjectSchema.parse({});
  return mode;
}
