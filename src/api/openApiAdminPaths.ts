import { z } from 'zod';
import { createDappInput, createTokenInput, updateDappInput } from '../accounts/schemas.js';
import { accountView } from './adminAccount.js';
import { dappView } from './adminDapps.js';
import { tokenView } from './adminTokens.js';
import { adminWebhookView, setActiveBody, webhookTestBody, webhookTestView } from './adminWebhooks.js';
import { adminOperation, type JsonObject, jsonBody, okResponse, pathParameter } from './openApiParts.js';
import { createWebhookBody } from './webhookParameters.js';

/** The admin API of account owners (README "Admin REST API"): account, auth tokens, dApps and their webhooks. */
const TAG = 'admin';

const dappId = pathParameter('dappId', { type: 'string', format: 'uuid' });
const webhookId = pathParameter('webhookId', { type: 'string', format: 'uuid' });
const withSecret = adminWebhookView.extend({ signingSecret: z.string() });

const DAPP_NOT_FOUND = { '404': "dApp not found (another account's dApp included)" };
const WEBHOOK_NOT_FOUND = { '404': "Webhook not found (another account's or dApp's webhook included)" };
const WEBHOOK_URL_ERRORS = {
  '400': 'webhookUrl or requestType invalid, or the URL refused by the SSRF policy (see README)',
};

export const adminPaths = (): Record<string, JsonObject> => ({
  '/api/admin/account': {
    get: adminOperation({
      operationId: 'getAccount',
      summary: 'The authenticated account',
      tag: TAG,
      write: false,
      ok: okResponse('Account fetched', accountView),
    }),
  },
  '/api/admin/tokens': {
    get: adminOperation({
      operationId: 'listAuthTokens',
      summary: 'List auth tokens (by prefix; never the tokens themselves)',
      tag: TAG,
      write: false,
      ok: okResponse('Auth tokens fetched', z.array(tokenView)),
    }),
    post: adminOperation({
      operationId: 'createAuthToken',
      summary: 'Create an auth token (the token is in this response only)',
      tag: TAG,
      write: true,
      requestBody: jsonBody(createTokenInput, false),
      ok: okResponse('Auth token created', tokenView.extend({ authToken: z.string() })),
      errors: { '400': 'name invalid' },
    }),
  },
  '/api/admin/tokens/{tokenId}': {
    delete: adminOperation({
      operationId: 'revokeAuthToken',
      summary: 'Revoke an auth token',
      tag: TAG,
      write: true,
      parameters: [pathParameter('tokenId')],
      ok: okResponse('Auth token revoked'),
      errors: { '404': "Auth token not found (another account's token included)" },
    }),
  },
  '/api/admin/dapps': {
    get: adminOperation({
      operationId: 'listDapps',
      summary: 'List dApps, with their API keys',
      tag: TAG,
      write: false,
      ok: okResponse('dApps fetched', z.array(dappView)),
    }),
    post: adminOperation({
      operationId: 'createDapp',
      summary: 'Create a dApp',
      tag: TAG,
      write: true,
      requestBody: jsonBody(createDappInput),
      ok: okResponse('dApp created', dappView),
      errors: { '400': 'name or chainIds invalid' },
    }),
  },
  '/api/admin/dapps/{dappId}': {
    get: adminOperation({
      operationId: 'getDapp',
      summary: 'One dApp',
      tag: TAG,
      write: false,
      parameters: [dappId],
      ok: okResponse('dApp fetched', dappView),
      errors: DAPP_NOT_FOUND,
    }),
    patch: adminOperation({
      operationId: 'updateDapp',
      summary: 'Rename a dApp or change its chains',
      tag: TAG,
      write: true,
      parameters: [dappId],
      requestBody: jsonBody(updateDappInput),
      ok: okResponse('dApp updated', dappView),
      errors: { '400': 'name or chainIds invalid, or neither given', ...DAPP_NOT_FOUND },
    }),
  },
  '/api/admin/dapps/{dappId}/rotate-key': {
    post: adminOperation({
      operationId: 'rotateDappApiKey',
      summary: 'Replace the API key (the old one stops working at once)',
      tag: TAG,
      write: true,
      parameters: [dappId],
      ok: okResponse('API key rotated', dappView),
      errors: DAPP_NOT_FOUND,
    }),
  },
  '/api/admin/dapps/{dappId}/webhooks': {
    get: adminOperation({
      operationId: 'listDappWebhooks',
      summary: "The dApp's webhooks (never their signing secrets)",
      tag: TAG,
      write: false,
      parameters: [dappId],
      ok: okResponse('Webhooks fetched', z.array(adminWebhookView)),
      errors: DAPP_NOT_FOUND,
    }),
    post: adminOperation({
      operationId: 'createDappWebhook',
      summary: 'Register a webhook (active); its signing secret is in this response only',
      tag: TAG,
      write: true,
      parameters: [dappId],
      requestBody: jsonBody(createWebhookBody),
      ok: okResponse('Webhook created', withSecret),
      errors: { ...WEBHOOK_URL_ERRORS, ...DAPP_NOT_FOUND, '409': 'Webhook limit of the dApp reached' },
    }),
  },
  '/api/admin/dapps/{dappId}/webhooks/{webhookId}': {
    patch: adminOperation({
      operationId: 'setDappWebhookActive',
      summary: 'Activate or deactivate a webhook',
      tag: TAG,
      write: true,
      parameters: [dappId, webhookId],
      requestBody: jsonBody(setActiveBody),
      // `data` is left out if the webhook was deleted between the update and the read-back.
      ok: okResponse('Webhook updated', adminWebhookView.optional()),
      errors: { '400': 'active missing or not a boolean', ...WEBHOOK_NOT_FOUND },
    }),
    delete: adminOperation({
      operationId: 'deleteDappWebhook',
      summary: 'Delete a webhook',
      tag: TAG,
      write: true,
      parameters: [dappId, webhookId],
      ok: okResponse('Webhook deleted'),
      errors: WEBHOOK_NOT_FOUND,
    }),
  },
  '/api/admin/dapps/{dappId}/webhooks/{webhookId}/rotate-secret': {
    post: adminOperation({
      operationId: 'rotateDappWebhookSecret',
      summary: 'Replace the Standard Webhooks signing secret (the new one is in this response only)',
      tag: TAG,
      write: true,
      parameters: [dappId, webhookId],
      ok: okResponse('Webhook signing secret rotated', withSecret),
      errors: WEBHOOK_NOT_FOUND,
    }),
  },
  '/api/admin/dapps/{dappId}/webhooks/{webhookId}/reveal-secret': {
    post: adminOperation({
      operationId: 'revealDappWebhookSecret',
      summary: "The webhook's signing secret, on explicit request (a POST, so a session needs the CSRF token)",
      tag: TAG,
      write: true,
      parameters: [dappId, webhookId],
      ok: okResponse('Webhook signing secret', z.object({ signingSecret: z.string() })),
      errors: WEBHOOK_NOT_FOUND,
    }),
  },
  '/api/admin/dapps/{dappId}/webhooks/{webhookId}/test': {
    post: adminOperation({
      operationId: 'testDappWebhook',
      summary: 'Make the signed call a sponsorship check would make (sample or given webhookData); its verdict',
      tag: TAG,
      write: true,
      parameters: [dappId, webhookId],
      requestBody: jsonBody(webhookTestBody, false),
      ok: okResponse('Webhook test call made', webhookTestView),
      errors: { '400': 'webhookData is not a JSON object', ...WEBHOOK_NOT_FOUND },
    }),
  },
});
