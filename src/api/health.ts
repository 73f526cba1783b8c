import type { FastifyInstance } from 'fastify';
import type { ChainRegistry } from '../chain/chainRegistry.js';
import type { PaymasterSigner } from '../paymaster/paymasterSigner.js';
import type { Store } from '../store/store.js';
import type { TokenCatalog } from '../tokens/tokenCatalog.js';

export interface HealthDeps {
  readonly store: Store;
  readonly crypto: { readonly backend: { readonly name: string }; readonly reason: string };
  readonly signer: PaymasterSigner;
  readonly chains: ChainRegistry;
  readonly tokenCatalog: Pick<TokenCatalog, 'snapshot'>;
}

/**
 * `/healthz`: the process answers. `/readyz`: and its storage answers too (load balancers route on this); it
 * also says which signing backend is active (the `secp256k1` addon falls back to slow JavaScript silently, so
 * this is where an operator sees it). `/api/chains`: the chains served, with their public addresses, the fee
 * tokens of the token mode (usable now or why not), and on the dev chain its funded demo account.
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
      ...(c.demoAccount === undefined ? {} : { demoAccount: c.demoAccount }),
      feeTokens: feeTokens(deps.tokenCatalog, c.chainId),
    })),
  }));
}

function feeTokens(catalog: Pick<TokenCatalog, 'snapshot'>, chainId: number) {
  const snapshot = catalog.snapshot(chainId);
  if (snapshot === undefined) return [];
  return [
    ...snapshot.tokens.map((t) => ({
      address: t.address,
      symbol: t.symbol,
      decimals: t.decimals,
      premiumPercentage: t.premiumPercentage,
      usable: true,
    })),
    ...[...snapshot.unusable].map(([address, reason]) => ({ address, usable: false, reason })),
  ];
}
