import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { registerDashboardRoutes } from './api/dashboardRoutes.js';
import { registerDevChainRoutes } from './api/devChainRpc.js';
import { sendError, toHttpError } from './api/envelope.js';
import { registerJsonBodyParser } from './api/jsonBodyParser.js';
import { isJsonRpcUrl, jsonRpcBadUrl, jsonRpcNotFound } from './api/jsonRpcPaths.js';
import { registerMeeSponsorRoutes } from './api/meeSponsorRoutes.js';
import { admitPaymasterRequest } from './api/paymasterAdmission.js';
import { isPaymasterRpcUrl, registerPaymasterRpcRoutes } from './api/paymasterRpc.js';
import { isProbeUrl, registerProbeLog } from './api/probeLog.js';
import { registerRestRoutes } from './api/restRoutes.js';
import type { Deps } from './deps.js';
import { RateLimitedError } from './errors/PatronError.js';
import { lazyChildLoggerFactory } from './logger.js';
import { registerMetricsRoute } from './metrics/metricsRoute.js';

/** Builds the HTTP application. It never listens: main.ts does, tests use `inject()`. */
export function createApp(deps: Deps): FastifyInstance {
  const bodyLimit = deps.config.bodyLimitBytes;
  const loggerInstance: FastifyBaseLogger = deps.logger;
  const app: FastifyInstance = Fastify({
    loggerInstance,
    // Access log decision. REST routes keep Fastify's two info lines per request (incoming, completed): they
    // are low-volume management calls worth an audit trail. Paymaster traffic (`/api/v1/{chainId}/{apiKey}`) is
    // the hot path: two info lines per sponsorship cost ~400 bytes and a measurable share of its CPU (see
    // bench/README.md), which at 1,000 req/s is ~35 GB of logs a day, so its access line is at debug
    // (paymasterRpc.ts; LOG_LEVEL=debug shows it). What an operator needs stays at higher levels: internal
    // errors (error), webhook failures (warn), and start-up facts (info). Probes (`/healthz`, `/readyz`,
    // `/metrics`) poll every few seconds: their access line is at debug, or at warn when they fail (probeLog.ts).
    logController: new LogController({
      disableRequestLogging: (req) => isPaymasterRpcUrl(req.url) || isProbeUrl(req.url),
    }),
    // Request loggers are built on their first line (logger.ts): a paymaster request usually logs none.
    childLoggerFactory: lazyChildLoggerFactory,
    bodyLimit,
    genReqId: () => randomUUID(),
    // The client IP (rate limits, logs): X-Forwarded-For is believed only from these proxies (none by default).
    trustProxy: deps.config.rateLimits.trustedProxies.length === 0 ? false : [...deps.config.rateLimits.trustedProxies],
    routerOptions: { ignoreTrailingSlash: true },
    // Errors raised before routing (a malformed percent-encoding in the URL) get the same envelope.
    frameworkErrors: (err, req, reply) => {
      if (isJsonRpcUrl(req.url) && (err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_MAX_PARAM_LENGTH')) {
        // Not counted: Fastify answers a URL its router cannot read before any hook, and builds its request without
        // the trusted proxies, so `req.ip` would be the proxy's (one client would spend everyone's budget). The
        // answer is fixed, with no key lookup and no body read: it costs what a refusal would.
        return jsonRpcBadUrl(err.statusCode ?? 400, reply);
      }
      const h =
        err.code === 'FST_ERR_BAD_URL' ? { statusCode: 400, message: 'Malformed URL' } : toHttpError(err, bodyLimit);
      return sendError(reply, h.statusCode, h.message);
    },
  });

  registerJsonBodyParser(app, bodyLimit);
  // Before any route is declared: it hooks the probe routes as they are.
  registerProbeLog(app);

  // Every request spends its client IP's budget before anything else is done for it: unauthenticated routes, wrong
  // credentials and the dashboard alike. The paymaster URLs spend `calls.perIp` (preflights, unparsable bodies and
  // unknown keys included: paymasterAdmission.ts answers a refusal in their envelope), the dev chain a budget of its
  // own, everything else `http.perIp`.
  app.addHook('onRequest', async (req, reply) => {
    if (isPaymasterRpcUrl(req.url)) return admitPaymasterRequest({ limits: deps.limits, req, reply });
    if (req.url.startsWith('/chain/')) return deps.limits.devChain(req.ip);
    return deps.limits.http(req.ip);
  });

  app.setErrorHandler((err, req, reply) => {
    deps.storageHealth.report(err);
    if (err instanceof RateLimitedError) reply.header('retry-after', String(err.retryAfterSeconds));
    const h = toHttpError(err, bodyLimit);
    if (h.retryAfterSeconds !== undefined) reply.header('retry-after', String(h.retryAfterSeconds));
    if (h.internal) req.log.error({ err }, 'request failed');
    else req.log.debug({ err }, 'request refused');
    return sendError(reply, h.statusCode, h.message);
  });
  app.setNotFoundHandler(
    (req, reply) =>
      jsonRpcNotFound(req.method, req.url, reply) ??
      sendError(reply, 404, `Route ${req.method} ${req.url.split('?')[0]} not found`),
  );

  // Every REST route is declared once (src/api/restRoutes.ts): auth, parsing, envelope and /openapi.json.
  registerRestRoutes(app, deps);
  registerDashboardRoutes(app, deps);
  registerPaymasterRpcRoutes(app, deps);
  registerMeeSponsorRoutes(app, deps);
  registerDevChainRoutes(app, deps);
  registerMetricsRoute(app, deps);
  return app;
}
