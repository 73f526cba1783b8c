import type { FastifyInstance } from 'fastify';
import type { Store } from '../store/store.js';

/** `/healthz`: the process answers. `/readyz`: and its storage answers too (load balancers route on this). */
export function registerHealthRoutes(app: FastifyInstance, deps: { store: Store }): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (req, reply) => {
    try {
      await deps.store.ping();
      return { status: 'ready', storage: deps.store.kind };
    } catch (err) {
      req.log.error({ err }, 'readiness check: storage unreachable');
      return reply.code(503).send({ status: 'unavailable', storage: deps.store.kind });
    }
  });
}
