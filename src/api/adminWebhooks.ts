import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AccountService } from '../accounts/accountService.js';
import type { WebhookRecord } from '../store/records.js';
import type { WebhookService } from '../webhooks/webhookService.js';
import { authenticateAccount } from './adminAuth.js';
import { sendOk } from './envelope.js';
import { view, webhookView } from './webhookParameters.js';

/**
 * The owner's view of a dApp's webhooks in the admin API (the dashboard's), authenticated by an account auth
 * token. Signing secrets appear only in the rotation answer, once; listing never shows them.
 */
export const adminWebhookView = webhookView.extend({ createdAt: z.string(), updatedAt: z.string() });

const toAdminView = (w: WebhookRecord): z.infer<typeof adminWebhookView> => ({
  ...view(w),
  createdAt: new Date(w.createdAt).toISOString(),
  updatedAt: new Date(w.updatedAt).toISOString(),
});

type DappParams = { Params: { dappId: string } };
type WebhookParams = { Params: { dappId: string; webhookId: string } };

export function registerAdminWebhookRoutes(
  app: FastifyInstance,
  deps: { accounts: AccountService; webhooks: WebhookService },
): void {
  const { accounts, webhooks } = deps;

  app.get<DappParams>('/api/admin/dapps/:dappId/webhooks', async (req, reply) => {
    const account = await authenticateAccount(req, accounts);
    const list = await webhooks.listForAccount({ accountId: account.id, dappId: req.params.dappId });
    return sendOk(reply, 'Webhooks fetched', list.map(toAdminView));
  });

  // Standard Webhooks (https://www.standardwebhooks.com/) rotation: the new secret signs every call from now on
  // (in other processes within the cache TTL); a receiver may accept both secrets while it switches over.
  app.post<WebhookParams>('/api/admin/dapps/:dappId/webhooks/:webhookId/rotate-secret', async (req, reply) => {
    const account = await authenticateAccount(req, accounts);
    const { webhook, signingSecret } = await webhooks.rotateSigningSecret({
      accountId: account.id,
      dappId: req.params.dappId,
      webhookId: req.params.webhookId,
    });
    return sendOk(reply, 'Webhook signing secret rotated', { ...toAdminView(webhook), signingSecret });
  });
}
