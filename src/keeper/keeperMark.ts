import { maxBig, minBig } from '../paymaster/maxBig.js';

/**
 * The deposit keeper's arithmetic (src/keeper/README.md), pure: the mark a paymaster's deposit is held above, and
 * what one round tops up. Everything in wei, in bigints.
 */

/**
 * The mark: liabilities × margin (rounded up, as the solvency guard's verdict) + the floor + the spend rate × the lead
 * time, and never below the explicit minimum. Above the guard's own line (liabilities × margin, and the floor), by
 * what the paymaster spends while a top-up is on its way and for `leadTimeSeconds` after.
 */
export function keeperMark(args: {
  readonly liabilitiesWei: bigint;
  /** Basis points: 15000 is × 1.5. */
  readonly marginBps: bigint;
  readonly floorWei: bigint;
  /** Undefined without observed spend: nothing added. */
  readonly spendWeiPerHour: bigint | undefined;
  readonly leadTimeSeconds: number;
  readonly minimumWei: bigint;
}): bigint {
  const covered = (args.liabilitiesWei * args.marginBps + 9_999n) / 10_000n;
  const lead = ((args.spendWeiPerHour ?? 0n) * BigInt(args.leadTimeSeconds) + 3_599n) / 3_600n;
  const derived = covered + args.floorWei + lead;
  return maxBig(derived, args.minimumWei);
}

/** What a round does about one paymaster's deposit. */
export type TopupPlan =
  /** At or above the mark. */
  | { readonly kind: 'none' }
  /** Send `amountWei`; `cappedBy` when that is less than `wantedWei`. */
  | {
      readonly kind: 'topup';
      readonly amountWei: bigint;
      readonly wantedWei: bigint;
      readonly cappedBy: 'limit' | 'funds' | undefined;
    }
  /** Below the mark, and nothing may be sent: the daily limit is spent, or the funder holds no more than its reserve. */
  | { readonly kind: 'refused'; readonly wantedWei: bigint; readonly by: 'limit' | 'funds' };

/**
 * Below the mark: up to the target (or to the mark, should the mark have grown past the target), capped by what is
 * left of the daily limit and by what the funder can spare (its balance minus the reserve for gas).
 */
export function topupPlan(args: {
  readonly depositWei: bigint;
  readonly markWei: bigint;
  readonly targetWei: bigint;
  readonly limitLeftWei: bigint;
  /** Undefined: not limited by a funder (a proposal, which the Safe pays). */
  readonly spendableWei: bigint | undefined;
}): TopupPlan {
  const { depositWei, markWei } = args;
  if (depositWei >= markWei) return { kind: 'none' };
  const goal = maxBig(args.targetWei, markWei);
  const wantedWei = goal - depositWei;
  const limit = args.limitLeftWei > 0n ? args.limitLeftWei : 0n;
  const funds = args.spendableWei === undefined ? wantedWei : args.spendableWei > 0n ? args.spendableWei : 0n;
  const amountWei = minBig(wantedWei, minBig(limit, funds));
  if (amountWei === 0n) return { kind: 'refused', wantedWei, by: limit === 0n ? 'limit' : 'funds' };
  const cappedBy = amountWei === wantedWei ? undefined : amountWei === limit ? 'limit' : 'funds';
  return { kind: 'topup', amountWei, wantedWei, cappedBy };
}
