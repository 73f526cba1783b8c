import { newMessageId } from '../../webhooks/standardWebhooks.js';
import type { AlertMessage, AlertSender } from '../alertWebhook.js';
import { alertmanagerAlerts } from './alertmanagerAlerts.js';
import type { AlertDestinationName, AlertPoster } from './alertPoster.js';
import type { AlertShape } from './alertShape.js';
import { pagerDutyEvent } from './pagerDutyEvent.js';
import { slackMessage } from './slackMessage.js';

/**
 * One destination of the operator alerts, in its own format, retried on its own (alertPoster.ts). The fan-out
 * (alertFanOut.ts) gives each the message, its shape and, for a resolving one, the label sets it ends.
 */
export interface AlertChannel {
  readonly destination: AlertDestinationName;
  /** True once delivered (or nothing to deliver), false once given up; never rejects. */
  deliver(args: {
    readonly message: AlertMessage;
    readonly shape: AlertShape;
    readonly ends: readonly Readonly<Record<string, string>>[];
  }): Promise<boolean>;
  close(): void;
}

/** Patron's own signed webhook (alertWebhook.ts), unchanged: the same body, signature and retries as before. */
export function webhookChannel(sender: AlertSender): AlertChannel {
  return {
    destination: 'webhook',
    deliver: ({ message }) => sender.send(message),
    close: () => sender.close(),
  };
}

export function alertmanagerChannel(args: {
  readonly url: string;
  readonly poster: AlertPoster;
  readonly now: () => number;
  readonly generatorURL: string | undefined;
}): AlertChannel {
  const endpoint = `${args.url}/api/v2/alerts`;
  return {
    destination: 'alertmanager',
    async deliver({ shape, ends }) {
      const alerts = alertmanagerAlerts({ shape, ends, now: args.now(), generatorURL: args.generatorURL });
      if (alerts.length === 0) return true;
      const body = JSON.stringify(alerts);
      return args.poster.post({
        destination: 'alertmanager',
        type: shape.type,
        id: newMessageId(),
        request: () => ({ url: endpoint, headers: {}, body }),
        retryClientErrors: false,
      });
    },
    close: () => args.poster.close(),
  };
}

export function slackChannel(args: {
  readonly url: string;
  readonly poster: AlertPoster;
  readonly dashboardUrl: string | undefined;
}): AlertChannel {
  return {
    destination: 'slack',
    async deliver({ message, shape }) {
      // A channel of people: a warning that re-armed without news is not worth a message.
      if (message.silent === true) return true;
      const body = JSON.stringify(slackMessage({ shape, data: message.data, dashboardUrl: args.dashboardUrl }));
      return args.poster.post({
        destination: 'slack',
        type: shape.type,
        id: newMessageId(),
        request: () => ({ url: args.url, headers: {}, body }),
        retryClientErrors: false,
      });
    },
    close: () => args.poster.close(),
  };
}

export function pagerDutyChannel(args: {
  readonly url: string;
  readonly routingKey: string;
  readonly source: string;
  readonly poster: AlertPoster;
  readonly now: () => number;
  readonly dashboardUrl: string | undefined;
}): AlertChannel {
  return {
    destination: 'pagerduty',
    async deliver({ message, shape }) {
      const event = pagerDutyEvent({
        shape,
        data: message.data,
        routingKey: args.routingKey,
        source: args.source,
        now: args.now(),
        dashboardUrl: args.dashboardUrl,
      });
      const body = JSON.stringify(event);
      return args.poster.post({
        destination: 'pagerduty',
        type: shape.type,
        id: newMessageId(),
        request: () => ({ url: args.url, headers: {}, body }),
        retryClientErrors: false,
      });
    },
    close: () => args.poster.close(),
  };
}
