import type { Address } from 'viem';
import type { TopupPlan } from './keeperMark.js';
import type { KeeperNeeds } from './keeperNeeds.js';
import type { KeptPaymaster } from './keeperRound.js';

/**
 * Below the mark and nothing may be sent (the daily limit spent, or the funder empty beyond its gas reserve): logged
 * and alerted once per need. Returns the outcome the round counts.
 */
export function refuseTopup(args: {
  readonly p: KeptPaymaster;
  readonly plan: Extract<TopupPlan, { kind: 'refused' }>;
  /** The round's figures, as logged and alerted. */
  readonly data: Readonly<Record<string, unknown>>;
  readonly balanceWei: bigint | undefined;
  readonly funder: Address | undefined;
  readonly needs: Pick<KeeperNeeds, 'has' | 'oncePerNeed'>;
  readonly logger: { error(obj: object, msg: string): void };
}): 'limit_reached' | 'funder_insufficient' {
  const { p, plan, needs } = args;
  const outcome = plan.by === 'limit' ? 'limit_reached' : 'funder_insufficient';
  const more = { ...args.data, wantedWei: plan.wantedWei.toString(), funder: args.funder ?? null };
  if (!needs.has(p, outcome)) args.logger.error(more, `keeper: below the mark and nothing may be sent (${outcome})`);
  if (plan.by === 'limit') {
    needs.oncePerNeed({
      p,
      key: outcome,
      type: 'paymaster.keeper.daily_limit_reached',
      data: { ...more, amountWei: '0' },
    });
  } else {
    needs.oncePerNeed({
      p,
      key: outcome,
      type: 'paymaster.keeper.failed',
      data: { ...more, failure: 'funder_insufficient', balanceWei: String(args.balanceWei ?? 0n) },
    });
  }
  return outcome;
}
