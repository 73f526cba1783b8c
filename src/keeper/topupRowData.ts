import { getAddress } from 'viem';
import type { DepositTopup } from '../store/ledger/depositTopupRepository.js';

/** A ledger row as the keeper's logs and alerts show it: checksummed addresses, wei as decimal strings. */
export function topupRowData(row: DepositTopup) {
  return {
    chainId: row.chainId,
    paymaster: getAddress(row.paymaster),
    entryPoint: getAddress(row.entryPoint),
    amountWei: row.amountWei.toString(),
    funder: row.funder === undefined ? null : getAddress(row.funder),
    txHash: row.txHash ?? null,
    depositWei: row.depositWei.toString(),
    markWei: row.markWei.toString(),
    targetWei: row.targetWei.toString(),
    reason: row.reason,
  };
}
