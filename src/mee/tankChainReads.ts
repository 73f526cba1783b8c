import { type Address, erc20Abi, type PublicClient } from 'viem';
import { ValidationError } from '../errors/PatronError.js';

/** Whether an address has code on the client's chain (a contract, or an EIP-7702 delegation). */
export async function hasCode(args: { readonly client: PublicClient; readonly address: Address }): Promise<boolean> {
  const code = await args.client.getCode({ address: args.address });
  return code !== undefined && code !== '0x';
}

/**
 * The tank's token, checked on its chain: it must be a contract, and answer ERC-20 `decimals()` (0 to 77: a
 * uint8 whose 10^d fits a uint256). A typo'd address would otherwise become a tank nobody can fund.
 */
export async function readTankTokenDecimals(args: {
  readonly client: PublicClient;
  readonly token: Address;
  readonly chainId: number;
}): Promise<number> {
  const { client, token, chainId } = args;
  if (!(await hasCode({ client, address: token }))) {
    throw new ValidationError(`the token ${token} has no code on chain ${chainId}: not an ERC-20 there`);
  }
  let decimals: number;
  try {
    decimals = await client.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' });
  } catch {
    throw new ValidationError(`the token ${token} on chain ${chainId} does not answer ERC-20 decimals()`);
  }
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 77) {
    throw new ValidationError(`the token ${token} on chain ${chainId} has ${decimals} decimals`);
  }
  return decimals;
}

/** The tank's balance of its token, in base units. */
export async function readTankBalance(args: {
  readonly client: PublicClient;
  readonly token: Address;
  readonly holder: Address;
}): Promise<bigint> {
  return args.client.readContract({
    address: args.token,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [args.holder],
  });
}
