import type { Address, Hex } from 'viem';
import type { DepositTopup, DepositTopupRepository } from '../store/ledger/depositTopupRepository.js';
import { errorText } from './errorText.js';
import type { KeeperChain } from './keeperChain.js';
import type { KeeperNeeds } from './keeperNeeds.js';
import type { KeeperRound, KeptPaymaster } from './keeperRound.js';
import { settleSentTopup, type TopupSettleDeps } from './reconcileTopups.js';
import { topupRowData } from './topupRowData.js';

/** A top-up about to be made: its ledger row before the funder, the mode, the hash and the state are known. */
export type PlannedTopup = Omit<DepositTopup, 'updatedAt' | 'funder' | 'mode' | 'txHash' | 'state' | 'proposal'>;

export interface SendTopupDeps extends TopupSettleDeps {
  readonly ledger: Pick<DepositTopupRepository, 'insert' | 'settle'>;
  readonly needs: Pick<KeeperNeeds, 'oncePerNeed' | 'end'>;
  readonly funder: Address | undefined;
  /** How long to wait for the receipt before leaving the top-up pending for the next round. */
  readonly receiptTimeoutMs: number;
}

/**
 * Signs the top-up, records it with its hash, broadcasts it and waits for its receipt. Recorded before it is
 * broadcast, so it counts against the daily limit from then on, and a process that stops in between leaves a row the
 * next round looks up on chain.
 */
export async function sendTopup(
  args: SendTopupDeps & {
    readonly p: KeptPaymaster;
    readonly row: PlannedTopup;
    readonly at: { readonly depositWei: bigint; readonly markWei: bigint };
  },
): Promise<KeeperRound> {
  const { p, row, ledger, now } = args;
  const base = { chainId: row.chainId, paymaster: p.chain.paymaster, ...args.at };
  let signed: Awaited<ReturnType<KeeperChain['signTopup']>>;
  try {
    signed = await p.chain.signTopup(row.amountWei);
  } catch (err) {
    return failedToSend({ ...args, err, base });
  }
  // Recorded before it is broadcast: it counts against the daily limit from now, in every instance.
  const full: DepositTopup = {
    ...row,
    funder: args.funder,
    mode: 'sent',
    txHash: signed.hash,
    state: 'pending',
    proposal: undefined,
    updatedAt: row.createdAt,
  };
  await ledger.insert(full);
  try {
    await signed.broadcast();
  } catch (err) {
    // Refused by the node (nonce, funds, fee): never sent, so no longer counted.
    await ledger.settle({
      id: row.id,
      state: 'failed',
      reason: `${row.reason}; refused by the node: ${errorText(err)}`,
      now: now(),
    });
    return failedToSend({ ...args, err, base, txHash: signed.hash });
  }
  args.logger.info({ ...topupRowData(full) }, 'keeper: sent a top-up; waiting for its receipt');
  const status = await p.chain.waitForReceipt(signed.hash, args.receiptTimeoutMs);
  // Not mined within the wait: the next rounds look it up (and count it meanwhile).
  if (status === undefined) return { ...base, outcome: 'waiting' };
  return { ...base, outcome: await settleSentTopup({ ...args, row: full, status }) };
}

/** Signing or broadcasting failed: logged, alerted once per need and error text, counted as failed. */
function failedToSend(
  args: Pick<SendTopupDeps, 'logger' | 'needs' | 'observer'> & {
    readonly p: KeptPaymaster;
    readonly row: { readonly chainId: number; readonly amountWei: bigint; readonly reason: string };
    readonly err: unknown;
    readonly base: Omit<KeeperRound, 'outcome'>;
    readonly txHash?: Hex;
  },
): KeeperRound {
  const { p, row, err, base } = args;
  const data = {
    ...base,
    depositWei: base.depositWei?.toString(),
    markWei: base.markWei?.toString(),
    amountWei: row.amountWei.toString(),
    txHash: args.txHash ?? null,
    failure: 'send_failed',
    error: errorText(err),
  };
  args.logger.error({ ...data, err }, 'keeper: could not send the top-up');
  args.needs.oncePerNeed({ p, key: `send_failed:${errorText(err)}`, type: 'paymaster.keeper.failed', data });
  args.observer?.onOutcome({ chainId: row.chainId, paymaster: p.chain.paymaster, outcome: 'failed' });
  return { ...base, outcome: 'failed' };
}
