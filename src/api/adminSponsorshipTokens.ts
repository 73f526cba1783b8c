import { z } from 'zod';
import type { AccountService } from '../accounts/accountService.js';
import { dappTokenSettingsSchema } from '../dappSettings/sponsorshipTokenSettings.js';
import { ValidationError } from '../errors/PatronError.js';
import type { WebhookUrlPolicy } from '../webhooks/webhookUrlPolicy.js';
import { ADMIN_TAG } from './adminAccount.js';
import { DAPP_NOT_FOUND, dappParams } from './adminDapps.js';
import { type RouteDef, route } from './route.js';

/** A dApp's sponsorship-token settings as stored; `{required: false, keys: []}` when it uses none. */
const tokensView = z.object({ dappId: z.string(), sponsorshipTokens: dappTokenSettingsSchema });

const NO_TOKENS = { required: false, keys: [] };

/**
 * GET/PUT /api/admin/dapps/:dappId/sponsorship-tokens (docs/guides/sponsorship-tokens.md): the owner's keys that
 * verify its backend's tokens (a JWK or PEM public key pasted, a JWKS URL, an EIP-712 signer address) and whether
 * every sponsorship must carry one. Another account's dApp is 404, as a missing one. A JWKS URL must pass the
 * webhook URL policy (public addresses in production), checked here and again at every fetch.
 */
export function adminSponsorshipTokenRoutes(deps: {
  readonly accounts: AccountService;
  readonly urlPolicy: WebhookUrlPolicy;
}): RouteDef[] {
  const { accounts } = deps;
  return [
    route({
      method: 'GET',
      path: '/api/admin/dapps/:dappId/sponsorship-tokens',
      auth: 'account',
      operationId: 'getDappSponsorshipTokens',
      summary: "The dApp's sponsorship-token settings: whether tokens are required, and the keys that verify them",
      tag: ADMIN_TAG,
      params: dappParams,
      answer: { envelope: 'Sponsorship-token settings fetched', data: tokensView },
      errors: DAPP_NOT_FOUND,
      handler: async ({ account, params }) => {
        const dapp = await accounts.getDapp({ accountId: account.id, dappId: params.dappId });
        return { dappId: dapp.id, sponsorshipTokens: dapp.sponsorshipTokens ?? NO_TOKENS };
      },
    }),
    route({
      method: 'PUT',
      path: '/api/admin/dapps/:dappId/sponsorship-tokens',
      auth: 'account',
      operationId: 'setDappSponsorshipTokens',
      summary: "Replace the dApp's sponsorship-token settings ({} turns tokens off)",
      tag: ADMIN_TAG,
      params: dappParams,
      body: dappTokenSettingsSchema,
      example: {
        required: true,
        keys: [{ kind: 'jwksUrl', id: 'backend', url: 'https://app.example.com/.well-known/jwks.json' }],
      },
      answer: { envelope: 'Sponsorship-token settings set', data: tokensView },
      errors: {
        '400':
          'a key invalid (not a public key of its algorithm, a private key, a JWKS URL the URL policy refuses), ids repeated, or required without a key',
        ...DAPP_NOT_FOUND,
      },
      audit: {
        action: 'dapp.sponsorshipTokens.set',
        before: async ({ account, params }) => {
          const dapp = await accounts.getDapp({ accountId: account.id, dappId: params.dappId });
          return { dappId: dapp.id, sponsorshipTokens: dapp.sponsorshipTokens ?? NO_TOKENS };
        },
      },
      handler: async ({ account, params, body }) => {
        // Ownership first: another account's dApp is 404 whatever the body holds.
        await accounts.getDapp({ accountId: account.id, dappId: params.dappId });
        for (const k of body.keys) {
          if (k.kind !== 'jwksUrl') continue;
          await deps.urlPolicy.check(k.url).catch((err: unknown) => {
            const why = err instanceof ValidationError ? err.shortMessage.replace(/^webhookUrl /, '') : 'is refused';
            throw new ValidationError(`keys: ${k.id}'s JWKS URL ${why}`);
          });
        }
        return {
          dappId: params.dappId,
          sponsorshipTokens: await accounts.setDappSponsorshipTokens({
            accountId: account.id,
            dappId: params.dappId,
            settings: body,
          }),
        };
      },
    }),
  ];
}
