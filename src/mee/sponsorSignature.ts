import { concat, encodeAbiParameters, type Hex } from 'viem';

/** The MEE K1 validator's prefix of a "simple" (Merkle-root) signature (abstractjs `DEFAULT_PREFIX`). */
export const MEE_SIMPLE_SIGNATURE_PREFIX: Hex = '0x177eee00';

/**
 * The payment op's signature as the tank's MEE validator reads it: the prefix, then
 * `abi.encode(bytes32 root, uint48 lowerBound, uint48 upperBound, bytes32[] proof, bytes signature)`, where the
 * signature is the owner's EIP-191 signature of the raw root and the proof is leaf 0's.
 */
export function meeSponsorSignature(args: {
  readonly root: Hex;
  readonly lower: number;
  readonly upper: number;
  readonly proof: readonly Hex[];
  readonly ownerSignature: Hex;
}): Hex {
  return concat([
    MEE_SIMPLE_SIGNATURE_PREFIX,
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'uint48' }, { type: 'uint48' }, { type: 'bytes32[]' }, { type: 'bytes' }],
      [args.root, args.lower, args.upper, args.proof, args.ownerSignature],
    ),
  ]);
}
