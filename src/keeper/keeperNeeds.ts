import type { KeeperAlerts, KeeperAlertType } from './keeperAlerts.js';
import type { KeptPaymaster } from './keeperRound.js';

/**
 * What was said during each paymaster's current need (its deposit under the mark), so that each thing is said once
 * per need: the need ends when the deposit is seen back at the mark.
 */
export interface KeeperNeeds {
  /** Whether `key` was said during the paymaster's current need. */
  has(p: KeptPaymaster, key: string): boolean;
  /** Posts `type` once per need of the paymaster (keyed by `key` within it). */
  oncePerNeed(args: {
    readonly p: KeptPaymaster;
    readonly key: string;
    readonly type: KeeperAlertType;
    readonly data: Record<string, unknown>;
  }): void;
  /** The need is over: what was said of it may be said of the next. */
  end(p: KeptPaymaster): void;
}

/** The paymaster's key: its lease (`keeper:<chain>:<paymaster>`) and its entry among the needs. */
export function keeperKey(p: KeptPaymaster): string {
  return `keeper:${p.chain.chainId}:${p.chain.paymaster.toLowerCase()}`;
}

export function createKeeperNeeds(deps: { readonly alerts: Pick<KeeperAlerts, 'post'> }): KeeperNeeds {
  const needs = new Map<string, Set<string>>();
  return {
    has: (p, key) => needs.get(keeperKey(p))?.has(key) === true,
    oncePerNeed({ p, key, type, data }) {
      const said = needs.get(keeperKey(p)) ?? new Set<string>();
      needs.set(keeperKey(p), said);
      if (said.has(key)) return;
      said.add(key);
      deps.alerts.post(type, data);
    },
    end: (p) => {
      needs.delete(keeperKey(p));
    },
  };
}
