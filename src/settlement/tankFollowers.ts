import type { Address } from 'viem';
import type { FollowerLease } from '../store/db/followerLease.js';
import { createSettlementFollower, type RoundReport, type SettlementFollower } from './settlementFollower.js';
import type { FollowedChain, SettlementFollowerDeps } from './settlementFollowerDeps.js';

/** An MEE gas tank as settlement needs it (store.meeTanks.list() gives more). */
export interface TankToFollow {
  readonly id: string;
  readonly dappId: string;
  readonly chainId: number;
  readonly address: Address;
  readonly status: string;
}

/** Every tank Patron holds, any chain, any status: re-read each round (tanks are added and retired at run time). */
export type ListTanks = () => Promise<readonly TankToFollow[]>;

/** One round over a chain's tanks: the sums of their rounds. */
export interface TanksRoundReport {
  readonly chainId: number;
  /** Tanks followed this round (active ones, and retired ones with a reservation still open). */
  readonly followed: number;
  readonly settled: number;
  readonly unmatched: number;
  readonly reorgs: number;
}

export interface TankFollowers {
  /** One round over the chain's tanks; a tank that fails does not hold the others, and the first failure rejects. */
  runOnce(): Promise<TanksRoundReport>;
}

/**
 * The settlement followers of one chain's MEE gas tanks (README.md, "MEE gas tanks"): each round lists the tanks,
 * and runs, for each active tank and each retired one that still has an open reservation, the chain's follower
 * with `follows: 'sender'` (its own cursor, the same depth, slicing, reorg handling and releases as a paymaster's),
 * under a lease of its own when several processes share the database.
 */
export function createTankFollowers(
  deps: Omit<SettlementFollowerDeps, 'chain' | 'includedSignature' | 'onTokenCharged'> & {
    readonly chain: Omit<FollowedChain, 'paymaster' | 'follows'>;
    readonly listTanks: ListTanks;
    readonly lease: FollowerLease;
  },
): TankFollowers {
  const { chain, listTanks, lease, logger, ...followerDeps } = deps;
  const followers = new Map<string, SettlementFollower>();
  /** The tank's follower, made on first use and kept (its status counts, its release marker). */
  const followerOf = (address: Address): SettlementFollower => {
    const at = address.toLowerCase();
    let f = followers.get(at);
    if (f === undefined) {
      f = createSettlementFollower({
        ...followerDeps,
        logger,
        chain: { ...chain, paymaster: address, follows: 'sender' },
      });
      followers.set(at, f);
    }
    return f;
  };
  /** Whether the tank is followed this round: retired, only while a reservation of its may still be closed by it. */
  const followed = async (t: TankToFollow): Promise<boolean> =>
    t.status === 'active' || (await deps.ledger.hasOpenReservations({ chainId: chain.chainId, paymaster: t.address }));

  return {
    async runOnce() {
      const tanks = (await listTanks()).filter((t) => t.chainId === chain.chainId);
      const report = { chainId: chain.chainId, followed: 0, settled: 0, unmatched: 0, reorgs: 0 };
      let failure: { err: unknown } | undefined;
      for (const t of tanks) {
        if (deps.stopped?.() === true) break;
        try {
          if (!(await followed(t))) continue;
          // The embedded dev chain is this process's own: never leased (settlementService.ts).
          const key = `${chain.chainId}:${chain.entryPoint}:sender:${t.address}`.toLowerCase();
          const follower = followerOf(t.address);
          if (deps.freshChain !== true && !(await lease.hold(key))) {
            follower.standBy();
            continue;
          }
          const round: RoundReport = await follower.runOnce();
          report.followed++;
          report.settled += round.settled;
          report.unmatched += round.unmatched;
          if (round.reorg) report.reorgs++;
        } catch (err) {
          logger.warn(
            { err, chainId: chain.chainId, tank: t.address, tankId: t.id },
            'settlement: a tank round failed',
          );
          failure ??= { err };
        }
      }
      if (failure !== undefined) throw failure.err;
      return report;
    },
  };
}
