import { z } from 'zod';
import type { WebhookRecord } from '../store/records.js';
import type { WebhookCaller } from '../webhooks/webhookCaller.js';
import { webhookDataProblem } from '../webhooks/webhookDataBounds.js';
import type { WebhookService } from '../webhooks/webhookService.js';
import { sendWebhookTest } from '../webhooks/webhookTest.js';
import { ADMIN_TAG } from './adminAccount.js';
import { DAPP_NOT_FOUND, dappParams, idParam } from './adminDapps.js';
import { answerId, type RouteDef, route } from './route.js';
import { createWebhookBody, includeOperationField, view, webhookView } from './webhookParameters.js';

/**
 * The owner's view of a dApp's webhooks in the admin API (the dashboard's), authenticated by an account auth
 * token or the dashboard session. Signing secrets appear only in the create and rotation answers and on an
 * explicit reveal (POST, so it needs the CSRF token); listing never shows them.
 */
export const adminWebhookView = webhookView.extend({ createdAt: z.string(), updatedAt: z.string() });
const withSecret = adminWebhookView.extend({ signingSecret: z.string() });

/** Either flag or both; includeOperation can be turned on for a POST webhook only (400 otherwise). */
export const updateWebhookFlagsBody = z
  .object({
    active: z.boolean({ error: 'active must be a boolean value' }).optional(),
    includeOperation: includeOperationField,
  })
  .refine((b) => b.active !== undefined || b.includeOperation !== undefined, {
    error: 'Give at least one of active, includeOperation',
  });
export const webhookTestBody = z.object({
  webhookData: z
    .record(z.string(), z.unknown(), { error: 'webhookData must be a JSON object' })
    .superRefine((v, ctx) => {
      const problem = webhookDataProblem(v);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `webhookData ${problem}` });
    })
    .optional(),
});
export const webhookTestView = z.object({
  verified: z.boolean(),
  reason: z.string().optional(),
  status: z.number().int().optional(),
  latencyMs: z.number(),
});

const toAdminView = (w: WebhookRecord): z.infer<typeof adminWebhookView> => ({
  ...view(w),
  createdAt: new Date(w.createdAt).toISOString(),
  updatedAt: new Date(w.updatedAt).toISOString(),
});

const webhookParams = z.object({ dappId: idParam, webhookId: idParam });
const WEBHOOK_NOT_FOUND = { '404': "Webhook not found (another account's or dApp's webhook included)" };
const WEBHOOK_PATH = '/api/admin/dapps/:dappId/webhooks/:webhookId';

