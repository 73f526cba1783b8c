import type { Address } from 'viem';

/**
 * What the solvency guard counts per: one paymaster on one chain. Each of Patron's paymasters (one per EntryPoint
 * version) has its own EntryPoint deposit, and a signature of one can only ever draw on that one.
 */
export type PaymasterKey = `${number}:${string}`;

export const paymasterKey = (p: { readonly chainId: number; readonly paymaster: Address | string }): PaymasterKey =>
  `${p.chainId}:${p.paymaster.toLowerCase()}`;
