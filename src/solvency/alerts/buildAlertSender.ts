import os from 'node:os';
import type { Config } from '../../config/config.js';
import type { AlertClaims } from '../../store/db/alertClaims.js';
import { createAlertSender } from '../alertWebhook.js';
import {
  type AlertChannel,
  alertmanagerChannel,
  pagerDutyChannel,
  slackChannel,
  webhookChannel,
} from './alertChannels.js';
import { type AlertFanOut, createAlertFanOut } from './alertFanOut.js';
import { createAlertPoster, createDeliveryCounts } from './alertPoster.js';

/**
 * The operator alerts' sender from the configuration: one channel per destination set (the signed webhook,
 * Alertmanager, Slack, PagerDuty; any combination), or undefined when none is. Built by the signing gate
 * (../signingGate.ts), which hands it to the solvency guard and the signer watch.
 */
export function buildAlertSender(deps: {
  readonly config: Pick<Config, 'solvency' | 'alerts' | 'publicUrl' | 'dashboard'>;
  readonly claims: Pick<AlertClaims, 'claim'> | undefined;
  readonly logger: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  readonly now: () => number;
  /** Retry pacing, for tests; the defaults are alertPoster.ts's. */
  readonly retry?: { readonly retries?: number; readonly backoffMs?: number; readonly timeoutMs?: number };
}): AlertFanOut | undefined {
  const { config, logger, now } = deps;
  const counts = createDeliveryCounts();
  const pacing = { logger, counts, ...deps.retry };
  const dashboardUrl =
    config.publicUrl === undefined ? undefined : new URL(`${config.dashboard.basePath}/`, config.publicUrl).href;
  const channels: AlertChannel[] = [];
  const webhook = config.solvency.alert;
  if (webhook !== undefined) {
    // The operator's own URL: private addresses allowed, whatever the tenants' rule (alertWebhook.ts).
    channels.push(webhookChannel(createAlertSender({ url: webhook.url, secret: webhook.secret, now, ...pacing })));
  }
  const { alertmanager, slack, pagerDuty } = config.alerts;
  if (alertmanager !== undefined) {
    channels.push(
      alertmanagerChannel({
        url: alertmanager.url,
        poster: createAlertPoster(pacing),
        now,
        generatorURL: dashboardUrl,
      }),
    );
  }
  if (slack !== undefined) {
    channels.push(slackChannel({ url: slack.url, poster: createAlertPoster(pacing), dashboardUrl }));
  }
  if (pagerDuty !== undefined) {
    channels.push(
      pagerDutyChannel({
        url: pagerDuty.url,
        routingKey: pagerDuty.routingKey,
        // The system with the problem, as PagerDuty shows it: the service's public host, else this machine.
        source: config.publicUrl === undefined ? os.hostname() : new URL(config.publicUrl).host,
        poster: createAlertPoster(pacing),
        now,
        dashboardUrl,
      }),
    );
  }
  if (channels.length === 0) return undefined;
  for (const channel of channels) counts.track(channel.destination);
  return createAlertFanOut({ channels, claims: deps.claims, counts, logger, now });
}
