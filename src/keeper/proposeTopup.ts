import type { DepositTopupRepository } from '../store/ledger/depositTopupRepository.js';
import type { KeeperAlerts } from './keeperAlerts.js';
import type { KeptPaymaster } from './keeperRound.js';
import type { PlannedTopup } from './sendTopup.js';
import { topupProposal } from './topupProposal.js';

/**
 * Proposal mode: records the Safe transaction of the top-up for the owner to sign and alerts it. Not counted against
 * the daily limit (the Safe's owners approve each one); the row stays pending until the deposit is back at the mark.
 */
export async function proposeTopup(args: {
  readonly p: KeptPaymaster;
  readonly row: PlannedTopup;
  /** The round's figures, as logged and alerted. */
  readonly data: Readonly<Record<string, unknown>>;
  readonly ledger: Pick<DepositTopupRepository, 'insert'>;
  readonly alerts: Pick<KeeperAlerts, 'post'>;
  readonly logger: { warn(obj: object, msg: string): void };
  readonly now: () => number;
}): Promise<void> {
  const { p, row, data } = args;
  const owner = await p.chain.readOwner();
  const proposal = topupProposal({ chain: p.chain, amountWei: row.amountWei, owner, now: args.now() });
  await args.ledger.insert({ ...row, funder: owner, mode: 'proposed', txHash: undefined, state: 'pending', proposal });
  args.logger.warn({ ...data, owner, amountWei: row.amountWei.toString() }, 'keeper: proposed a top-up to the owner');
  args.alerts.post('paymaster.keeper.proposed', { ...data, owner, amountWei: row.amountWei.toString(), ...proposal });
}
