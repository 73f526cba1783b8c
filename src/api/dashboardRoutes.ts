import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * Serves the dashboard (dashboard/ at the repository root: one HTML page, plain ES modules and a style sheet,
 * no build step) under the configured base path, from memory. Every page path answers the same HTML; the
 * page's script routes on the URL and talks only to the admin REST API.
 *
 * Not a declared REST route (route.ts): these answer HTML, scripts and style sheets with their own caching and
 * security headers, need no credentials (the page signs in through the API), and are no part of the API's
 * document.
 */
const DASHBOARD_DIR = fileURLToPath(new URL('../../dashboard/', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Only our own files, no inline script or style, no framing, no plug-ins, requests only to this origin: an
 * injected string could not run even if it reached the page (which renders text with textContent only).
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const assetDir = path.join(dir, 'assets');
  for (const name of fs.readdirSync(assetDir)) {
    const type = TYPES[path.extname(name)];
    if (type === undefined) continue;
    const body = fs.readFileSync(path.join(assetDir, name));
    assets.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return assets;
}

export function registerDashboardRoutes(
  app: FastifyInstance,
  deps: { config: { dashboard: { basePath: string } } },
): void {
  const base = deps.config.dashboard.basePath;
  const assets = loadAssets(DASHBOARD_DIR);
  // The base path is validated by the config (letters, digits, . _ ~ - and slashes): safe inside an attribute.
  const html = fs.readFileSync(path.join(DASHBOARD_DIR, 'index.html'), 'utf8').replaceAll('{{base}}', base);

  const sendPage = (reply: FastifyReply) =>
    reply
      .headers({ ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .send(html);

  app.get(base, async (_req, reply) => sendPage(reply));
  app.get<{ Params: { file: string } }>(`${base}/assets/:file`, async (req, reply) => {
    const asset = assets.get(req.params.file);
    if (asset === undefined) return reply.callNotFound();
    // Revalidated on every load (no stale script after an upgrade), answered 304 while unchanged.
    reply.headers({ ...SECURITY_HEADERS, 'content-type': asset.type, 'cache-control': 'no-cache', etag: asset.etag });
    if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.send(asset.body);
  });
  app.get(`${base}/*`, async (_req, reply) => sendPage(reply));
}
