import type { Address } from 'viem';
import type { KeeperPaymasterSetting } from '../config/keeperSettings.js';
import type { KeeperChain } from './keeperChain.js';

/** One paymaster the keeper looks after, with what the solvency guard knows of it. */
export interface KeptPaymaster {
  readonly setting: KeeperPaymasterSetting;
  readonly chain: KeeperChain;
  /** The guard's figures for the mark: its live liabilities and spend rate, its floor and margin for this chain. */
  readonly solvency: () => {
    readonly liabilitiesWei: bigint;
    readonly spendWeiPerHour: bigint | undefined;
    readonly floorWei: bigint;
    readonly marginBps: bigint;
  };
}

/** What one round did for one paymaster (the metrics count all but standby, ok, waiting and error). */
export type KeeperOutcome =
  /** Another instance holds the paymaster's lease. */
  | 'standby'
  /** At or above the mark. */
  | 'ok'
  /** A top-up sent earlier is not mined yet, or the proposal of this need is open: nothing more this round. */
  | 'waiting'
  | 'confirmed'
  | 'failed'
  | 'dry_run'
  | 'proposed'
  | 'limit_reached'
  | 'funder_insufficient'
  /** The round could not run (a chain read failed): logged, tried again next interval. */
  | 'error';

export interface KeeperRound {
  readonly chainId: number;
  readonly paymaster: Address;
  readonly outcome: KeeperOutcome;
  readonly depositWei?: bigint;
  readonly markWei?: bigint;
}

/** Told of every round's outcome and every funder balance read (the metrics). */
export interface KeeperObserver {
  onOutcome(args: { readonly chainId: number; readonly paymaster: Address; readonly outcome: KeeperOutcome }): void;
  onFunderBalance(args: { readonly chainId: number; readonly funder: Address; readonly balanceWei: bigint }): void;
}

/** A round's result; the metrics count every outcome but standby, ok, waiting and error. */
export function roundResult(args: {
  readonly p: KeptPaymaster;
  readonly outcome: KeeperOutcome;
  readonly at: { readonly depositWei: bigint; readonly markWei: bigint } | undefined;
  readonly observer: KeeperObserver | undefined;
}): KeeperRound {
  const { chainId, paymaster } = args.p.chain;
  const { outcome } = args;
  if (outcome !== 'standby' && outcome !== 'ok' && outcome !== 'waiting' && outcome !== 'error') {
    args.observer?.onOutcome({ chainId, paymaster, outcome });
  }
  return { chainId, paymaster, outcome, ...args.at };
}
