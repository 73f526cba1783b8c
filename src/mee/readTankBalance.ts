import type { Address } from 'viem';
import type { ChainRegistry } from '../chain/chainRegistry.js';
import { readTankBalance as readBalanceOn } from './tankChainReads.js';

/**
 * A tank's token balance (ERC-20 balanceOf) through the chain client Patron already holds for the chain; undefined
 * when it serves no such chain (the tank was created for a chain not in PATRON_CHAINS).
 */
export function readTankBalance(chains: Pick<ChainRegistry, 'get'>) {
  return async (args: { chainId: number; token: Address; holder: Address }): Promise<bigint | undefined> => {
    const chain = chains.get(args.chainId);
    if (chain === undefined) return undefined;
    return readBalanceOn({ client: chain.client, token: args.token, holder: args.holder });
  };
}
