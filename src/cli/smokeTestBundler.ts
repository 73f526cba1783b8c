import type { Address, Hex } from 'viem';
import { formatUserOperationRequest, type UserOperation } from 'viem/account-abstraction';
import { z } from 'zod';
import { ValidationError } from '../errors/PatronError.js';
import { type ChainFacts, explainFailure, jsonRpc } from './smokeTestChecks.js';

/**
 * The --bundler path of `patron demo --api-key`: the bundler's ERC-4337 JSON-RPC (eth_chainId,
 * eth_supportedEntryPoints, eth_estimateUserOperationGas, eth_sendUserOperation, eth_getUserOperationReceipt),
 * each failure named after the call, an "AAxx" reason explained with what was read on chain.
 */

const quantity = z.union([z.string().regex(/^0x[0-9a-fA-F]+$/), z.number()]).transform((v) => BigInt(v));

export async function checkBundler(args: { url: string; chainId: number; entryPoint: Address }): Promise<void> {
  const what = `the bundler at --bundler ${args.url}`;
  const id = await jsonRpc({ url: args.url, method: 'eth_chainId', params: [], what });
  const chainId = quantity.safeParse(id.result);
  if (!chainId.success) throw new ValidationError(`${what} answered eth_chainId with ${JSON.stringify(id)}`);
  if (chainId.data !== BigInt(args.chainId)) {
    throw new ValidationError(`wrong chain: ${what} is chain ${chainId.data}, --chain is ${args.chainId}`);
  }
  const eps = await jsonRpc({ url: args.url, method: 'eth_supportedEntryPoints', params: [], what });
  const list = z.array(z.string()).safeParse(eps.result);
  if (!list.success || !list.data.some((a) => a.toLowerCase() === args.entryPoint.toLowerCase())) {
    throw new ValidationError(
      `${what} does not serve the EntryPoint ${args.entryPoint} (it serves ${list.success ? list.data.join(', ') : JSON.stringify(eps)})`,
    );
  }
}

const estimate = z.object({
  callGasLimit: quantity,
  verificationGasLimit: quantity,
  preVerificationGas: quantity,
});

/** The bundler's gas estimate of the op carrying Patron's stub (what viem's prepareUserOperation does). */
export async function estimateGas(args: {
  url: string;
  op: UserOperation;
  entryPoint: Address;
  facts: ChainFacts;
}): Promise<z.infer<typeof estimate>> {
  const answer = await jsonRpc({
    url: args.url,
    method: 'eth_estimateUserOperationGas',
    params: [formatUserOperationRequest(args.op), args.entryPoint],
    what: `the bundler at --bundler ${args.url}`,
  });
  const parsed = estimate.safeParse(answer.result);
  if (!parsed.success) {
    const why = answer.error?.message ?? `an answer without gas limits: ${JSON.stringify(answer.result)}`;
    throw new ValidationError(
      `eth_estimateUserOperationGas failed: ${explainFailure({ message: why, facts: args.facts })}`,
    );
  }
  return parsed.data;
}

const receipt = z.object({
  success: z.boolean(),
  actualGasCost: quantity,
  actualGasUsed: quantity,
  reason: z.string().optional(),
  receipt: z.object({ transactionHash: z.string(), blockNumber: quantity }),
});

/** eth_sendUserOperation, then eth_getUserOperationReceipt every second until it is included or `timeoutMs` passed. */
export async function sendAndWait(args: {
  url: string;
  op: UserOperation;
  entryPoint: Address;
  userOpHash: Hex;
  timeoutMs: number;
  facts: ChainFacts;
}): Promise<z.infer<typeof receipt>> {
  const what = `the bundler at --bundler ${args.url}`;
  const sent = await jsonRpc({
    url: args.url,
    method: 'eth_sendUserOperation',
    params: [formatUserOperationRequest(args.op), args.entryPoint],
    what,
  });
  if (sent.error !== undefined) {
    throw new ValidationError(
      `eth_sendUserOperation refused the op: ${explainFailure({ message: `error ${sent.error.code}: ${sent.error.message}`, facts: args.facts })}`,
    );
  }
  if (typeof sent.result !== 'string' || sent.result.toLowerCase() !== args.userOpHash.toLowerCase()) {
    throw new ValidationError(
      `eth_sendUserOperation answered ${JSON.stringify(sent.result)}, not the op's hash ${args.userOpHash}`,
    );
  }
  const deadline = Date.now() + args.timeoutMs;
  for (;;) {
    const answer = await jsonRpc({
      url: args.url,
      method: 'eth_getUserOperationReceipt',
      params: [args.userOpHash],
      what,
    });
    const parsed = receipt.safeParse(answer.result);
    if (parsed.success) return parsed.data;
    if (Date.now() > deadline) {
      throw new ValidationError(
        `the op ${args.userOpHash} was not included within ${args.timeoutMs / 1000} s (the bundler accepted it; it may still land)`,
      );
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
