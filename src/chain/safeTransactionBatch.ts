import type { Hex } from 'viem';

/** One transaction as an owner sends it, byte for byte: for a hardware wallet, a multisig, any tool that signs elsewhere. */
export interface OwnerTransaction {
  readonly to: string;
  /** Wei, as a decimal string. */
  readonly value: string;
  readonly data: Hex;
}

/**
 * The batch file Safe{Wallet}'s Transaction Builder imports as it is (one transaction): what an owner that is a Safe
 * is given to propose, by the CLI's owner commands on a dry run (cli/ownerOperation.ts) and by the deposit keeper's
 * proposal mode (keeper/).
 */
export function safeTransactionBatch(args: {
  readonly chainId: number;
  readonly name: string;
  readonly description: string;
  readonly transaction: OwnerTransaction;
  /** Unix ms. */
  readonly createdAt: number;
}) {
  return {
    version: '1.0',
    chainId: String(args.chainId),
    createdAt: args.createdAt,
    meta: { name: args.name, description: args.description },
    transactions: [{ ...args.transaction, contractMethod: null, contractInputsValues: null }],
  };
}
