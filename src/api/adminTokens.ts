import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { createTokenInput } from '../accounts/schemas.js';
import { parseInput } from '../errors/parseInput.js';
import type { AuthTokenRecord } from '../store/records.js';
import { type AdminAuth, authenticateAccount } from './adminAuth.js';
import { sendOk } from './envelope.js';
import { bodyObject } from './jsonBodyParser.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const tokenView = z.object({
  tokenId: z.string(),
  name: z.string(),
  prefix: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});

export const toTokenView = (t: AuthTokenRecord): z.infer<typeof tokenView> => ({
  tokenId: t.id,
  name: t.name,
  prefix: t.prefix,
  createdAt: new Date(t.createdAt).toISOString(),
  lastUsedAt: iso(t.lastUsedAt),
  revokedAt: iso(t.revokedAt),
});

export function registerAdminTokenRoutes(app: FastifyInstance, deps: AdminAuth): void {
  const { accounts } = deps;

  app.get('/api/admin/tokens', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    return sendOk(reply, 'Auth tokens fetched', (await accounts.listTokens(account.id)).map(toTokenView));
  });

  // The token itself is in this response only; the service keeps just its hash.
  app.post('/api/admin/tokens', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    const body = parseInput(createTokenInput, bodyObject(req.body));
    const { token, secret } = await accounts.createToken({ accountId: account.id, name: body.name });
    return sendOk(reply, 'Auth token created', { ...toTokenView(token), authToken: secret });
  });

  app.delete<{ Params: { tokenId: string } }>('/api/admin/tokens/:tokenId', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    await accounts.revokeToken({ accountId: account.id, tokenId: req.params.tokenId });
    return sendOk(reply, 'Auth token revoked');
  });
}
