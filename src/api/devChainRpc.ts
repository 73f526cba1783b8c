import type { FastifyInstance } from 'fastify';
import type { ChainRegistry } from '../chain/chainRegistry.js';
import { setJsonRpcErrorHandler } from './jsonRpcErrorHandler.js';

/** Large enough for a contract deployment's calldata. */
export const DEV_CHAIN_BODY_LIMIT = 4 * 1024 * 1024;

/**
 * `POST /chain/{chainId}`: the embedded dev chain as a JSON-RPC endpoint, so a local dApp, SDK or bundler can
 * use the very chain Patron signs for. Only in-process chains are served (never a proxy to a real node).
 */
export function registerDevChainRoutes(app: FastifyInstance, deps: { chains: ChainRegistry }): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: DEV_CHAIN_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    setJsonRpcErrorHandler(scope, DEV_CHAIN_BODY_LIMIT);

    scope.post<{ Params: { chainId: string } }>('/chain/:chainId', async (req, reply) => {
      const chain = deps.chains.list().find((c) => c.embedded && String(c.chainId) === req.params.chainId);
      if (chain === undefined) {
        return reply
          .code(404)
          .send({ jsonrpc: '2.0', id: null, error: { code: -32601, message: 'No embedded chain with that id' } });
      }
      let body: unknown;
      try {
        body = JSON.parse(String(req.body));
      } catch {
        return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      }
      const one = async (r: unknown) => {
        const { id = null, method, params } = (r ?? {}) as { id?: unknown; method?: unknown; params?: unknown };
        if (typeof method !== 'string')
          return { jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid request' } };
        try {
          const result = await chain.request({ method, params: Array.isArray(params) ? params : [] });
          return { jsonrpc: '2.0', id, result };
        } catch (err) {
          const e = err as { code?: unknown; message?: unknown; data?: unknown };
          return {
            jsonrpc: '2.0',
            id,
            error: {
              code: typeof e.code === 'number' ? e.code : -32603,
              message: String(e.message ?? 'error'),
              ...(e.data === undefined ? {} : { data: e.data }),
            },
          };
        }
      };
      return Array.isArray(body) ? Promise.all(body.map(one)) : one(body);
    });
  });
}
