import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AccountService } from '../accounts/accountService.js';
import { parseInput as parse } from '../errors/parseInput.js';
import type { RequestLimits } from '../rateLimit/requestLimits.js';
import type { WebhookRecord } from '../store/records.js';
import type { WebhookService } from '../webhooks/webhookService.js';
import { sendOk } from './envelope.js';
import { bodyObject } from './jsonBodyParser.js';
import { authenticateWebhookCaller } from './webhookCredentials.js';

/** Spec §4.1: webhook management at one path, four methods. Messages are the spec's, letter for letter. */
export const WEBHOOK_PARAMETERS_PATH = '/api/v2/public/sdk/webhookParameters';

const REQUEST_TYPE_MESSAGE = 'requestType must be one of GET, POST';
const WEBHOOK_ID_MESSAGE = 'webhookId must be a string';

export const createWebhookBody = z.object({
  webhookUrl: z.string({ error: 'webhookUrl must be a string' }).min(1, { error: 'webhookUrl must not be empty' }),
  // Letter case is normalised: "post" registers a POST webhook.
  requestType: z
    .string({ error: REQUEST_TYPE_MESSAGE })
    .transform((v) => v.trim().toUpperCase())
    .pipe(z.enum(['GET', 'POST'], { error: REQUEST_TYPE_MESSAGE })),
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
});

export function registerWebhookParametersRoutes(
  app: FastifyInstance,
  deps: { accounts: AccountService; webhooks: WebhookService; limits: Pick<RequestLimits, 'admin'> },
): void {
  const { accounts, webhooks, limits } = deps;

  app.post(WEBHOOK_PARAMETERS_PATH, async (req, reply) => {
    const { dapp } = await authenticateWebhookCaller({ req, accounts, operation: 'other', limits });
    const body = parse(createWebhookBody, bodyObject(req.body));
    const created = await webhooks.create({ dappId: dapp.id, url: body.webhookUrl, requestType: body.requestType });
    const data: z.infer<typeof createdWebhookView> = { ...view(created.webhook), signingSecret: created.signingSecret };
    return sendOk(reply, 'Webhook created', data);
  });

  // A GET body (the spec's `webhookUrl: ""`) is accepted and ignored: Fastify does not read GET bodies.
  app.get(WEBHOOK_PARAMETERS_PATH, async (req, reply) => {
    const { dapp } = await authenticateWebhookCaller({ req, accounts, operation: 'get', limits });
    const { webhookId } = parse(getWebhookQuery, req.query);
    const list = await webhooks.list({
      dappId: dapp.id,
      ...(webhookId === undefined || webhookId === '' ? {} : { webhookId }),
    });
    return sendOk(reply, 'Webhook list fetched', list.map(view));
  });

  app.patch(WEBHOOK_PARAMETERS_PATH, async (req, reply) => {
    const { dapp } = await authenticateWebhookCaller({ req, accounts, operation: 'other', limits });
    const body = parse(updateWebhookBody, bodyObject(req.body));
    await webhooks.setActive({ dappId: dapp.id, webhookId: body.webhookId, active: body.active });
    return sendOk(reply, 'Webhook updated');
  });

  app.delete(WEBHOOK_PARAMETERS_PATH, async (req, reply) => {
    const { dapp } = await authenticateWebhookCaller({ req, accounts, operation: 'other', limits });
    const body = parse(deleteWebhookBody, bodyObject(req.body));
    await webhooks.delete({ dappId: dapp.id, webhookId: body.webhookId });
    return sendOk(reply, 'Webhook deleted');
  });
}
