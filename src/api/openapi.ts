import { z } from 'zod';
import { jsonRpcComponentSchemas, jsonRpcOperationPaths } from './openApiJsonRpcPaths.js';
import { meeOperationPaths } from './openApiMeePaths.js';
import { componentSchemas, type JsonObject, securitySchemes } from './openApiParts.js';
import { routePaths } from './openApiRoutes.js';
import { type RouteDef, route } from './route.js';

/**
 * OpenAPI 3.1 document of every route the app registers (test/openapi.test.ts fails on a route missing here):
 * the REST routes from their declarations (route.ts), the two JSON-RPC endpoints as one POST each (their methods
 * are described in docs/reference/json-rpc.md).
 */
export function buildOpenApiDocument(routes: readonly RouteDef[]): JsonObject {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Patron REST API',
      version: '1',
      description:
        'REST answers use one envelope, `{statusCode, message, data?}`; errors never carry `data`. Admin routes ' +
        'take an account auth token or, from the dashboard, the session cookie (plus the CSRF header on writes).',
    },
    components: {
      securitySchemes: securitySchemes(),
      schemas: { ...componentSchemas(), ...jsonRpcComponentSchemas() },
    },
    paths: { ...routePaths(routes), ...jsonRpcOperationPaths(), ...meeOperationPaths() },
  };
}

/** `GET /openapi.json`; the document is built once, by the caller, from the full list (this route included). */
export function openApiRoute(document: () => JsonObject): RouteDef {
  return route({
    method: 'GET',
    path: '/openapi.json',
    auth: 'public',
    operationId: 'openApiDocument',
    summary: 'This document',
    tag: 'service',
    answer: { raw: z.looseObject({}), description: 'OpenAPI 3.1' },
    handler: async () => document(),
  });
}
