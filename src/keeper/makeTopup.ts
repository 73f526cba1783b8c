import { randomUUID } from 'node:crypto';
import { formatEther } from 'viem';
import { dryRunTopup } from './dryRunTopup.js';
import type { TopupPlan } from './keeperMark.js';
import type { KeeperNeeds } from './keeperNeeds.js';
import { type KeeperRound, type KeptPaymaster, roundResult } from './keeperRound.js';
import { proposeTopup } from './proposeTopup.js';
import { type SendTopupDeps, sendTopup } from './sendTopup.js';

/**
 * Below the mark with an amount to move: proposes, dry-runs or sends it, as the paymaster's mode says. A cap by the
 * daily limit is alerted once per need whatever the mode.
 */
export async function makeTopup(
  args: SendTopupDeps & {
    readonly needs: Pick<KeeperNeeds, 'has' | 'oncePerNeed' | 'end'>;
    readonly logger: { warn(obj: object, msg: string): void };
    readonly p: KeptPaymaster;
    readonly plan: Extract<TopupPlan, { kind: 'topup' }>;
    /** The round's figures, as logged and alerted. */
    readonly data: Readonly<Record<string, unknown>>;
    readonly at: { readonly depositWei: bigint; readonly markWei: bigint };
  },
): Promise<KeeperRound> {
  const { p, plan, data, at } = args;
  const done = (outcome: 'proposed' | 'dry_run' | 'waiting') =>
    roundResult({ p, outcome, at, observer: args.observer });
  const reason = `deposit ${formatEther(at.depositWei)} ETH under the mark ${formatEther(at.markWei)} ETH`;
  if (plan.cappedBy === 'limit') {
    args.needs.oncePerNeed({
      p,
      key: 'limit_reached',
      type: 'paymaster.keeper.daily_limit_reached',
      data: { ...data, wantedWei: plan.wantedWei.toString(), amountWei: plan.amountWei.toString() },
    });
  }
  const row = {
    id: randomUUID(),
    chainId: p.chain.chainId,
    paymaster: p.chain.paymaster,
    entryPoint: p.chain.entryPoint,
    amountWei: plan.amountWei,
    ...at,
    targetWei: p.setting.targetWei,
    createdAt: args.now(),
  };
  if (p.setting.mode === 'propose') {
    await proposeTopup({ ...args, row: { ...row, reason } });
    return done('proposed');
  }
  const capped =
    plan.cappedBy === undefined
      ? reason
      : `${reason}; capped by the ${plan.cappedBy === 'limit' ? 'daily limit' : "funder's balance"}`;
  if (p.setting.mode === 'dryRun') return done(await dryRunTopup({ ...args, row: { ...row, reason: capped } }));
  // Not through roundResult: a sent top-up is counted where it settles or fails (sendTopup.ts).
  return sendTopup({ ...args, row: { ...row, reason: capped } });
}
