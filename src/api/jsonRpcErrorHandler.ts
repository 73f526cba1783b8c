import type { FastifyInstance } from 'fastify';
import { RateLimitedError } from '../errors/PatronError.js';
import { RPC, toRpcError } from '../rpc/rpcErrors.js';
import type { StorageHealth } from '../store/db/storageHealth.js';
import { toHttpError } from './envelope.js';

/**
 * The transport error answer of a JSON-RPC scope (a body too large, an unreadable body, a bug): a JSON-RPC
 * error body with the HTTP status the REST API would give, and the scope's own body limit in the message (the
 * app-wide handler knows only the REST limit).
 */
export function setJsonRpcErrorHandler(
  scope: FastifyInstance,
  bodyLimit: number,
  storageHealth?: Pick<StorageHealth, 'report'>,
): void {
  scope.setErrorHandler((err, req, reply) => {
    storageHealth?.report(err);
    if (err instanceof RateLimitedError) {
      const { error, http } = toRpcError(err);
      reply.header('retry-after', String(err.retryAfterSeconds));
      return reply.code(http).send({ jsonrpc: '2.0', id: null, error });
    }
    const h = toHttpError(err, bodyLimit);
    if (h.internal) req.log.error({ err }, 'JSON-RPC transport failed');
    if (h.retryAfterSeconds !== undefined) reply.header('retry-after', String(h.retryAfterSeconds));
    const code = h.internal ? RPC.INTERNAL_ERROR : h.statusCode === 503 ? RPC.STORAGE_UNAVAILABLE : RPC.INVALID_REQUEST;
    return reply.code(h.statusCode).send({ jsonrpc: '2.0', id: null, error: { code, message: h.message } });
  });
}
