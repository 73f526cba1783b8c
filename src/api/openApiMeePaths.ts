import type { JsonObject } from './openApiParts.js';
import { pathParameter } from './openApiParts.js';

/**
 * The MEE sponsor endpoints (meeSponsorRoutes.ts), not declared REST routes: they speak what abstractjs sends and
 * reads (docs/guides/mee-sponsorship.md), with its error body, not the REST envelope.
 */
const GUIDE = 'docs/guides/mee-sponsorship.md';

const errors: JsonObject = {
  description: 'Refused: `{ "errors": [{ "code", "msg" }] }` (the codes are in the guide)',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['errors'],
        properties: {
          errors: {
            type: 'array',
            items: {
              type: 'object',
              required: ['code', 'msg'],
              properties: { code: { type: 'string' }, msg: { type: 'string' } },
            },
          },
        },
      },
    },
  },
};

const tankParameters = [
  pathParameter('dappId'),
  pathParameter('chainId', { type: 'string', pattern: '^\\d{1,15}$' }),
  pathParameter('tank', { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' }),
];

const bearer: JsonObject = {
  name: 'authorization',
  in: 'header',
  required: true,
  description: "`Bearer <sponsorship token>` from the dApp's backend (abstractjs `customHeaders`)",
  schema: { type: 'string' },
};

const object = (description: string): JsonObject => ({
  description,
  content: { 'application/json': { schema: { type: 'object' } } },
});

export const meeOperationPaths = (): Record<string, JsonObject> => ({
  '/mee/{dappId}/v1/sponsorship/nonce/{chainId}/{tank}': {
    get: {
      operationId: 'meeSponsorshipNonce',
      summary: "A fresh nonce lane of the dApp's gas tank: `{ nonceKey, nonce }` (decimal strings)",
      description: `See ${GUIDE}, "Nonces that never collide".`,
      tags: ['mee'],
      parameters: [...tankParameters, bearer],
      responses: { '200': object('The lane'), '400': errors, '401': errors, '403': errors, '404': errors },
    },
  },
  '/mee/{dappId}/v1/sponsorship/sign/{chainId}/{tank}': {
    post: {
      operationId: 'meeSponsorshipSign',
      summary: "The node's quote signed by the tank's owner once every check passed",
      description: `The body is the MEE node's whole quote; the answer is the same quote with userOps[0].userOp.signature written. See ${GUIDE}.`,
      tags: ['mee'],
      parameters: [...tankParameters, bearer],
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      responses: {
        '200': object('The signed quote'),
        '400': errors,
        '401': errors,
        '403': errors,
        '404': errors,
        '413': errors,
        '415': errors,
        '503': errors,
      },
    },
  },
  '/mee/{dappId}/v1/sponsorship/info': {
    get: {
      operationId: 'meeSponsorshipInfo',
      summary: "The dApp's active gas tanks by chain, each with its token balance",
      description: `See ${GUIDE}, "The endpoints".`,
      tags: ['mee'],
      parameters: [pathParameter('dappId')],
      responses: { '200': object('Tanks by chain id'), '403': errors, '404': errors },
    },
  },
});
