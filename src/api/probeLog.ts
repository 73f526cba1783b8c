import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';

/**
 * Probe routes: load balancers and orchestrators poll `/healthz` and `/readyz` every few seconds and Prometheus
 * scrapes `/metrics`; at info, two access lines per poll buried the lines that matter. Their access line is at
 * debug when they answer 2xx and at warn when they do not (a failing readiness check, a scraper with the wrong
 * token, a rate-limited probe): a failing probe is what an operator looks for (docs/guides/operations.md, "Logs").
 */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** The path without its query and one trailing slash (the router ignores it too). */
export function isProbeUrl(url: string): boolean {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  return PROBE_PATHS.has(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
}

function logProbe(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const line = { req, res: reply, responseTime: reply.elapsedTime };
  if (reply.statusCode >= 200 && reply.statusCode < 300) req.log.debug(line, 'probe answered');
  else req.log.warn(line, 'probe failed');
  done();
}

/**
 * Adds the probe access line to the probe routes only, as they are declared (call before declaring them): an
 * `onResponse` hook on every route would cost each paymaster request a hook run for nothing. Fastify's own two
 * request lines are off for these URLs (app.ts, `disableRequestLogging`).
 */
export function registerProbeLog(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!PROBE_PATHS.has(route.url)) return;
    const existing = route.onResponse;
    const hooks: onResponseHookHandler[] =
      existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
    route.onResponse = [...hooks, logProbe];
  });
}
