import { SimpleMerkleTree } from '@openzeppelin/merkle-tree';
import { type Address, concat, encodeAbiParameters, type Hex, keccak256, pad, toHex } from 'viem';
import type { QuotedUserOp } from './meeQuote.js';

/**
 * The hashes an MEE quote is built of, recomputed from the ops' own fields: a quote's hashes are the node's claims
 * (and, at the sign endpoint, anyone's), so nothing is signed over a hash Patron did not compute.
 */

const U256 = { type: 'uint256' } as const;
const B32 = { type: 'bytes32' } as const;

const packed = (high: bigint, low: bigint): Hex => pad(toHex((high << 128n) | low), { size: 32 });

/**
 * The EntryPoint v0.7 userOpHash (eth-infinitism v0.7.0 `UserOperationLib.hash` and `getUserOpHash`): the packed
 * op's fields, the EntryPoint and the chain. MEE runs every op on v0.7.
 */
export function userOpHashV07(args: {
  readonly op: QuotedUserOp;
  readonly entryPoint: Address;
  readonly chainId: number;
}): Hex {
  const { op } = args;
  const inner = keccak256(
    encodeAbiParameters(
      [{ type: 'address' }, U256, B32, B32, B32, U256, B32, B32],
      [
        op.sender,
        op.nonce,
        keccak256(op.initCode ?? '0x'),
        keccak256(op.callData),
        packed(op.verificationGasLimit, op.callGasLimit),
        op.preVerificationGas,
        packed(op.maxPriorityFeePerGas, op.maxFeePerGas),
        keccak256(op.paymasterAndData ?? '0x'),
      ],
    ),
  );
  return keccak256(
    encodeAbiParameters([B32, { type: 'address' }, U256], [inner, args.entryPoint, BigInt(args.chainId)]),
  );
}

/**
 * The leaf an MEE op is signed under: `keccak256(bytes.concat(keccak256(abi.encode(userOpHash, lowerBound,
 * upperBound))))`, the double hash OpenZeppelin's trees use for leaves, binding the op to its execution window.
 */
export function meeUserOpHash(args: { readonly userOpHash: Hex; readonly lower: number; readonly upper: number }): Hex {
  const inner = keccak256(
    encodeAbiParameters([B32, U256, U256], [args.userOpHash, BigInt(args.lower), BigInt(args.upper)]),
  );
  return keccak256(concat([inner]));
}

/** OpenZeppelin's SimpleMerkleTree over the leaves, sorted (what abstractjs and the MEE validator build). */
export function merkleOf(leaves: readonly Hex[]): { readonly root: Hex; proofOf(index: number): Hex[] } {
  const tree = SimpleMerkleTree.of([...leaves], { sortLeaves: true });
  return { root: tree.root as Hex, proofOf: (index) => tree.getProof(index) as Hex[] };
}
