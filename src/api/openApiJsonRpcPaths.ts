import { z } from 'zod';
import { MAX_BATCH } from '../rpc/handleJsonRpc.js';
import { DEV_CHAIN_BODY_LIMIT } from './devChainRpc.js';
import { type JsonObject, jsonSchema, pathParameter } from './openApiParts.js';
import { PAYMASTER_URLS, RPC_BODY_LIMIT } from './paymasterRpc.js';

/**
 * The two JSON-RPC endpoints, which are not declared REST routes (route.ts): the paymaster's (paymasterRpc.ts)
 * and the dev chain's (devChainRpc.ts). OpenAPI can describe their envelope, not their methods.
 */
// JSON-RPC 2.0 (https://www.jsonrpc.org/specification), as far as OpenAPI can say it: the envelope, not the methods.
const rpcId = z.union([z.string(), z.number(), z.null()]);
const jsonRpcRequest = z.object({
  jsonrpc: z.string().describe('"2.0"'),
  id: rpcId.optional().describe('Absent: a notification, answered with nothing'),
  method: z.string(),
  params: z.array(z.unknown()).optional(),
});
const jsonRpcResponse = z.union([
  z.object({ jsonrpc: z.literal('2.0'), id: rpcId, result: z.unknown() }),
  z.object({
    jsonrpc: z.literal('2.0'),
    id: rpcId,
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
  }),
]);

export const jsonRpcComponentSchemas = (): JsonObject => ({
  JsonRpcRequest: jsonSchema(jsonRpcRequest, 'input'),
  JsonRpcResponse: jsonSchema(jsonRpcResponse, 'output'),
});

const REQUEST_REF = { $ref: '#/components/schemas/JsonRpcRequest' };
const RESPONSE_REF = { $ref: '#/components/schemas/JsonRpcResponse' };

const rpcBody = (maxBatch?: number): JsonObject => ({
  required: true,
  content: {
    'application/json': {
      schema: {
        oneOf: [
          REQUEST_REF,
          { type: 'array', items: REQUEST_REF, minItems: 1, ...(maxBatch === undefined ? {} : { maxItems: maxBatch }) },
        ],
      },
    },
  },
});

const rpcAnswer = (description: string): JsonObject => ({
  description,
  content: { 'application/json': { schema: { oneOf: [RESPONSE_REF, { type: 'array', items: RESPONSE_REF }] } } },
});

/** Answers of the paymaster endpoint whose body is one JSON-RPC error (rpc/rpcErrors.ts decides the status). */
const rpcError = (description: string): JsonObject => ({
  description,
  content: { 'application/json': { schema: RESPONSE_REF } },
});

const RPC_DOCS = 'docs/reference/json-rpc.md';

/** One paymaster URL per EntryPoint version a call that names none stands for (paymasterRpc.ts PAYMASTER_URLS). */
const paymasterOperation = (prefix: string, entryPointVersion: string): JsonObject => ({
  post: {
    // /api/v1 keeps the id it always had; /api/v2 → paymasterJsonRpcV2.
    operationId: prefix === '/api/v1/' ? 'paymasterJsonRpc' : `paymasterJsonRpc${prefix.slice(5, 7).toUpperCase()}`,
    summary:
      `The paymaster JSON-RPC 2.0 endpoint, EntryPoint v${entryPointVersion} for calls that name none ` +
      '(pm_sponsorUserOperation, pm_getFeeQuoteOrData, ERC-7677, pm_validateSponsorshipPolicies, pm_supportedEntryPoints, ' +
      'pimlico_getTokenQuotes)',
    description:
      `OpenAPI cannot describe JSON-RPC methods: see ${RPC_DOCS} for the methods, their params and results, ` +
      `and the error codes. Batches of up to ${MAX_BATCH} requests are answered 200 with one answer per ` +
      'request that has an id. The API key travels only in the path.',
    tags: ['json-rpc'],
    parameters: [pathParameter('chainId', { type: 'string', pattern: '^\\d{1,15}$' }), pathParameter('apiKey')],
    requestBody: rpcBody(MAX_BATCH),
    responses: {
      '200': rpcAnswer('A result, or a batch of answers'),
      '204': { description: 'Only notifications (requests without id): nothing to answer' },
      '400': rpcError(
        'A lone request failed deterministically: parse error, invalid request or params, domain refusal',
      ),
      '401': rpcError('Unknown API key (-32001)'),
      '413': rpcError(`Body larger than ${RPC_BODY_LIMIT / 1024} KiB`),
      '429': rpcError(
        "A rate limit is spent (-32005, Retry-After): the client IP's, counted per request before the body is " +
          "read (id null), or a dApp's own; see docs/guides/rate-limits.md",
      ),
      '500': rpcError('Internal fault (-32603; details only in the server log)'),
      '503': rpcError('A chain unavailable (-32603; transient)'),
    },
  },
});

export const jsonRpcOperationPaths = (): Record<string, JsonObject> => ({
  ...Object.fromEntries(
    PAYMASTER_URLS.map((u) => [`${u.prefix}{chainId}/{apiKey}`, paymasterOperation(u.prefix, u.entryPointVersion)]),
  ),
  '/chain/{chainId}': {
    post: {
      operationId: 'devChainJsonRpc',
      summary: "The embedded dev chain's Ethereum JSON-RPC (eth_*, for local SDKs and bundlers)",
      description:
        'Only in-process chains are served, never a proxy to a real node; see docs/quickstart.md, "What the dev chain has". ' +
        'Any content type is read as JSON; batches are answered with an array.',
      tags: ['json-rpc'],
      parameters: [pathParameter('chainId')],
      requestBody: rpcBody(),
      responses: {
        '200': rpcAnswer('A result or error per request'),
        '400': rpcError('The body is not JSON (-32700)'),
        '404': rpcError('No embedded chain with that id (-32601)'),
        '413': rpcError(`Body larger than ${DEV_CHAIN_BODY_LIMIT / 1024 / 1024} MiB`),
        '500': rpcError('Internal fault (-32603; details only in the server log)'),
      },
    },
  },
});
