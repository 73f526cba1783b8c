import type { WebhookCaller, WebhookVerdict } from './webhookCaller.js';
import type { WebhookService } from './webhookService.js';

/** What the dashboard's "send test" sends when the owner gives no `webhookData` of their own. */
export const SAMPLE_WEBHOOK_DATA: Readonly<Record<string, unknown>> = Object.freeze({ patronTest: true, num: 2 });

/**
 * The owner's test call: the same signed request a sponsorship check makes (spec §6), with sample or given
 * `webhookData`, to an active or inactive webhook of the owner's dApp. Returns the verdict with status and
 * latency; nothing is sponsored and nothing is recorded in the request log.
 */
export async function sendWebhookTest(args: {
  webhooks: WebhookService;
  caller: WebhookCaller;
  accountId: string;
  dappId: string;
  webhookId: string;
  webhookData?: Record<string, unknown>;
}): Promise<WebhookVerdict> {
  const webhook = await args.webhooks.sealedForAccount(args);
  return args.caller.call({ webhook, webhookData: args.webhookData ?? { ...SAMPLE_WEBHOOK_DATA } });
}
