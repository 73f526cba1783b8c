import type { Address } from 'viem';
import type { SolvencySettings } from '../config/solvencySettings.js';
import { type AlertEvent, type AlertState, nextAlert } from './alertHysteresis.js';
import type { AlertMessage, AlertSender } from './alertWebhook.js';
import { floorRunwaySeconds, headroomWei, type SolvencyVerdict } from './solvencyVerdict.js';

/**
 * The solvency guard's logs and operator alerts (docs/guides/operations.md, "Alerts"): what each carries, and the alerts moved
 * through their hysteresis (alertHysteresis.ts) at every evaluation of the guard, posted in the background.
 */
export interface AlertedPaymaster {
  readonly chain: { readonly chainId: number; readonly paymaster: Address };
  readonly floorWei: bigint;
  readonly lowWaterWei: bigint;
  readonly depositWei: bigint | undefined;
  alert: AlertState;
}

export interface SolvencyAlerts {
  /** The figures every log line and alert about the paymaster carries. */
  figures(s: AlertedPaymaster, liabilitiesWei: bigint, verdict: SolvencyVerdict): Record<string, unknown>;
  /** Moves the paymaster's alert state on this verdict, posting what it calls for. O(1) while nothing changes. */
  onVerdict(s: AlertedPaymaster, liabilitiesWei: bigint, verdict: SolvencyVerdict): void;
  /** Resolves once every alert sent so far has been delivered or given up. */
  settled(): Promise<void>;
}

const ALERT_TYPES: Record<AlertEvent, string> = {
  low: 'paymaster.solvency.low',
  halted: 'paymaster.solvency.halted',
  recovered: 'paymaster.solvency.recovered',
};

export function createSolvencyAlerts(deps: {
  readonly settings: Pick<SolvencySettings, 'marginBps' | 'alertHoldMs'>;
  readonly sender: AlertSender | undefined;
  readonly logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  readonly now: () => number;
  /** Wei per hour the paymaster spends, as observed (the guard's deposit reads and inclusions). */
  readonly spendWeiPerHour: (s: AlertedPaymaster) => bigint | undefined;
}): SolvencyAlerts {
  const pending = new Set<Promise<boolean>>();
  const post = (message: AlertMessage) => {
    const sent = deps.sender?.send(message);
    if (sent === undefined) return;
    pending.add(sent);
    void sent.finally(() => pending.delete(sent));
  };

  function figures(s: AlertedPaymaster, liabilitiesWei: bigint, verdict: SolvencyVerdict) {
    const depositWei = s.depositWei ?? 0n;
    const rate = deps.spendWeiPerHour(s);
    const headroom = headroomWei({ depositWei, requiredWei: verdict.requiredWei });
    const runway = floorRunwaySeconds({ headroomWei: headroom, floorWei: s.floorWei, weiPerHour: rate });
    return {
      chainId: s.chain.chainId,
      paymaster: s.chain.paymaster,
      depositWei: depositWei.toString(),
      liabilitiesWei: liabilitiesWei.toString(),
      floorWei: s.floorWei.toString(),
      lowWaterWei: s.lowWaterWei.toString(),
      margin: Number(deps.settings.marginBps) / 10_000,
      requiredWei: verdict.requiredWei.toString(),
      headroomWei: headroom.toString(),
      spendWeiPerHour: rate === undefined ? null : rate.toString(),
      runwaySeconds: runway ?? null,
      ...(verdict.reason === undefined ? {} : { reason: verdict.reason }),
    };
  }

  return {
    figures,
    onVerdict(s, liabilitiesWei, verdict) {
      const headroom = headroomWei({ depositWei: s.depositWei ?? 0n, requiredWei: verdict.requiredWei });
      // The request path's usual case, without allocating: signing, clear of the mark, nothing to wait out.
      if (verdict.signing && s.alert.level === 'ok' && headroom >= s.lowWaterWei) return;
      const next = nextAlert({
        state: s.alert,
        signing: verdict.signing,
        headroomWei: headroom,
        lowWaterWei: s.lowWaterWei,
        now: deps.now(),
        holdMs: deps.settings.alertHoldMs,
      });
      const before = s.alert.level;
      s.alert = next.state;
      if (next.post === undefined) {
        // The warning re-armed without news (docs/guides/operations.md, "Alerts"): nothing for the webhook or Slack,
        // but Alertmanager's alert and PagerDuty's incident end, and the next `low` is posted again.
        if (before === 'low' && next.state.level === 'ok') {
          post({ type: 'paymaster.solvency.ok', data: figures(s, liabilitiesWei, verdict), silent: true });
        }
        return;
      }
      const data = figures(s, liabilitiesWei, verdict);
      if (next.post === 'low') {
        deps.logger.warn(
          data,
          'solvency: the paymaster deposit is below its low-water mark; top it up before signing stops',
        );
      } else if (next.post === 'recovered') {
        deps.logger.info(data, 'solvency: the paymaster deposit has stayed above its low-water mark; the halt is over');
      }
      post({ type: ALERT_TYPES[next.post], data });
    },
    async settled() {
      await Promise.all([...pending]);
    },
  };
}
