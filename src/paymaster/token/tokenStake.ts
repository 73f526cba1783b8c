import { getAddress } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import { type ChainRuntime, deploymentViews } from '../../chain/chainRegistry.js';
import { withTimeout } from '../../chain/withTimeout.js';
import { UnavailableError, UnsupportedError } from '../../errors/PatronError.js';

/**
 * The token mode needs a staked paymaster (ERC-7562): its validation takes the prefund, writing the token's storage
 * associated with the paymaster (STO-031), and it returns a context for postOp (EREP-050); compliant bundlers
 * refuse both from an unstaked paymaster, so an op signed for one would only sit in the ledger until it expires.
 * The embedded dev chain stakes its paymasters when it deploys them; a configured chain is the operator's to stake.
 */
export function unstakedTokenModeMessage(chain: ChainRuntime): string {
  return (
    `ERC20 mode: the paymaster ${getAddress(chain.paymaster)} is not staked in the EntryPoint ` +
    `${getAddress(chain.entryPoint)} (v${chain.entryPointVersion}) on chain ${chain.chainId}; bundlers refuse its ` +
    `token-mode operations (ERC-7562). Its owner stakes it with the contract's addStake(uint32 unstakeDelaySec) ` +
    `(payable, e.g. 1 ETH and 86400 s, or what the chain's bundlers require)`
  );
}

/**
 * Refuses the token mode on a configured chain whose paymaster is not known (from the last read) to be staked: not
 * staked is -32030; not read yet (a slow RPC at start-up) is a transient -32603 (HTTP 503, which clients retry), so
 * no token-mode signature is issued for a paymaster whose stake nobody has seen.
 */
export function assertTokenModeStaked(chain: ChainRuntime, staked: boolean | undefined): void {
  if (chain.embedded || staked === true) return;
  if (staked === undefined) {
    throw new UnavailableError(
      `ERC20 mode: the stake of the paymaster ${getAddress(chain.paymaster)} on chain ${chain.chainId} has not been read yet; retry`,
    );
  }
  throw new UnsupportedError(unstakedTokenModeMessage(chain));
}

/**
 * The start-up check: one message per paymaster deployment of a configured (not embedded) chain that has fee tokens
 * and whose paymaster is not staked; main.ts logs each as a warning (the sponsored mode works unstaked, so the
 * service starts). A deployment whose stake cannot be read is left to the solvency guard's reads.
 */
export async function unstakedTokenPaymasters(args: {
  readonly chains: readonly ChainRuntime[];
  readonly hasTokens: (chainId: number) => boolean;
  readonly timeoutMs?: number;
}): Promise<string[]> {
  const views = args.chains.flatMap(deploymentViews).filter((c) => !c.embedded && args.hasTokens(c.chainId));
  const staked = await Promise.all(
    views.map((c) =>
      withTimeout(
        c.client.readContract({
          address: c.entryPoint,
          abi: entryPoint06Abi,
          functionName: 'getDepositInfo',
          args: [c.paymaster],
        }),
        args.timeoutMs ?? 10_000,
      ).then(
        (info) => info.staked,
        () => undefined,
      ),
    ),
  );
  return views.filter((_, i) => staked[i] === false).map(unstakedTokenModeMessage);
}
