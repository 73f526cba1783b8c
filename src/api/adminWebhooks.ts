import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseInput } from '../errors/parseInput.js';
import type { WebhookRecord } from '../store/records.js';
import type { WebhookCaller } from '../webhooks/webhookCaller.js';
import { webhookDataProblem } from '../webhooks/webhookDataBounds.js';
import type { WebhookService } from '../webhooks/webhookService.js';
import { sendWebhookTest } from '../webhooks/webhookTest.js';
import { type AdminAuth, authenticateAccount } from './adminAuth.js';
import { sendOk } from './envelope.js';
import { bodyObject } from './jsonBodyParser.js';
import { createWebhookBody, view, webhookView } from './webhookParameters.js';

/**
 * The owner's view of a dApp's webhooks in the admin API (the dashboard's), authenticated by an account auth
 * token or the dashboard session. Signing secrets appear only in the create and rotation answers and on an
 * explicit reveal (POST, so it needs the CSRF token); listing never shows them.
 */
export const adminWebhookView = webhookView.extend({ createdAt: z.string(), updatedAt: z.string() });

export const setActiveBody = z.object({ active: z.boolean({ error: 'active must be a boolean value' }) });
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

type DappParams = { Params: { dappId: string } };
type WebhookParams = { Params: { dappId: string; webhookId: string } };

export function registerAdminWebhookRoutes(
  app: FastifyInstance,
  deps: AdminAuth & { webhooks: WebhookService; webhookCaller: WebhookCaller },
): void {
  const { webhooks } = deps;

  app.get<DappParams>('/api/admin/dapps/:dappId/webhooks', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    const list = await webhooks.listForAccount({ accountId: account.id, dappId: req.params.dappId });
    return sendOk(reply, 'Webhooks fetched', list.map(toAdminView));
  });

  // The same URL policy (SSRF guard) and per-dApp limit as the spec's Create; the secret is shown here once.
  app.post<DappParams>('/api/admin/dapps/:dappId/webhooks', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    const body = parseInput(createWebhookBody, bodyObject(req.body));
    const { webhook, signingSecret } = await webhooks.createForAccount({
      accountId: account.id,
      dappId: req.params.dappId,
      url: body.webhookUrl,
      requestType: body.requestType,
    });
    return sendOk(reply, 'Webhook created', { ...toAdminView(webhook), signingSecret });
  });

  app.patch<WebhookParams>('/api/admin/dapps/:dappId/webhooks/:webhookId', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    const { active } = parseInput(setActiveBody, bodyObject(req.body));
    const target = { accountId: account.id, dappId: req.params.dappId, webhookId: req.params.webhookId };
    await webhooks.setActiveForAccount({ ...target, active });
    const [updated] = await webhooks.list(target);
    return sendOk(reply, 'Webhook updated', updated === undefined ? undefined : toAdminView(updated));
  });

  app.delete<WebhookParams>('/api/admin/dapps/:dappId/webhooks/:webhookId', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    await webhooks.deleteForAccount({ accountId: account.id, ...req.params });
    return sendOk(reply, 'Webhook deleted');
  });

  // Standard Webhooks (https://www.standardwebhooks.com/) rotation: the new secret signs every call from now on
  // (in other processes within the cache TTL); a receiver may accept both secrets while it switches over.
  app.post<WebhookParams>('/api/admin/dapps/:dappId/webhooks/:webhookId/rotate-secret', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    const { webhook, signingSecret } = await webhooks.rotateSigningSecret({
      accountId: account.id,
      dappId: req.params.dappId,
      webhookId: req.params.webhookId,
    });
    return sendOk(reply, 'Webhook signing secret rotated', { ...toAdminView(webhook), signingSecret });
  });

  app.post<WebhookParams>('/api/admin/dapps/:dappId/webhooks/:webhookId/reveal-secret', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    const sealed = await webhooks.sealedForAccount({ accountId: account.id, ...req.params });
    return sendOk(reply, 'Webhook signing secret', { signingSecret: webhooks.revealSigningSecret(sealed) });
  });

  // The dashboard's "send test": the signed call a sponsorship check would make, and its verdict.
  app.post<WebhookParams>('/api/admin/dapps/:dappId/webhooks/:webhookId/test', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    const body = parseInput(webhookTestBody, req.body === undefined ? {} : bodyObject(req.body));
    const verdict = await sendWebhookTest({
      webhooks,
      caller: deps.webhookCaller,
      accountId: account.id,
      ...req.params,
      ...(body.webhookData === undefined ? {} : { webhookData: body.webhookData }),
    });
    const data: z.infer<typeof webhookTestView> = {
      verified: verdict.verified,
      ...(verdict.verified ? {} : { reason: verdict.reason }),
      ...(verdict.status === undefined ? {} : { status: verdict.status }),
      latencyMs: Math.round(verdict.latencyMs * 10) / 10,
    };
    return sendOk(reply, 'Webhook test call made', data);
  });
}
