import { formatEther, type Hex } from 'viem';
import type { DepositTopup, DepositTopupRepository } from '../store/ledger/depositTopupRepository.js';
import type { KeeperAlerts } from './keeperAlerts.js';
import type { KeeperNeeds } from './keeperNeeds.js';
import type { KeeperObserver, KeeperOutcome, KeptPaymaster } from './keeperRound.js';
import { topupRowData } from './topupRowData.js';

/** A sent top-up the node no longer knows after this long was dropped (replaced, or never propagated). */
const DROPPED_AFTER_MS = 15 * 60_000;

/** What closing a sent top-up touches: its ledger row, the logs, the alerts, the need and the metrics. */
export interface TopupSettleDeps {
  readonly ledger: Pick<DepositTopupRepository, 'settle'>;
  readonly alerts: Pick<KeeperAlerts, 'post'>;
  readonly needs: Pick<KeeperNeeds, 'end'>;
  readonly observer: KeeperObserver | undefined;
  readonly logger: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
  readonly now: () => number;
}

/** Closes what earlier rounds left pending; true while a sent top-up is still on its way. */
export async function reconcileTopups(
  args: TopupSettleDeps & { readonly p: KeptPaymaster; readonly pending: readonly DepositTopup[] },
): Promise<boolean> {
  const { p, ledger, logger, now } = args;
  let inFlight = false;
  for (const row of args.pending) {
    if (row.mode !== 'sent' || row.txHash === undefined) continue;
    const hash = row.txHash as Hex;
    const status = await p.chain.receipt(hash);
    if (status !== undefined) {
      await settleSentTopup({ ...args, row, status });
      continue;
    }
    if (now() - row.createdAt > DROPPED_AFTER_MS && !(await p.chain.known(hash))) {
      await ledger.settle({
        id: row.id,
        state: 'failed',
        reason: `${row.reason}; dropped: the node no longer knows ${hash}`,
        now: now(),
      });
      logger.error({ chainId: row.chainId, paymaster: row.paymaster, txHash: hash }, 'keeper: a top-up was dropped');
      args.alerts.post('paymaster.keeper.failed', { ...topupRowData(row), failure: 'dropped' });
      args.observer?.onOutcome({ chainId: row.chainId, paymaster: p.chain.paymaster, outcome: 'failed' });
      continue;
    }
    inFlight = true;
  }
  return inFlight;
}

/** Records a sent top-up's receipt (mined or reverted), says so, and ends the need when the deposit is back at the mark. */
export async function settleSentTopup(
  args: TopupSettleDeps & {
    readonly p: KeptPaymaster;
    readonly row: DepositTopup;
    readonly status: 'success' | 'reverted';
  },
): Promise<KeeperOutcome> {
  const { p, row, logger, alerts, now } = args;
  const ok = args.status === 'success';
  await args.ledger.settle({
    id: row.id,
    state: ok ? 'confirmed' : 'failed',
    ...(ok ? {} : { reason: `${row.reason}; reverted on chain` }),
    now: now(),
  });
  const depositAfter = await p.chain.readDeposit().catch(() => undefined);
  const data = { ...topupRowData(row), depositAfterWei: depositAfter?.toString() ?? null };
  const outcome: KeeperOutcome = ok ? 'confirmed' : 'failed';
  // Back at the mark: this need is over, and what was said of it may be said of the next.
  if (depositAfter !== undefined && depositAfter >= row.markWei) args.needs.end(p);
  if (ok) {
    logger.info(data, `keeper: topped up the deposit by ${formatEther(row.amountWei)} ETH`);
    alerts.post('paymaster.keeper.topped_up', data);
  } else {
    logger.error(data, 'keeper: the top-up reverted');
    alerts.post('paymaster.keeper.failed', { ...data, failure: 'reverted' });
  }
  args.observer?.onOutcome({ chainId: row.chainId, paymaster: p.chain.paymaster, outcome });
  return outcome;
}
