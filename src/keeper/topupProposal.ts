import type { Address } from 'viem';
import { safeTransactionBatch } from '../chain/safeTransactionBatch.js';
import type { KeeperChain } from './keeperChain.js';

/**
 * Proposal mode's top-up (the owner is a Safe): the depositTo transaction for the owner to sign, byte for byte, and
 * the batch Safe{Wallet}'s Transaction Builder imports, the same file the CLI's owner commands print on a dry run.
 */
export function topupProposal(args: {
  readonly chain: Pick<KeeperChain, 'chainId' | 'paymaster' | 'depositCall'>;
  readonly amountWei: bigint;
  readonly owner: Address;
  readonly now: number;
}) {
  const call = args.chain.depositCall(args.amountWei);
  const transaction = { to: call.to, value: call.value.toString(), data: call.data };
  return {
    safe: args.owner,
    transaction,
    safeTransactionBuilder: safeTransactionBatch({
      chainId: args.chain.chainId,
      name: 'Patron: deposit keeper top-up',
      description: `depositTo(${args.chain.paymaster}) of ${call.value} wei at the EntryPoint`,
      transaction,
      createdAt: args.now,
    }),
  };
}
