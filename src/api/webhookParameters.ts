import { z } from 'zod';
import type { WebhookRecord } from '../store/records.js';
import type { WebhookService } from '../webhooks/webhookService.js';
import { answerId, type RouteDef, route } from './route.js';

/** Spec §4.1: webhook management at one path, four methods. Messages are the spec's, letter for letter. */
export const WEBHOOK_PARAMETERS_PATH = '/api/v2/public/sdk/webhookParameters';

const REQUEST_TYPE_MESSAGE = 'requestType must be one of GET, POST';
const WEBHOOK_ID_MESSAGE = 'webhookId must be a string';

/**
 * Patron's extension (docs/guides/webhooks.md, "Webhooks"): the call also carries the operation to approve. An optional extra
 * field of Create, so a body without it is the spec's, with the spec's answers; Update stays the spec's status
 * change (`active` required), and the option is changed through the admin API, which takes the same auth token.
 */
export const includeOperationField = z
  .boolean({ error: 'includeOperation must be a boolean value' })
  .optional()
  .describe('POST webhooks only: the call carries the operation to approve besides data (off by default)');

export const createWebhookBody = z.object({
  webhookUrl: z.string({ error: 'webhookUrl must be a string' }).min(1, { error: 'webhookUrl must not be empty' }),
  // Letter case is normalised: "post" registers a POST webhook.
  requestType: z
    .string({ error: REQUEST_TYPE_MESSAGE })
    .transform((v) => v.trim().toUpperCase())
    .pipe(z.enum(['GET', 'POST'], { error: REQUEST_TYPE_MESSAGE })),
  includeOperation: includeOperationField,
});

export const getWebhookQuery = z.object({
  webhookId: z.string({ error: WEBHOOK_ID_MESSAGE }).optional(),
});

export const updateWebhookBody = z.object({
  webhookId: z.string({ error: WEBHOOK_ID_MESSAGE }),
  active: z.boolean({ error: 'active must be a boolean value' }),
});

export const deleteWebhookBody = z.object({
  webhookId: z.string({ error: WEBHOOK_ID_MESSAGE }),
});

export const webhookView = z.object({
  webhookId: z.string(),
  webhookUrl: z.string(),
  requestType: z.enum(['GET', 'POST']),
  active: z.boolean(),
  // Present only when on: a webhook without the option is shown in exactly the spec's shape.
  includeOperation: z.literal(true).optional(),
});

/**
 * The Create answer: the view plus the webhook's Standard Webhooks signing secret
 * (https://www.standardwebhooks.com/), shown in this response only; it verifies the calls Patron makes.
 */
export const createdWebhookView = webhookView.extend({ signingSecret: z.string() });

export const view = (w: WebhookRecord): z.infer<typeof webhookView> => ({
  webhookId: w.id,
  webhookUrl: w.url,
  requestType: w.requestType,
  active: w.active,
  ...(w.includeOperation ? { includeOperation: true as const } : {}),
});

const TAG = 'webhooks (spec)';
const INVALID_FIELD = 'A field missing or invalid; the message names it';
const NOT_FOUND = { '404': 'No webhook of this dApp has that webhookId' };

/** Every call carries both headers (webhookCredentials.ts): the auth token names the account, the API key its dApp. */
export function webhookParametersRoutes(deps: { webhooks: WebhookService }): RouteDef[] {
  const { webhooks } = deps;
  const common = { auth: 'dappPair', tag: TAG, path: WEBHOOK_PARAMETERS_PATH } as const;
  /** The webhook before a change, for the audit log (its id is in the body on this API). */
  const current = async ({ dapp, body }: { dapp: { id: string }; body: { webhookId: string } }) => {
    const [webhook] = await webhooks.list({ dappId: dapp.id, webhookId: body.webhookId });
    return webhook === undefined ? undefined : view(webhook);
  };
  const bodyWebhookId = ({ body }: { body: { webhookId: string } }) => body.webhookId;
  return [
    route({
      ...common,
      method: 'POST',
      operationId: 'createWebhook',
      summary: 'Register a webhook (active on creation); the response holds its signing secret, shown only here',
      body: createWebhookBody,
      example: { webhookUrl: 'https://hooks.example.com/sponsor', requestType: 'POST' },
      answer: { envelope: 'Webhook created', data: createdWebhookView },
      errors: {
        '400': `${INVALID_FIELD}; webhookUrl refused by the URL policy (see docs/reference/rest-api.md); includeOperation on a GET webhook`,
        '409': 'Webhook limit of the dApp reached',
      },
      audit: { action: 'webhook.create', target: answerId('webhookId') },
      handler: async ({ dapp, body }) => {
        const created = await webhooks.create({
          dappId: dapp.id,
          url: body.webhookUrl,
          requestType: body.requestType,
          includeOperation: body.includeOperation,
        });
        return { ...view(created.webhook), signingSecret: created.signingSecret };
      },
    }),
    // A GET body (the spec's `webhookUrl: ""`) is accepted and ignored: Fastify does not read GET bodies.
    route({
      ...common,
      method: 'GET',
      operationId: 'getWebhooks',
      summary: 'One webhook by webhookId, or all webhooks of the dApp without it (a body is ignored)',
      query: getWebhookQuery,
      answer: { envelope: 'Webhook list fetched', data: z.array(webhookView) },
      errors: { '400': 'webhookId given more than once', ...NOT_FOUND },
      handler: async ({ dapp, query: { webhookId } }) => {
        const list = await webhooks.list({
          dappId: dapp.id,
          ...(webhookId === undefined || webhookId === '' ? {} : { webhookId }),
        });
        return list.map(view);
      },
    }),
    route({
      ...common,
      method: 'PATCH',
      operationId: 'updateWebhook',
      summary: 'Activate or deactivate a webhook',
      body: updateWebhookBody,
      example: { webhookId: '7f1c2f1e-0c1a-4f7e-9a55-3a1c2b3d4e5f', active: false },
      answer: { envelope: 'Webhook updated' },
      errors: { '400': INVALID_FIELD, ...NOT_FOUND },
      audit: {
        action: 'webhook.update',
        before: current,
        after: current,
        target: bodyWebhookId,
      },
      handler: async ({ dapp, body }) => {
        await webhooks.setActive({ dappId: dapp.id, webhookId: body.webhookId, active: body.active });
        return undefined;
      },
    }),
    route({
      ...common,
      method: 'DELETE',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook',
      body: deleteWebhookBody,
      example: { webhookId: '7f1c2f1e-0c1a-4f7e-9a55-3a1c2b3d4e5f' },
      answer: { envelope: 'Webhook deleted' },
      errors: { '400': INVALID_FIELD, ...NOT_FOUND },
      audit: { action: 'webhook.delete', before: current, target: bodyWebhookId },
      handler: async ({ dapp, body }) => {
        await webhooks.delete({ dappId: dapp.id, webhookId: body.webhookId });
        return undefined;
      },
    }),
  ];
}
