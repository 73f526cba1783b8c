import { type Address, encodeAbiParameters, type Hex, keccak256 } from 'viem';

/**
 * The key of an op whose userOpHash is not known when Patron signs it: when the client's bundler sets the gas
 * limits after the paymaster signed caps (the ERC-7677 data call of @biconomy/abstractjs), the EntryPoint's
 * userOpHash, which covers those limits, cannot be computed in advance. An EntryPoint includes at most one op per
 * (sender, nonce), so that pair, with the chain and the EntryPoint, names the op as surely: the spend ledger, the
 * solvency guard and the request log key such a signature by it, and settlement computes it from every
 * UserOperationEvent (sender and nonce are in the event) to match them.
 */
export function opKey(args: {
  readonly chainId: number;
  readonly entryPoint: Address;
  readonly sender: Address;
  readonly nonce: bigint;
}): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'string' }, { type: 'uint256' }, { type: 'address' }, { type: 'address' }, { type: 'uint256' }],
      ['patron.opKey', BigInt(args.chainId), args.entryPoint, args.sender, args.nonce],
    ),
  );
}
