import type { FastifyInstance } from 'fastify';
import type { ChainRegistry } from '../chain/chainRegistry.js';
import type { PaymasterSigner } from '../paymaster/paymasterSigner.js';
import type { Store } from '../store/store.js';

export interface HealthDeps {
  readonly store: Store;
  readonly crypto: { readonly backend: { readonly name: string }; readonly reason: string };
  readonly signer: PaymasterSigner;
  readonly chains: ChainRegistry;
}

/**
 * `/healthz`: the process answers. `/readyz`: and its storage answers too (load balancers route on this); it
 * also says which signing backend is active (the `secp256k1` addon falls back to slow JavaScript silently, so
 * this is where an operator sees it). `/api/chains`: the chains served, with their public addresses.
 */
export function registerHealthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (req, reply) => {
    const crypto = { backend: deps.crypto.backend.name, reason: deps.crypto.reason };
    try {
      await deps.store.ping();
      return { status: 'ready', storage: deps.store.kind, crypto };
    } catch (err) {
      req.log.error({ err }, 'readiness check: storage unreachable');
      return reply.code(503).send({ status: 'unavailable', storage: deps.store.kind, crypto });
    }
  });
  app.get('/api/chains', async () => ({
    signer: deps.signer.address,
    chains: deps.chains.list().map((c) => ({
      chainId: c.chainId,
      entryPoint: c.entryPoint,
      paymaster: c.paymaster,
      embedded: c.embedded,
      ...(c.embedded ? { rpcPath: `/chain/${c.chainId}` } : {}),
      ...(c.simpleAccountFactory === undefined ? {} : { simpleAccountFactory: c.simpleAccountFactory }),
    })),
  }));
}
