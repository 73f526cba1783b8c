import type { Address } from 'viem';
import type { DepositTopupRepository } from '../store/ledger/depositTopupRepository.js';
import type { KeeperNeeds } from './keeperNeeds.js';
import type { KeptPaymaster } from './keeperRound.js';
import type { PlannedTopup } from './sendTopup.js';

/**
 * Dry-run mode: records what would be sent (final at once, `confirmed`: nothing is waited for) and alerts it, once
 * per need; later rounds of the same need wait.
 */
export async function dryRunTopup(args: {
  readonly p: KeptPaymaster;
  readonly row: PlannedTopup;
  /** The round's figures, as logged and alerted. */
  readonly data: Readonly<Record<string, unknown>>;
  readonly funder: Address | undefined;
  readonly ledger: Pick<DepositTopupRepository, 'insert'>;
  readonly needs: Pick<KeeperNeeds, 'has' | 'oncePerNeed'>;
  readonly logger: { info(obj: object, msg: string): void };
}): Promise<'dry_run' | 'waiting'> {
  const { p, row, data, needs } = args;
  if (needs.has(p, 'dry_run')) return 'waiting';
  await args.ledger.insert({
    ...row,
    funder: args.funder,
    mode: 'dry_run',
    txHash: undefined,
    state: 'confirmed',
    proposal: undefined,
  });
  const call = p.chain.depositCall(row.amountWei);
  const wouldSend = { to: call.to, value: call.value.toString(), data: call.data };
  needs.oncePerNeed({
    p,
    key: 'dry_run',
    type: 'paymaster.keeper.dry_run',
    data: { ...data, amountWei: row.amountWei.toString(), funder: args.funder ?? null, transaction: wouldSend },
  });
  args.logger.info({ ...data, amountWei: row.amountWei.toString() }, 'keeper: dry run, would top up the deposit');
  return 'dry_run';
}
