import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Account } from '../store/records.js';
import { type AdminAuth, authenticateAccount } from './adminAuth.js';
import { sendOk } from './envelope.js';

export const accountView = z.object({ accountId: z.string(), email: z.string(), createdAt: z.string() });

export const toAccountView = (a: Account): z.infer<typeof accountView> => ({
  accountId: a.id,
  email: a.email,
  createdAt: new Date(a.createdAt).toISOString(),
});

export function registerAdminAccountRoutes(app: FastifyInstance, deps: AdminAuth): void {
  app.get('/api/admin/account', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    return sendOk(reply, 'Account fetched', toAccountView(account));
  });
}