export function adminWebhookRoutes(deps: { webhooks: WebhookService; webhookCaller: WebhookCaller }): RouteDef[] {
  const { webhooks } = deps;
  const common = { auth: 'account', tag: ADMIN_TAG } as const;
  /** The webhook before a change, for the audit log (undefined: not the caller's, which the handler then says). */
  const current = async ({ account, params }: { account: { id: string }; params: z.infer<typeof webhookParams> }) => {
    const all = await webhooks.listForAccount({ accountId: account.id, dappId: params.dappId });
    const webhook = all.find((w) => w.id === params.webhookId);
    return webhook === undefined ? undefined : toAdminView(webhook);
  };
  return [
    route({
      ...common,
      method: 'GET',
      path: '/api/admin/dapps/:dappId/webhooks',
      operationId: 'listDappWebhooks',
      summary: "The dApp's webhooks (never their signing secrets)",
      params: dappParams,
      answer: { envelope: 'Webhooks fetched', data: z.array(adminWebhookView) },
      errors: DAPP_NOT_FOUND,
      handler: async ({ account, params }) =>
        (await webhooks.listForAccount({ accountId: account.id, dappId: params.dappId })).map(toAdminView),
    }),
    // The same URL policy (SSRF guard) and per-dApp limit as the spec's Create; the secret is shown here once.
    route({
      ...common,
      method: 'POST',
      path: '/api/admin/dapps/:dappId/webhooks',
      operationId: 'createDappWebhook',
      summary: 'Register a webhook (active); its signing secret is in this response only',
      params: dappParams,
      body: createWebhookBody,
      example: { webhookUrl: 'https://hooks.example.com/sponsor', requestType: 'POST', includeOperation: true },
      answer: { envelope: 'Webhook created', data: withSecret },
      errors: {
        '400':
          'webhookUrl, requestType or includeOperation invalid, includeOperation on a GET webhook, or the URL refused by the SSRF policy (see docs/reference/rest-api.md)',
        ...DAPP_NOT_FOUND,
        '409': 'Webhook limit of the dApp reached',
      },
      audit: { action: 'webhook.create', target: answerId('webhookId') },
      handler: async ({ account, params, body }) => {
        const { webhook, signingSecret } = await webhooks.createForAccount({
          accountId: account.id,
          dappId: params.dappId,
          url: body.webhookUrl,
          requestType: body.requestType,
          includeOperation: body.includeOperation,
        });
        return { ...toAdminView(webhook), signingSecret };
      },
    }),
    route({
      ...common,
      method: 'PATCH',
      path: WEBHOOK_PATH,
      operationId: 'setDappWebhookActive',
      summary: 'Activate or deactivate a webhook, or turn includeOperation on or off (at least one)',
      params: webhookParams,
      body: updateWebhookFlagsBody,
      example: { active: false },
      // `data` is left out if the webhook was deleted between the update and the read-back.
      answer: { envelope: 'Webhook updated', data: adminWebhookView.optional() },
      errors: {
        '400': 'active or includeOperation not a boolean, neither given, or includeOperation on a GET webhook',
        ...WEBHOOK_NOT_FOUND,
      },
      audit: { action: 'webhook.update', before: current },
      handler: async ({ account, params, body }) => {
        const target = { accountId: account.id, ...params };
        await webhooks.updateForAccount({ ...target, active: body.active, includeOperation: body.includeOperation });
        const [updated] = await webhooks.list(target);
        return updated === undefined ? undefined : toAdminView(updated);
      },
    }),
    route({
      ...common,
      method: 'DELETE',
      path: WEBHOOK_PATH,
      operationId: 'deleteDappWebhook',
      summary: 'Delete a webhook',
      params: webhookParams,
      answer: { envelope: 'Webhook deleted' },
      errors: WEBHOOK_NOT_FOUND,
      audit: { action: 'webhook.delete', before: current },
      handler: async ({ account, params }) => {
        await webhooks.deleteForAccount({ accountId: account.id, ...params });
        return undefined;
      },
    }),
    // Standard Webhooks (https://www.standardwebhooks.com/) rotation: the new secret signs every call from now on
    // (in other processes within the cache TTL); a receiver may accept both secrets while it switches over.
    route({
      ...common,
      method: 'POST',
      path: `${WEBHOOK_PATH}/rotate-secret`,
      operationId: 'rotateDappWebhookSecret',
      summary: 'Replace the Standard Webhooks signing secret (the new one is in this response only)',
      params: webhookParams,
      answer: { envelope: 'Webhook signing secret rotated', data: withSecret },
      errors: WEBHOOK_NOT_FOUND,
      audit: { action: 'webhook.secret.rotate' },
      handler: async ({ account, params }) => {
        const { webhook, signingSecret } = await webhooks.rotateSigningSecret({ accountId: account.id, ...params });
        return { ...toAdminView(webhook), signingSecret };
      },
    }),
    route({
      ...common,
      method: 'POST',
      path: `${WEBHOOK_PATH}/reveal-secret`,
      operationId: 'revealDappWebhookSecret',
      summary: "The webhook's signing secret, on explicit request (a POST, so a session needs the CSRF token)",
      params: webhookParams,
      answer: { envelope: 'Webhook signing secret', data: z.object({ signingSecret: z.string() }) },
      errors: WEBHOOK_NOT_FOUND,
      // Not a change, but who saw a secret is what an audit is asked first; the secret itself is redacted.
      audit: { action: 'webhook.secret.reveal' },
      handler: async ({ account, params }) => {
        const sealed = await webhooks.sealedForAccount({ accountId: account.id, ...params });
        return { signingSecret: webhooks.revealSigningSecret(sealed) };
      },
    }),
    // The dashboard's "send test": the signed call a sponsorship check would make, and its verdict.
    route({
      ...common,
      method: 'POST',
      path: `${WEBHOOK_PATH}/test`,
      operationId: 'testDappWebhook',
      summary: 'Make the signed call a sponsorship check would make (sample or given webhookData); its verdict',
      params: webhookParams,
      body: webhookTestBody,
      answer: { envelope: 'Webhook test call made', data: webhookTestView },
      errors: { '400': 'webhookData is not a JSON object', ...WEBHOOK_NOT_FOUND },
      audit: { action: 'webhook.test' },
      handler: async ({ account, params, body }) => {
        const verdict = await sendWebhookTest({
          webhooks,
          caller: deps.webhookCaller,
          accountId: account.id,
          ...params,
          ...(body.webhookData === undefined ? {} : { webhookData: body.webhookData }),
        });
        return {
          verified: verdict.verified,
          ...(verdict.verified ? {} : { reason: verdict.reason }),
          ...(verdict.status === undefined ? {} : { status: verdict.status }),
          latencyMs: Math.round(verdict.latencyMs * 10) / 10,
        };
      },
    }),
  ];
}
