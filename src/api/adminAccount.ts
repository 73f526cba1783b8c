import { z } from 'zod';
import type { Account } from '../store/records.js';
import { type RouteDef, route } from './route.js';

export const accountView = z.object({ accountId: z.string(), email: z.string(), createdAt: z.string() });

export const toAccountView = (a: Account): z.infer<typeof accountView> => ({
  accountId: a.id,
  email: a.email,
  createdAt: new Date(a.createdAt).toISOString(),
});

/** The admin API of account owners (docs/reference/rest-api.md). */
export const ADMIN_TAG = 'admin';

export function adminAccountRoutes(): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/api/admin/account',
      auth: 'account',
      operationId: 'getAccount',
      summary: 'The authenticated account',
      tag: ADMIN_TAG,
      answer: { envelope: 'Account fetched', data: accountView },
      handler: async ({ account }) => toAccountView(account),
    }),
  ];
}
