import type { Hex } from 'viem';
import { blockHashAt } from '../chain/userOperationEvents.js';
import type { FollowedChain } from './settlementFollowerDeps.js';

export class ChainMovedError extends Error {
  override readonly name = 'ChainMovedError';
}

/** The chain's hash of a block, or ChainMovedError when the chain no longer has it. */
export async function hashOf({
  chain,
  blockNumber,
}: {
  readonly chain: Pick<FollowedChain, 'chainId' | 'client'>;
  readonly blockNumber: bigint;
}): Promise<Hex> {
  const hash = await blockHashAt(chain.client, blockNumber);
  if (hash === undefined) throw new ChainMovedError(`block ${blockNumber} of chain ${chain.chainId} is gone`);
  return hash;
}
