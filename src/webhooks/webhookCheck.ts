import type { WebhookCaller, WebhookVerdict } from './webhookCaller.js';
import { type WebhookOperation, type WebhookOperationJson, webhookOperationJson } from './webhookOperation.js';
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
 *
 * `operation` is asked for only when an active webhook has includeOperation, once, before any call: building it
 * needs the final gas limits (a simulation), which a dApp whose webhooks do not want it never pays for before
 * its webhooks answered. It runs before `beforeCalls`, so calls are only counted once they can be made.
 * Rejects (fails closed) when the webhooks cannot be read, a call hits a fault of Patron's own, the operation
 * cannot be built (its error, e.g. a simulation or bounds failure, is the request's), or a webhook wants the
 * operation and the caller has none to give.
 */
export async function checkSponsorshipWebhooks(args: {
  webhooks: WebhookService;
  caller: WebhookCaller;
  dappId: string;
  webhookData?: Record<string, unknown>;
  /** Called with the number of webhooks to call before any is called; may throw (the rate limits). */
  beforeCalls?: (count: number) => Promise<void>;
  /** The op to show webhooks with includeOperation (docs/guides/webhooks.md, "Webhooks"). */
  operation?: () => Promise<WebhookOperation>;
}): Promise<WebhookCheckResult> {
  const webhookData = args.webhookData ?? {};
  const active = await args.webhooks.activeWebhooks(args.dappId);
  let operation: WebhookOperationJson | undefined;
  if (active.some((w) => w.includeOperation)) {
    // Never call such a webhook without it: it asked to see what it approves, and may approve on `data` alone.
    if (args.operation === undefined) throw new Error(`dApp ${args.dappId}: a webhook wants the operation`);
    operation = webhookOperationJson(await args.operation());
  }
  if (active.length > 0) await args.beforeCalls?.(active.length);
  const calls = await Promise.all(
    active.map(async (webhook) => ({
      webhookId: webhook.id,
      verdict: await args.caller.call({
        webhook,
        webhookData,
        operation: webhook.includeOperation ? operation : undefined,
      }),
    })),
  );
  for (const { verdict } of calls) {
    if (!verdict.verified) return { allowed: false, failure: verdict, calls };
  }
  return { allowed: true, calls };
}
