import type { AlertSender } from '../solvency/alertWebhook.js';

/** The keeper's operator alerts (docs/guides/operations.md, "Deposit keeper"), posted through the solvency alert sender. */
export type KeeperAlertType =
  | 'paymaster.keeper.topped_up'
  | 'paymaster.keeper.dry_run'
  | 'paymaster.keeper.proposed'
  | 'paymaster.keeper.daily_limit_reached'
  | 'paymaster.keeper.failed'
  | 'paymaster.keeper.funder_low';

export interface KeeperAlerts {
  /** In the background: a round never waits on the receiver. */
  post(type: KeeperAlertType, data: Readonly<Record<string, unknown>>): void;
  /** Resolves once every post so far was delivered or given up (close, tests). */
  settled(): Promise<void>;
}

export function createKeeperAlerts(deps: {
  readonly sender: AlertSender | undefined;
  readonly logger: { warn(obj: object, msg: string): void };
}): KeeperAlerts {
  const inFlight = new Set<Promise<unknown>>();
  return {
    post(type, data) {
      if (deps.sender === undefined) return;
      // send() never rejects (alertWebhook.ts); the catch is for a sender that would.
      const p = deps.sender
        .send({ type, data })
        .catch((err: unknown) => deps.logger.warn({ err, type }, 'keeper: alert failed'));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    },
    async settled() {
      await Promise.all([...inFlight]);
    },
  };
}
