import type { FastifyInstance } from 'fastify';
import { adminAccountRoutes } from './adminAccount.js';
import { adminAuditLogRoutes } from './adminAuditLog.js';
import { adminDappRoutes } from './adminDapps.js';
import { adminKeeperTopupRoutes } from './adminKeeperTopups.js';
import { adminLedgerRoutes } from './adminLedger.js';
import { adminLifecycleEventRoutes } from './adminLifecycleEvents.js';
import { adminMeeTankRoutes } from './adminMeeTanks.js';
import { adminMemberRoutes } from './adminMembers.js';
import { adminPaymasterStatusRoutes } from './adminPaymasterStatus.js';
import { adminPolicyRoutes } from './adminPolicies.js';
import { adminRequestLogRoutes } from './adminRequestLog.js';
import { adminSessionRoutes } from './adminSession.js';
import { adminSponsorshipTokenRoutes } from './adminSponsorshipTokens.js';
import { adminTokenGuaranteeRoutes } from './adminTokenGuarantees.js';
import { adminTokenRoutes } from './adminTokens.js';
import { adminWebhookRoutes } from './adminWebhooks.js';
import { healthRoutes } from './health.js';
import type { JsonObject } from './openApiParts.js';
import { buildOpenApiDocument, openApiRoute } from './openapi.js';
import type { RouteDef } from './route.js';
import type { RouteAuthDeps } from './routeAuth.js';
import { webhookParametersRoutes } from './webhookParameters.js';

/** What the declared routes need: the union of each group's dependencies (deps.ts provides them all). */
export type RestRouteDeps = RouteAuthDeps &
  Parameters<typeof healthRoutes>[0] &
  Parameters<typeof webhookParametersRoutes>[0] &
  Parameters<typeof adminWebhookRoutes>[0] &
  Parameters<typeof adminPolicyRoutes>[0] &
  Parameters<typeof adminSessionRoutes>[0] &
  Parameters<typeof adminPaymasterStatusRoutes>[0] &
  Parameters<typeof adminRequestLogRoutes>[0] &
  Parameters<typeof adminLifecycleEventRoutes>[0] &
  Parameters<typeof adminLedgerRoutes>[0] &
  Parameters<typeof adminSponsorshipTokenRoutes>[0] &
  Parameters<typeof adminTokenGuaranteeRoutes>[0] &
  Parameters<typeof adminKeeperTopupRoutes>[0] &
  Parameters<typeof adminMeeTankRoutes>[0] &
  Parameters<typeof adminMemberRoutes>[0] &
  Parameters<typeof adminAuditLogRoutes>[0];

/**
 * Every declared REST route, in one explicit list (no autoload): the app registers them, /openapi.json
 * documents them, and test/adminRoutes.auth.test.ts runs each through the credential and CSRF cases.
 */
export function restRoutes(deps: RestRouteDeps): readonly RouteDef[] {
  let document: JsonObject = {};
  const routes = [
    ...healthRoutes(deps),
    openApiRoute(() => document),
    ...webhookParametersRoutes(deps),
    ...adminAccountRoutes(),
    ...adminTokenRoutes(deps),
    ...adminDappRoutes(deps),
    ...adminSponsorshipTokenRoutes(deps),
    ...adminTokenGuaranteeRoutes(deps),
    ...adminWebhookRoutes(deps),
    ...adminPolicyRoutes(deps),
    ...adminSessionRoutes(deps),
    ...adminPaymasterStatusRoutes(deps),
    ...adminRequestLogRoutes(deps),
    ...adminLifecycleEventRoutes(deps),
    ...adminLedgerRoutes(deps),
    ...adminKeeperTopupRoutes(deps),
    ...adminMeeTankRoutes(deps),
    ...adminMemberRoutes(deps),
    ...adminAuditLogRoutes(deps),
  ];
  // Built once, at start-up: a declaration the document cannot describe fails here, not on a request.
  document = buildOpenApiDocument(routes);
  return routes;
}

export function registerRestRoutes(app: FastifyInstance, deps: RestRouteDeps): void {
  for (const r of restRoutes(deps)) {
    app.route({ method: r.method, url: r.path, handler: (req, reply) => r.run(req, reply, deps) });
  }
}
