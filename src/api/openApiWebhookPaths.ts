import { z } from 'zod';
import {
  BODY_ERRORS,
  errorResponses,
  INTERNAL_ERROR,
  type JsonObject,
  jsonBody,
  okResponse,
  queryParameters,
} from './openApiParts.js';
import {
  createdWebhookView,
  createWebhookBody,
  deleteWebhookBody,
  getWebhookQuery,
  updateWebhookBody,
  WEBHOOK_PARAMETERS_PATH,
  webhookView,
} from './webhookParameters.js';

/** The spec's webhook management API (§4.1, README "Webhook management API"): one path, four methods. */
const TAG = 'webhooks (spec)';

// Both headers on every call (webhookCredentials.ts): the auth token names the account, the API key its dApp.
const security = [{ authTokenHeader: [], apiKeyHeader: [] }];

const CREDENTIAL_ERRORS = {
  '401': 'A credential header missing or blank, or an unknown token, unknown key, or a key of another account',
};
const INVALID_FIELD = { '400': 'A field missing or invalid; the message names it' };
const NOT_FOUND = { '404': 'No webhook of this dApp has that webhookId' };

export const webhookParametersPaths = (): Record<string, JsonObject> => ({
  [WEBHOOK_PARAMETERS_PATH]: {
    post: {
      operationId: 'createWebhook',
      summary: 'Register a webhook (active on creation); the response holds its signing secret, shown only here',
      tags: [TAG],
      security,
      requestBody: jsonBody(createWebhookBody),
      responses: {
        '200': okResponse('Webhook created', createdWebhookView),
        ...errorResponses(
          BODY_ERRORS,
          INVALID_FIELD,
          { '400': 'webhookUrl refused by the URL policy (see README)' },
          CREDENTIAL_ERRORS,
          { '409': 'Webhook limit of the dApp reached' },
          INTERNAL_ERROR,
        ),
      },
    },
    get: {
      operationId: 'getWebhooks',
      summary: 'One webhook by webhookId, or all webhooks of the dApp without it (a body is ignored)',
      tags: [TAG],
      security,
      parameters: queryParameters(getWebhookQuery),
      responses: {
        '200': okResponse('Webhook list fetched', z.array(webhookView)),
        ...errorResponses({ '400': 'webhookId given more than once' }, CREDENTIAL_ERRORS, NOT_FOUND, INTERNAL_ERROR),
      },
    },
    patch: {
      operationId: 'updateWebhook',
      summary: 'Activate or deactivate a webhook',
      tags: [TAG],
      security,
      requestBody: jsonBody(updateWebhookBody),
      responses: {
        '200': okResponse('Webhook updated'),
        ...errorResponses(BODY_ERRORS, INVALID_FIELD, CREDENTIAL_ERRORS, NOT_FOUND, INTERNAL_ERROR),
      },
    },
    delete: {
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook',
      tags: [TAG],
      security,
      requestBody: jsonBody(deleteWebhookBody),
      responses: {
        '200': okResponse('Webhook deleted'),
        ...errorResponses(BODY_ERRORS, INVALID_FIELD, CREDENTIAL_ERRORS, NOT_FOUND, INTERNAL_ERROR),
      },
    },
  },
});
