import type { FastifyInstance } from 'fastify';
import { adminPaths } from './openApiAdminPaths.js';
import { dashboardPaths } from './openApiDashboardPaths.js';
import { componentSchemas, securitySchemes } from './openApiParts.js';
import { jsonRpcComponentSchemas, servicePaths } from './openApiServicePaths.js';
import { webhookParametersPaths } from './openApiWebhookPaths.js';

/**
 * OpenAPI 3.1 document of every route the app registers (test/openapi.test.ts fails on a route missing here),
 * generated from the same zod schemas the routes parse and answer with. The JSON-RPC endpoints appear as one
 * POST each; their methods are described in the README.
 */
export function buildOpenApiDocument(): Record<string, unknown> {
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
    paths: {
      ...webhookParametersPaths(),
      ...adminPaths(),
      ...dashboardPaths(),
      ...servicePaths(),
    },
  };
}

export function registerOpenApiRoute(app: FastifyInstance): void {
  const doc = buildOpenApiDocument();
  app.get('/openapi.json', async () => doc);
}
