import type { Address } from 'viem';
import type { KeeperSettings } from '../config/keeperSettings.js';
import type { KeeperAlerts } from './keeperAlerts.js';
import type { KeeperObserver, KeptPaymaster } from './keeperRound.js';

/**
 * The funder watch: every balance read goes to the metrics, and a funder under what the next N top-ups need (target −
 * mark each) and its gas reserve is alerted once per chain until it is not low any more.
 */
export function createFunderWatch(deps: {
  /** The funding key's address; undefined when every paymaster proposes (nothing to watch). */
  readonly funder: Address | undefined;
  readonly settings: Pick<KeeperSettings, 'gasReserveWei' | 'lowFunderTopups'>;
  readonly alerts: Pick<KeeperAlerts, 'post'>;
  readonly observer: KeeperObserver | undefined;
  readonly logger: { warn(obj: object, msg: string): void };
}): (args: { readonly p: KeptPaymaster; readonly balanceWei: bigint; readonly markWei: bigint }) => void {
  const { funder, settings } = deps;
  /** Per chain: whether the funder was last seen low (alerted once until it is not). */
  const funderLow = new Map<number, boolean>();
  return ({ p, balanceWei, markWei }) => {
    if (funder === undefined) return;
    deps.observer?.onFunderBalance({ chainId: p.chain.chainId, funder, balanceWei });
    const each = p.setting.targetWei > markWei ? p.setting.targetWei - markWei : p.setting.targetWei;
    const neededWei = each * BigInt(settings.lowFunderTopups) + settings.gasReserveWei;
    const low = balanceWei < neededWei;
    if (low && funderLow.get(p.chain.chainId) !== true) {
      const data = {
        chainId: p.chain.chainId,
        funder,
        balanceWei: balanceWei.toString(),
        neededWei: neededWei.toString(),
        topups: settings.lowFunderTopups,
      };
      deps.logger.warn(data, 'keeper: the funding key is low');
      deps.alerts.post('paymaster.keeper.funder_low', data);
    }
    funderLow.set(p.chain.chainId, low);
  };
}
