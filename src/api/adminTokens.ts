import { z } from 'zod';
import type { AccountService } from '../accounts/accountService.js';
import { createTokenInput } from '../accounts/schemas.js';
import type { AuthTokenRecord } from '../store/records.js';
import { ADMIN_TAG } from './adminAccount.js';
import { answerId, type RouteDef, route } from './route.js';

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

const tokenParams = z.object({ tokenId: z.string() });

export function adminTokenRoutes(deps: { accounts: AccountService }): RouteDef[] {
  const { accounts } = deps;
  return [
    route({
      method: 'GET',
      path: '/api/admin/tokens',
      auth: 'account',
      operationId: 'listAuthTokens',
      summary: "List the caller's own auth tokens (by prefix; never the tokens themselves)",
      tag: ADMIN_TAG,
      answer: { envelope: 'Auth tokens fetched', data: z.array(tokenView) },
      handler: async ({ account, member }) => (await accounts.listTokens(account.id, member.id)).map(toTokenView),
    }),
    // The token itself is in this response only; the service keeps just its hash.
    route({
      method: 'POST',
      path: '/api/admin/tokens',
      auth: 'account',
      operationId: 'createAuthToken',
      summary: "Create an auth token acting with the caller's role (the token is in this response only)",
      tag: ADMIN_TAG,
      body: createTokenInput,
      example: { name: 'ci' },
      answer: { envelope: 'Auth token created', data: tokenView.extend({ authToken: z.string() }) },
      errors: { '400': 'name invalid' },
      audit: { action: 'authToken.create', target: answerId('tokenId') },
      handler: async ({ account, member, body }) => {
        const { token, secret } = await accounts.createToken({
          accountId: account.id,
          memberId: member.id,
          name: body.name,
        });
        return { ...toTokenView(token), authToken: secret };
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/admin/tokens/:tokenId',
      auth: 'account',
      operationId: 'revokeAuthToken',
      summary: "Revoke one of the caller's own auth tokens",
      tag: ADMIN_TAG,
      params: tokenParams,
      answer: { envelope: 'Auth token revoked' },
      errors: { '404': "Auth token not found (another member's or account's token included)" },
      audit: { action: 'authToken.revoke' },
      handler: async ({ account, member, params }) => {
        await accounts.revokeToken({ accountId: account.id, memberId: member.id, tokenId: params.tokenId });
        return undefined;
      },
    }),
  ];
}
