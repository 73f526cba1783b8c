import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { sendError } from '../api/envelope.js';
import type { MetricsSettings } from '../config/metricsSettings.js';
import type { PatronMetrics } from './patronMetrics.js';

/**
 * `GET /metrics` in the Prometheus text format (docs/reference/metrics.md, "Metrics"). Off by default. With PATRON_METRICS_PORT it is
 * served by a listener of its own on PATRON_METRICS_HOST (loopback by default), started when the app listens and
 * closed with it, so tests that `inject()` never bind a port; otherwise by the main app, behind
 * PATRON_METRICS_TOKEN. The token, when set, is required on either listener.
 */
export function registerMetricsRoute(
  app: FastifyInstance,
  deps: { readonly config: { readonly metrics: MetricsSettings }; readonly metrics: PatronMetrics | undefined },
): void {
  const settings = deps.config.metrics;
  const metrics = deps.metrics;
  if (!settings.enabled || metrics === undefined) return;
  const authorized = bearerCheck(settings.token);
  if (settings.port === undefined) {
    app.get('/metrics', async (req, reply) => {
      if (!authorized(req.headers.authorization)) {
        reply.header('www-authenticate', 'Bearer');
        return sendError(reply, 401, 'Missing or invalid metrics token (Authorization: Bearer <PATRON_METRICS_TOKEN>)');
      }
      const { contentType, body } = await metrics.render();
      return reply.code(200).header('content-type', contentType).header('cache-control', 'no-store').send(body);
    });
    return;
  }
  const server = metricsServer(metrics, authorized, (err) => app.log.error({ err }, 'metrics scrape failed'));
  const { port, host } = settings;
  app.addHook('onListen', async () => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    app.log.info({ host, port }, 'metrics served on their own listener');
  });
  app.addHook('onClose', async () => {
    if (!server.listening) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
}

/**
 * Compares in constant time: both sides hashed first, so neither the token's length nor how much of a guess was
 * right shows in the timing.
 */
function bearerCheck(token: string | undefined): (header: string | undefined) => boolean {
  if (token === undefined) return () => true;
  const expected = createHash('sha256').update(token).digest();
  return (header) => {
    const m = header === undefined ? null : /^Bearer +(\S+)\s*$/i.exec(header);
    const given = createHash('sha256')
      .update(m?.[1] ?? '')
      .digest();
    return m !== null && timingSafeEqual(given, expected);
  };
}

/** The separate listener: GET /metrics only, the same envelope for its errors. */
function metricsServer(
  metrics: PatronMetrics,
  authorized: (header: string | undefined) => boolean,
  onError: (err: unknown) => void,
): http.Server {
  const envelope = (
    res: http.ServerResponse,
    statusCode: number,
    message: string,
    extra: http.OutgoingHttpHeaders = {},
  ) => {
    const body = JSON.stringify({ statusCode, message });
    res.writeHead(statusCode, { 'content-type': 'application/json; charset=utf-8', ...extra });
    res.end(body);
  };
  return http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') return envelope(res, 404, `Route ${req.method} ${path} not found`);
    if (!authorized(req.headers.authorization)) {
      return envelope(res, 401, 'Missing or invalid metrics token', { 'www-authenticate': 'Bearer' });
    }
    metrics.render().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        res.end(body);
      },
      (err: unknown) => {
        onError(err);
        envelope(res, 500, 'Internal server error');
      },
    );
  });
}
