import type { WebhookCaller, WebhookVerdict } from './webhookCaller.js';
import type { WebhookService } from './webhookService.js';

export interface WebhookCall {
  readonly webhookId: string;
  readonly verdict: WebhookVerdict;
}

export type WebhookCheckResult =
  | { readonly allowed: true; readonly calls: readonly WebhookCall[] }
  | {
      readonly allowed: false;
      /** The first failing verdict in registration order (deterministic, unlike completion order). */
      readonly failure: WebhookVerdict & { readonly verified: false };
      readonly calls: readonly WebhookCall[];
    };

/**
 * Spec §6: a sponsored request is checked against the dApp's conditions through its webhooks. Every active
 * webhook is called, in parallel, and every one must answer verified (a dApp adds conditions by adding
 * webhooks); inactive ones are never called, and a dApp without an active webhook has no conditions to check.
 * All calls are awaited, so `calls` reports every verdict; each is bounded by the caller's timeout.
 * Rejects (fails closed) when the webhooks cannot be read or a call hits a fault of Patron's own.
 */
export async function checkSponsorshipWebhooks(args: {
  webhooks: WebhookService;
  caller: WebhookCaller;
  dappId: string;
  webhookData?: Record<string, unknown>;
  /** Called with the number of webhooks to call before any is called; may throw (the rate limits). */
  beforeCalls?: (count: number) => Promise<void>;
}): Promise<WebhookCheckResult> {
  const webhookData = args.webhookData ?? {};
  const active = await args.webhooks.activeWebhooks(args.dappId);
  if (active.length > 0) await args.beforeCalls?.(active.length);
  const calls = await Promise.all(
    active.map(async (webhook) => ({
      webhookId: webhook.id,
      verdict: await args.caller.call({ webhook, webhookData }),
    })),
  );
  for (const { verdict } of calls) {
    if (!verdict.verified) return { allowed: false, failure: verdict, calls };
  }
  return { allowed: true, calls };
}
