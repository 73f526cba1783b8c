import { z } from 'zod';
import type { AccountService, OwnedDapp } from '../accounts/accountService.js';
import { createDappInput, updateDappInput } from '../accounts/schemas.js';
import { callerRestrictionsSchema } from '../dappSettings/callerRestrictions.js';
import { ADMIN_TAG } from './adminAccount.js';
import { answerId, type RouteDef, route } from './route.js';

export const dappView = z.object({
  dappId: z.string(),
  name: z.string(),
  chainIds: z.array(z.number().int()),
  apiKey: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const toDappView = (d: OwnedDapp): z.infer<typeof dappView> => ({
  dappId: d.id,
  name: d.name,
  chainIds: [...d.chainIds],
  apiKey: d.apiKey,
  createdAt: new Date(d.createdAt).toISOString(),
  updatedAt: new Date(d.updatedAt).toISOString(),
});

/** A dApp's caller restrictions as stored (normalised: `https://app.example.com:443`), `{}` when none. */
const restrictionsView = z.object({ dappId: z.string(), restrictions: callerRestrictionsSchema });

const toRestrictionsView = (d: OwnedDapp): z.infer<typeof restrictionsView> => ({
  dappId: d.id,
  restrictions: d.restrictions.doc,
});

/**
 * A record id in a path. Parsed as any string: an id that is not a UUID is an unknown id (404 from the service),
 * not a 400; the document says what a real one looks like.
 */
export const idParam = z.string().meta({ format: 'uuid' });
export const dappParams = z.object({ dappId: idParam });
/** The answer for a dApp that is not the caller's: the same as for one that does not exist. */
export const DAPP_NOT_FOUND = { '404': "dApp not found (another account's dApp included)" } as const;

export function adminDappRoutes(deps: { accounts: AccountService }): RouteDef[] {
  const { accounts } = deps;
  return [
    route({
      method: 'GET',
      path: '/api/admin/dapps',
      auth: 'account',
      operationId: 'listDapps',
      summary: 'List dApps, with their API keys',
      tag: ADMIN_TAG,
      answer: { envelope: 'dApps fetched', data: z.array(dappView) },
      handler: async ({ account }) => (await accounts.listDapps(account.id)).map(toDappView),
    }),
    route({
      method: 'POST',
      path: '/api/admin/dapps',
      auth: 'account',
      operationId: 'createDapp',
      summary: 'Create a dApp',
      tag: ADMIN_TAG,
      body: createDappInput,
      example: { name: 'My dApp', chainIds: [8453] },
      answer: { envelope: 'dApp created', data: dappView },
      errors: { '400': 'name or chainIds invalid, or a chain this deployment does not serve' },
      audit: { action: 'dapp.create', target: answerId('dappId') },
      handler: async ({ account, body }) =>
        toDappView(await accounts.createDapp({ accountId: account.id, name: body.name, chainIds: body.chainIds })),
    }),
    route({
      method: 'GET',
      path: '/api/admin/dapps/:dappId',
      auth: 'account',
      operationId: 'getDapp',
      summary: 'One dApp',
      tag: ADMIN_TAG,
      params: dappParams,
      answer: { envelope: 'dApp fetched', data: dappView },
      errors: DAPP_NOT_FOUND,
      handler: async ({ account, params }) =>
        toDappView(await accounts.getDapp({ accountId: account.id, dappId: params.dappId })),
    }),
    route({
      method: 'PATCH',
      path: '/api/admin/dapps/:dappId',
      auth: 'account',
      operationId: 'updateDapp',
      summary: 'Rename a dApp or change its chains',
      tag: ADMIN_TAG,
      params: dappParams,
      body: updateDappInput,
      example: { name: 'Renamed dApp' },
      answer: { envelope: 'dApp updated', data: dappView },
      errors: {
        '400': 'name or chainIds invalid, neither given, or a chain added that this deployment does not serve',
        ...DAPP_NOT_FOUND,
      },
      audit: {
        action: 'dapp.update',
        before: async ({ account, params }) =>
          toDappView(await accounts.getDapp({ accountId: account.id, dappId: params.dappId })),
      },
      handler: async ({ account, params, body }) =>
        toDappView(await accounts.updateDapp({ accountId: account.id, dappId: params.dappId, ...body })),
    }),
    route({
      method: 'GET',
      path: '/api/admin/dapps/:dappId/restrictions',
      auth: 'account',
      operationId: 'getDappRestrictions',
      summary: "Who may use the dApp's API key: allowed origins, client IP ranges and method families",
      tag: ADMIN_TAG,
      params: dappParams,
      answer: { envelope: 'Restrictions fetched', data: restrictionsView },
      errors: DAPP_NOT_FOUND,
      handler: async ({ account, params }) =>
        toRestrictionsView(await accounts.getDapp({ accountId: account.id, dappId: params.dappId })),
    }),
    route({
      method: 'PUT',
      path: '/api/admin/dapps/:dappId/restrictions',
      auth: 'account',
      operationId: 'setDappRestrictions',
      summary: "Replace who may use the dApp's API key ({} lifts every restriction)",
      tag: ADMIN_TAG,
      params: dappParams,
      body: callerRestrictionsSchema,
      example: { origins: ['https://app.example.com', '*.example.com'], methods: ['sponsorship', 'tokenQuotes'] },
      answer: { envelope: 'Restrictions set', data: restrictionsView },
      errors: {
        '400': 'an origin, range or method family invalid, an unknown key, or allowNoOrigin without origins',
        ...DAPP_NOT_FOUND,
      },
      audit: {
        action: 'dapp.restrictions.set',
        before: async ({ account, params }) =>
          toRestrictionsView(await accounts.getDapp({ accountId: account.id, dappId: params.dappId })),
      },
      handler: async ({ account, params, body }) => ({
        dappId: params.dappId,
        restrictions: await accounts.setDappRestrictions({
          accountId: account.id,
          dappId: params.dappId,
          restrictions: body,
        }),
      }),
    }),
    route({
      method: 'POST',
      path: '/api/admin/dapps/:dappId/rotate-key',
      auth: 'account',
      operationId: 'rotateDappApiKey',
      summary: 'Replace the API key (the old one stops working at once)',
      tag: ADMIN_TAG,
      params: dappParams,
      answer: { envelope: 'API key rotated', data: dappView },
      errors: DAPP_NOT_FOUND,
      // The keys themselves are redacted from the row (accounts/auditRedaction.ts); their prefixes show the change.
      audit: {
        action: 'dapp.apiKey.rotate',
        before: async ({ account, params }) =>
          toDappView(await accounts.getDapp({ accountId: account.id, dappId: params.dappId })),
      },
      handler: async ({ account, params }) =>
        toDappView(await accounts.rotateApiKey({ accountId: account.id, dappId: params.dappId })),
    }),
  ];
}
