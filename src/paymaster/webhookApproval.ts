import { SponsorshipDeniedError, WebhookFailedError } from '../errors/PatronError.js';
import { TOKEN_KEY, withoutCarriedToken } from '../sponsorshipTokens/tokenCarriers.js';
import type { WebhookFailureReason } from '../webhooks/webhookCaller.js';
import type { WebhookCheckResult } from '../webhooks/webhookCheck.js';
import type { WebhookOperation } from '../webhooks/webhookOperation.js';
import type { PaymasterCall } from './paymasterCall.js';

/** Spec §6: the dApp's webhooks decide; see webhooks/webhookCheck.ts. */
export type CheckWebhooks = (args: {
  dappId: string;
  webhookData: Record<string, unknown>;
  /** Asked once the number of webhooks to call is known, before any is called (the rate limits). */
  beforeCalls: (count: number) => Promise<void>;
  /**
   * The op with its final gas, for webhooks with includeOperation: asked for (at most once) only when one of the
   * dApp's active webhooks has it, which moves the gas work and its bounds before the calls.
   */
  operation: () => Promise<WebhookOperation>;
}) => Promise<WebhookCheckResult>;

const WEBHOOK_FAILURES: Record<Exclude<WebhookFailureReason, 'denied'>, string> = {
  timeout: "the dApp's webhook did not answer in time",
  http_status: "the dApp's webhook answered with an error status",
  redirect: "the dApp's webhook answered with a redirect, which Patron does not follow",
  invalid_response: "the dApp's webhook answer has no boolean arePoliciesVerified",
  response_too_large: "the dApp's webhook answer is too large",
  connection_failed: "the dApp's webhook could not be reached",
  forbidden_address: "the dApp's webhook URL points at an address Patron may not call",
};

/**
 * The sponsored mode's webhook step: the dApp's webhooks are asked (within the request's budget for calls), the
 * verdict is reported as a fact, and a refusal becomes the spec's denial (-32010) or, when no verdict came, a
 * webhook failure (-32011) naming why. Fail closed: anything but every webhook saying yes refuses.
 */
export async function approveByDappWebhooks(args: {
  readonly checkWebhooks: CheckWebhooks;
  readonly call: PaymasterCall;
  readonly webhookData: Record<string, unknown>;
  readonly operation: () => Promise<WebhookOperation>;
}): Promise<void> {
  const { report, spend } = args.call;
  const started = report === undefined ? 0 : performance.now();
  const verdict = await args.checkWebhooks({
    dappId: args.call.dappId,
    // The dApp's webhook never sees a sponsorship token (docs/guides/sponsorship-tokens.md), whatever the settings.
    webhookData: Object.hasOwn(args.webhookData, TOKEN_KEY) ? withoutCarriedToken(args.webhookData) : args.webhookData,
    beforeCalls: (count) => spend.webhookCalls(count),
    operation: args.operation,
  });
  if (report !== undefined && verdict.calls.length > 0) {
    report({
      kind: 'webhook',
      allowed: verdict.allowed,
      ...(verdict.allowed ? {} : { reason: verdict.failure.reason }),
      latencyMs: performance.now() - started,
      calls: verdict.calls.length,
    });
  }
  if (verdict.allowed) return;
  const { reason } = verdict.failure;
  if (reason === 'denied') {
    throw new SponsorshipDeniedError("Sponsorship denied: the dApp's webhook did not approve this user operation");
  }
  throw new WebhookFailedError(`Sponsorship denied: ${WEBHOOK_FAILURES[reason]}`, reason);
}
