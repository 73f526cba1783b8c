import { z } from 'zod';
import type { ChainRegistry } from '../chain/chainRegistry.js';
import type { DevBundlerStatus } from '../devBundler/devBundler.js';
import type { PaymasterSigner } from '../paymaster/signer/paymasterSigner.js';
import { newestMigration } from '../store/db/migrate.js';
import type { StorageHealth } from '../store/db/storageHealth.js';
import type { Store } from '../store/store.js';
import type { TokenCatalog } from '../tokens/tokenCatalog.js';
import { patronVersion } from '../version.js';
import { jsonSchema } from './openApiParts.js';
import { type RouteDef, route } from './route.js';

export interface HealthDeps {
  readonly store: Store;
  /** The storage's fault, checked by a probe on each /readyz (at most once a second while faulted). */
  readonly storageHealth: Pick<StorageHealth, 'check'>;
  readonly crypto: { readonly backend: { readonly name: 'native' | 'js' }; readonly reason: string };
  readonly signer: PaymasterSigner;
  readonly chains: ChainRegistry;
  readonly tokenCatalog: Pick<TokenCatalog, 'snapshot'>;
  /** The dev stack's bundler (src/devBundler/), when this process runs one. */
  readonly devBundler?: { status(): DevBundlerStatus } | undefined;
}

/**
 * The answers are plain objects (no envelope: load balancers and probes read them); strict schemas, so
 * test/openapi.test.ts fails on a field added or dropped without the document.
 */
export const healthzAnswer = z.strictObject({
  status: z.literal('ok'),
  version: z.string().describe("This build's version (package.json)"),
  schema: z.string().describe('The newest database migration this build has: the schema of the database it started on'),
});

const readiness = {
  storage: z.enum(['sqlite', 'postgres']),
  crypto: z.strictObject({ backend: z.enum(['native', 'js']), reason: z.string() }),
  bundler: z
    .strictObject({
      state: z.enum(['starting', 'ready', 'failed', 'stopped']),
      url: z.string(),
      reason: z.string().optional(),
    })
    .optional()
    .describe(
      "The dev stack's bundler (alto beside the embedded dev chain; docs/guides/dev-bundler.md), only when it runs: its state does not change the status, as the paymaster serves without it",
    ),
};
export const readyzAnswer = z.strictObject({ status: z.literal('ready'), ...readiness });
export const notReadyAnswer = z.strictObject({
  status: z.literal('unavailable'),
  ...readiness,
  fault: z
    .strictObject({
      kind: z
        .string()
        .describe(
          'disk_full, read_only, locked, corrupt, io, cannot_open, unreachable (docs/guides/operations.md, "Storage faults"), or unknown',
        ),
      since: z.string().describe('When it was first seen (ISO 8601)'),
    })
    .optional(),
});

const feeToken = z.union([
  z.strictObject({
    address: z.string(),
    symbol: z.string(),
    decimals: z.number().int(),
    premiumPercentage: z.string(),
    usable: z.literal(true),
  }),
  z.strictObject({ address: z.string(), usable: z.literal(false), reason: z.string() }),
]);

export const chainsAnswer = z.strictObject({
  signer: z.string(),
  chains: z.array(
    z.strictObject({
      chainId: z.number().int(),
      entryPoint: z.string(),
      paymaster: z.string(),
      deployments: z
        .array(z.strictObject({ entryPointVersion: z.string(), entryPoint: z.string(), paymaster: z.string() }))
        .describe(
          "Patron's paymaster per EntryPoint version this chain is served for (entryPoint/paymaster: the first)",
        ),
      embedded: z.boolean(),
      rpcPath: z.string().optional().describe('The embedded dev chain only: its JSON-RPC path'),
      bundlerUrl: z
        .string()
        .nullable()
        .optional()
        .describe(
          "The embedded dev chain only: its bundler's URL (the SDKs' bundlerUrl; docs/guides/dev-bundler.md), null when none runs (PATRON_DEV_BUNDLER=false, alto not installed, or it failed or stopped)",
        ),
      simpleAccountFactory: z.string().optional(),
      demoAccount: z
        .strictObject({ address: z.string(), owner: z.string(), ownerPrivateKey: z.string() })
        .optional()
        .describe('The dev chain only: a funded SimpleAccount whose owner key derives from a public phrase'),
      feeTokens: z.array(feeToken),
    }),
  ),
});

const TAG = 'service';

