import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { createDappInput, createTokenInput, updateDappInput } from '../accounts/schemas.js';
import { accountView } from './adminAccount.js';
import { dappView } from './adminDapps.js';
import { tokenView } from './adminTokens.js';
import { adminWebhookView } from './adminWebhooks.js';
import {
  createdWebhookView,
  createWebhookBody,
  deleteWebhookBody,
  getWebhookQuery,
  updateWebhookBody,
  WEBHOOK_PARAMETERS_PATH,
  webhookView,
} from './webhookParameters.js';

/** OpenAPI 3.1 document of the REST API, generated from the same zod schemas the routes parse with. */
const json = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
};

const envelope = (data?: z.ZodType) =>
  json(
    z.object({
      statusCode: z.number().int(),
      message: z.string(),
      ...(data === undefined ? {} : { data }),
    }),
    'output',
  );

const ok = (description: string, data?: z.ZodType) => ({
  description,
  content: { 'application/json': { schema: envelope(data) } },
});

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: envelope() } },
});

const body = (schema: z.ZodType, required = true) => ({
  required,
  content: { 'application/json': { schema: json(schema, 'input') } },
});

const webhookHeaders = [
  { name: 'authToken', in: 'header', required: true, schema: { type: 'string' } },
  { name: 'apiKey', in: 'header', required: true, schema: { type: 'string' } },
];

const dappIdParameter = { name: 'dappId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };

const webhookIdParameter = {
  name: 'webhookId',
  in: 'path',
  required: true,
  schema: { type: 'string', format: 'uuid' },
};

const commonErrors = {
  '400': errorResponse('Invalid body or parameters; the message says which'),
  '401': errorResponse('Missing or invalid credentials'),
  '413': errorResponse('Body larger than 64 KiB'),
  '415': errorResponse('Body is not application/json'),
};

export function buildOpenApiDocument(): Record<string, unknown> {
  const bearer = [{ bearerAuth: [] }, { authTokenHeader: [] }];
  return {
    openapi: '3.1.0',
    info: { title: 'Patron REST API', version: '1' },
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer' },
        authTokenHeader: { type: 'apiKey', in: 'header', name: 'authToken' },
      },
    },
    paths: {
      [WEBHOOK_PARAMETERS_PATH]: {
        post: {
          summary: 'Register a webhook (active on creation); the response holds its signing secret, shown only here',
          parameters: webhookHeaders,
          requestBody: body(createWebhookBody),
          responses: {
            '200': ok('Webhook created', createdWebhookView),
            '409': errorResponse('Webhook limit reached'),
            ...commonErrors,
          },
        },
        get: {
          summary: 'One webhook by webhookId, or all webhooks of the dApp without it',
          parameters: [
            ...webhookHeaders,
            { name: 'webhookId', in: 'query', required: false, schema: json(getWebhookQuery.shape.webhookId, 'input') },
          ],
          responses: {
            '200': ok('Webhook list fetched', z.array(webhookView)),
            '404': errorResponse('Webhook not found'),
            ...commonErrors,
          },
        },
        patch: {
          summary: 'Activate or deactivate a webhook',
          parameters: webhookHeaders,
          requestBody: body(updateWebhookBody),
          responses: { '200': ok('Webhook updated'), '404': errorResponse('Webhook not found'), ...commonErrors },
        },
        delete: {
          summary: 'Delete a webhook',
          parameters: webhookHeaders,
          requestBody: body(deleteWebhookBody),
          responses: { '200': ok('Webhook deleted'), '404': errorResponse('Webhook not found'), ...commonErrors },
        },
      },
      '/api/admin/account': {
        get: {
          summary: 'The authenticated account',
          security: bearer,
          responses: { '200': ok('Account fetched', accountView), ...commonErrors },
        },
      },
      '/api/admin/tokens': {
        get: {
          summary: 'List auth tokens',
          security: bearer,
          responses: { '200': ok('Auth tokens fetched', z.array(tokenView)), ...commonErrors },
        },
        post: {
          summary: 'Create an auth token (the token is in this response only)',
          security: bearer,
          requestBody: body(createTokenInput, false),
          responses: { '200': ok('Auth token created', tokenView.extend({ authToken: z.string() })), ...commonErrors },
        },
      },
      '/api/admin/tokens/{tokenId}': {
        delete: {
          summary: 'Revoke an auth token',
          security: bearer,
          parameters: [{ name: 'tokenId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': ok('Auth token revoked'), '404': errorResponse('Auth token not found'), ...commonErrors },
        },
      },
      '/api/admin/dapps': {
        get: {
          summary: 'List dApps',
          security: bearer,
          responses: { '200': ok('dApps fetched', z.array(dappView)), ...commonErrors },
        },
        post: {
          summary: 'Create a dApp',
          security: bearer,
          requestBody: body(createDappInput),
          responses: { '200': ok('dApp created', dappView), ...commonErrors },
        },
      },
      '/api/admin/dapps/{dappId}': {
        get: {
          summary: 'One dApp',
          security: bearer,
          parameters: [dappIdParameter],
          responses: { '200': ok('dApp fetched', dappView), '404': errorResponse('dApp not found'), ...commonErrors },
        },
        patch: {
          summary: 'Rename a dApp or change its chains',
          security: bearer,
          parameters: [dappIdParameter],
          requestBody: body(updateDappInput),
          responses: { '200': ok('dApp updated', dappView), '404': errorResponse('dApp not found'), ...commonErrors },
        },
      },
      '/api/admin/dapps/{dappId}/rotate-key': {
        post: {
          summary: 'Replace the API key',
          security: bearer,
          parameters: [dappIdParameter],
          responses: {
            '200': ok('API key rotated', dappView),
            '404': errorResponse('dApp not found'),
            ...commonErrors,
          },
        },
      },
      '/api/admin/dapps/{dappId}/webhooks': {
        get: {
          summary: "The dApp's webhooks (never their signing secrets)",
          security: bearer,
          parameters: [dappIdParameter],
          responses: {
            '200': ok('Webhooks fetched', z.array(adminWebhookView)),
            '404': errorResponse('dApp not found'),
            ...commonErrors,
          },
        },
      },
      '/api/admin/dapps/{dappId}/webhooks/{webhookId}/rotate-secret': {
        post: {
          summary: 'Replace the Standard Webhooks signing secret of a webhook (the new one is in this response only)',
          security: bearer,
          parameters: [dappIdParameter, webhookIdParameter],
          responses: {
            '200': ok('Webhook signing secret rotated', adminWebhookView.extend({ signingSecret: z.string() })),
            '404': errorResponse('Webhook not found'),
            ...commonErrors,
          },
        },
      },
      '/healthz': { get: { summary: 'Process up', responses: { '200': { description: 'ok' } } } },
      '/readyz': {
        get: {
          summary: 'Storage reachable',
          responses: { '200': { description: 'ready' }, '503': { description: 'storage unreachable' } },
        },
      },
    },
  };
}

export function registerOpenApiRoute(app: FastifyInstance): void {
  const doc = buildOpenApiDocument();
  app.get('/openapi.json', async () => doc);
}
