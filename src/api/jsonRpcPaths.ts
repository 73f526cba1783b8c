import type { FastifyReply } from 'fastify';
import { RPC } from '../rpc/rpcErrors.js';

/**
 * The REST routes that share the paymaster's `/api/v2/` prefix: the spec's webhook management API
 * (`/api/v2/public/sdk/webhookParameters`, §4.1). They answer in the REST envelope and spend the REST rate limit.
 */
export const REST_UNDER_JSON_RPC = '/api/v2/public/';

/**
 * The URL prefixes answered in JSON-RPC, whatever happens under them: the paymaster endpoints and the dev
 * chain. A client of these speaks JSON-RPC only, and a paymaster path holds an API key, so an answer never
 * echoes the path. Each entry is the prefix and the number of path segments its endpoint has after it (the
 * paymaster's `{chainId}/{apiKey}`, the dev chain's `{chainId}`); another version's prefix is one more line.
 */
const JSON_RPC_PATHS: readonly { readonly prefix: string; readonly segments: number }[] = [
  { prefix: '/api/v1/', segments: 2 },
  { prefix: '/api/v2/', segments: 2 },
  { prefix: '/chain/', segments: 1 },
];

function match(url: string) {
  const path = url.split('?', 1)[0] ?? '';
  if (path.startsWith(REST_UNDER_JSON_RPC)) return undefined;
  for (const p of JSON_RPC_PATHS) {
    if (path.startsWith(p.prefix) || path === p.prefix.slice(0, -1)) return { ...p, path };
  }
  return undefined;
}

export function isJsonRpcUrl(url: string): boolean {
  return match(url) !== undefined;
}

export function sendJsonRpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.code(status).send({ jsonrpc: '2.0', id: null, error: { code, message } });
}

/**
 * What no route under a JSON-RPC prefix answered: another method on an endpoint's path is 405 with
 * `Allow: POST`; any other path is 404. Undefined when the URL is not under a JSON-RPC prefix.
 */
export function jsonRpcNotFound(method: string, url: string, reply: FastifyReply): FastifyReply | undefined {
  const m = match(url);
  if (m === undefined) return undefined;
  const rest = m.path.slice(m.prefix.length).replace(/\/$/, '');
  const segments = rest === '' ? 0 : rest.split('/').length;
  if (segments === m.segments && method !== 'POST') {
    reply.header('allow', 'POST');
    return sendJsonRpcError(reply, 405, RPC.INVALID_REQUEST, `Invalid request: ${method} is not allowed, use POST`);
  }
  const shape = m.segments === 2 ? `${m.prefix}{chainId}/{apiKey}` : `${m.prefix}{chainId}`;
  return sendJsonRpcError(reply, 404, RPC.INVALID_REQUEST, `Invalid request: no endpoint here; use POST ${shape}`);
}

/** A URL Fastify could not route under a JSON-RPC prefix: undecodable, or a segment too long to be a key. */
export function jsonRpcBadUrl(statusCode: number, reply: FastifyReply): FastifyReply {
  return statusCode === 414
    ? sendJsonRpcError(
        reply,
        414,
        RPC.INVALID_REQUEST,
        'Invalid request: a path segment is too long (an API key has at most 100 characters)',
      )
    : sendJsonRpcError(reply, 400, RPC.INVALID_REQUEST, 'Invalid request: malformed URL (bad percent-encoding)');
}