/**
 * `/healthz`: the process answers. `/readyz`: and its storage answers too (load balancers route on this); it
 * also says which signing backend is active (the `secp256k1` addon falls back to slow JavaScript silently, so
 * this is where an operator sees it). `/api/chains`: the chains served, with their public addresses, the fee
 * tokens of the token mode (usable now or why not), and on the dev chain its funded demo account.
 */
export function healthRoutes(deps: HealthDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/healthz',
      auth: 'public',
      operationId: 'healthz',
      summary: 'The process answers; its version and database schema',
      tag: TAG,
      answer: { raw: healthzAnswer, description: 'Up' },
      handler: async () => ({ status: 'ok' as const, version: patronVersion(), schema: newestMigration() }),
    }),
    route({
      method: 'GET',
      path: '/readyz',
      auth: 'public',
      operationId: 'readyz',
      summary: 'Storage answers too (load balancers route on this); which signing backend is active',
      tag: TAG,
      answer: { raw: readyzAnswer, description: 'Ready' },
      otherResponses: {
        '503': {
          description: 'The storage cannot take writes now (its fault named; the log line has the cause and path)',
          content: { 'application/json': { schema: jsonSchema(notReadyAnswer, 'output') } },
        },
      },
      handler: async ({ req, reply }) => {
        const storage = deps.store.kind;
        const crypto = { backend: deps.crypto.backend.name, reason: deps.crypto.reason };
        const bundler = deps.devBundler?.status();
        const parts = { storage, crypto, ...(bundler === undefined ? {} : { bundler }) };
        let fault: z.infer<typeof notReadyAnswer>['fault'];
        try {
          // The probe asks for a write (lock, free space, writable file; PostgreSQL not read-only): a full disk
          // answers reads, so a read alone said "ready" while every sponsorship failed.
          const current = await deps.storageHealth.check();
          if (current !== undefined) fault = { kind: current.kind, since: new Date(current.since).toISOString() };
        } catch (err) {
          req.log.error({ err }, 'readiness check: the storage probe failed');
          fault = { kind: 'unknown', since: new Date().toISOString() };
        }
        if (fault === undefined) return { status: 'ready' as const, ...parts };
        const body: z.infer<typeof notReadyAnswer> = { status: 'unavailable', ...parts, fault };
        return reply.code(503).send(body);
      },
    }),
    route({
      method: 'GET',
      path: '/api/chains',
      auth: 'public',
      operationId: 'listChains',
      summary: 'The chains served, with public addresses, fee tokens (usable or why not) and dev-chain helpers',
      tag: TAG,
      answer: { raw: chainsAnswer, description: 'Chains' },
      handler: async () => ({
        signer: deps.signer.address,
        chains: deps.chains.list().map((c) => ({
          chainId: c.chainId,
          entryPoint: c.entryPoint,
          paymaster: c.paymaster,
          deployments: c.deployments.map((d) => ({
            entryPointVersion: d.entryPointVersion,
            entryPoint: d.entryPoint,
            paymaster: d.paymaster,
          })),
          embedded: c.embedded,
          ...(c.embedded ? { rpcPath: `/chain/${c.chainId}`, bundlerUrl: devBundlerUrl(deps.devBundler) } : {}),
          ...(c.simpleAccountFactory === undefined ? {} : { simpleAccountFactory: c.simpleAccountFactory }),
          ...(c.demoAccount === undefined ? {} : { demoAccount: c.demoAccount }),
          feeTokens: feeTokens(deps.tokenCatalog, c.chainId),
        })),
      }),
    }),
  ];
}

/**
 * The dev bundler's URL while it starts or serves, so a client finds it beside the dev chain it bundles for; null
 * when there is none or it is down (a URL that refuses connections would only move the error into the client).
 */
function devBundlerUrl(bundler: HealthDeps['devBundler']): string | null {
  const status = bundler?.status();
  return status !== undefined && (status.state === 'ready' || status.state === 'starting') ? status.url : null;
}

function feeTokens(
  catalog: Pick<TokenCatalog, 'snapshot'>,
  chainId: number,
): z.input<typeof chainsAnswer>['chains'][number]['feeTokens'] {
  const snapshot = catalog.snapshot(chainId);
  if (snapshot === undefined) return [];
  return [
    ...snapshot.tokens.map((t) => ({
      address: t.address,
      symbol: t.symbol,
      decimals: t.decimals,
      premiumPercentage: t.premiumPercentage,
      usable: true as const,
    })),
    ...[...snapshot.unusable].map(([address, reason]) => ({ address, usable: false as const, reason })),
  ];
}
