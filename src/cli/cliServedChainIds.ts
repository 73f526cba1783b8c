import { readForkChainId } from '../chain/forkOrigin.js';
import type { ChainSettings } from '../config/chainSettings.js';
import { configuredChainIds, DEV_CHAIN_ID } from '../config/servedChains.js';

/**
 * The chains the server configured alike serves, as the CLI checks a dApp's chains against them. In fork mode the
 * dev chain's id is the forked endpoint's, which only the endpoint knows, so it is asked (one eth_chainId); one that
 * does not answer leaves the dev chain out, said on stderr, rather than stopping commands that need no chain.
 */
export async function cliServedChainIds(args: {
  readonly paymaster: Pick<ChainSettings, 'devChain' | 'devChainFork' | 'chains'>;
  readonly warn: (message: string) => void;
}): Promise<number[]> {
  const fork = args.paymaster.devChainFork;
  const ids = configuredChainIds(args.paymaster);
  if (fork === undefined) return ids;
  const others = ids.filter((id) => id !== DEV_CHAIN_ID || args.paymaster.chains.some((c) => c.chainId === id));
  try {
    return [...others, await readForkChainId(fork)].sort((a, b) => a - b);
  } catch (err) {
    args.warn(`the dev chain's fork is left out of the served chains: ${err instanceof Error ? err.message : err}`);
    return others;
  }
}
