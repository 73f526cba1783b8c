import * as abstractjs from '@biconomy/abstractjs';
import type { Hex } from 'viem';

/**
 * abstractjs 1.2.3's own MEE Merkle tree (modules/utils/merkle-tree.js: OpenZeppelin SimpleMerkleTree, sorted
 * leaves), the one its sponsorSupertransaction rebuilds and compares with `quote.hash`. Exported at run time, but its
 * declaration is not reachable from the package's types entry under NodeNext resolution, so it is typed here.
 */
export const { createMerkleTree } = abstractjs as unknown as {
  createMerkleTree(leaves: readonly Hex[]): { root: Hex; getProof(index: number): Hex[] };
};
