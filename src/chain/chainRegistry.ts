import { type Address, createPublicClient, custom, type Hex, http, type PublicClient } from 'viem';
import type { KnownAccountsSetting } from '../config/knownAccountsSettings.js';
import type { L1FeeKind } from '../config/l1FeeSettings.js';

/** An EIP-1193 request function: how Patron talks to a chain, in-process (EDR) or over HTTP. */
export type Eip1193Request = (args: { method: string; params?: readonly unknown[] }) => Promise<unknown>;

/** The ERC-4337 EntryPoint releases Patron serves; v0.7, v0.8 and v0.9 share the packed user operation. */
export type EntryPointVersion = '0.6' | '0.7' | '0.8' | '0.9';

/** One of Patron's paymasters on a chain: the EntryPoint it serves (one paymaster address per EntryPoint). */
export interface PaymasterDeployment {
  readonly entryPointVersion: EntryPointVersion;
  readonly entryPoint: Address;
  readonly paymaster: Address;
}

/**
 * A chain Patron serves, seen through one of its paymaster deployments: `entryPoint`, `paymaster` and
 * `entryPointVersion` are that deployment's, and `deployments` lists every one the chain has (the registry's
 * object is the first deployment's view; `forEntryPoint` gives the others). Everything that is per paymaster
 * (signing, settlement, the solvency guard) takes a view, so one chain with four EntryPoints is four views of one
 * client.
 */
export interface ChainRuntime extends PaymasterDeployment {
  readonly chainId: number;
  readonly deployments: readonly PaymasterDeployment[];
  readonly client: PublicClient;
  /** Raw JSON-RPC access; the embedded dev chain is also served to local clients through it. */
  readonly request: Eip1193Request;
  readonly embedded: boolean;
  /**
   * An upper bound of the chain's block time (PATRON_CHAINS[i].maxBlockTimeSeconds, default 12): v0.9's block-number
   * windows are counted with it, so they never last longer in real time than the time policy allows.
   */
  readonly maxBlockTimeSeconds?: number | undefined;
  /**
   * The L2's L1 data fee oracle (PATRON_CHAINS[i].l1Fee): read with each new block's fees (feeOracle.ts), for the
   * preVerificationGas bound; undefined on an L1 or a chain priced by `bounds.l1DataGasPerByte` alone.
   */
  readonly l1Fee?: L1FeeKind | undefined;
  /**
   * The smart accounts this chain has beyond the canonical ones (policies/knownAccounts.ts): PATRON_CHAINS[i].accounts,
   * or what the dev chain deploys at addresses of its own.
   */
  readonly accounts?: KnownAccountsSetting | undefined;
  /** On the dev chain: the SimpleAccount v0.6 factory deployed with it, for demos and local SDK use. */
  readonly simpleAccountFactory?: Address;
  /** On the dev chain: a SimpleAccount funded with the dev tokens, and its owner's (public, dev-only) key. */
  readonly demoAccount?: { readonly address: Address; readonly owner: Address; readonly ownerPrivateKey: Hex };
}

export interface ChainRegistry {
  get(chainId: number): ChainRuntime | undefined;
  list(): readonly ChainRuntime[];
}

export function createChainRegistry(chains: readonly ChainRuntime[]): ChainRegistry {
  const byId = new Map(chains.map((c) => [c.chainId, c]));
  return { get: (id) => byId.get(id), list: () => chains };
}

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The chain seen through its deployment for `entryPoint` (an address), or undefined when it has none. */
export function forEntryPoint(chain: ChainRuntime, entryPoint: string): ChainRuntime | undefined {
  if (sameAddress(chain.entryPoint, entryPoint)) return chain;
  const d = chain.deployments.find((x) => sameAddress(x.entryPoint, entryPoint));
  return d === undefined ? undefined : viewOf(chain, d);
}

/** The chain seen through its deployment for an EntryPoint version, or undefined when it has none. */
export function forEntryPointVersion(chain: ChainRuntime, version: EntryPointVersion): ChainRuntime | undefined {
  if (chain.entryPointVersion === version) return chain;
  const d = chain.deployments.find((x) => x.entryPointVersion === version);
  return d === undefined ? undefined : viewOf(chain, d);
}

/** One view per deployment of the chain, the chain's own first (settlement and the solvency guard run per view). */
export function deploymentViews(chain: ChainRuntime): readonly ChainRuntime[] {
  return chain.deployments.map((d) => (sameAddress(d.paymaster, chain.paymaster) ? chain : viewOf(chain, d)));
}

/** Views are cached per chain object: the request path selects one per call and must not allocate for it. */
const views = new WeakMap<ChainRuntime, Map<string, ChainRuntime>>();

function viewOf(chain: ChainRuntime, d: PaymasterDeployment): ChainRuntime {
  let byPaymaster = views.get(chain);
  if (byPaymaster === undefined) {
    byPaymaster = new Map();
    views.set(chain, byPaymaster);
  }
  const key = d.paymaster.toLowerCase();
  let view = byPaymaster.get(key);
  if (view === undefined) {
    view = { ...chain, entryPointVersion: d.entryPointVersion, entryPoint: d.entryPoint, paymaster: d.paymaster };
    byPaymaster.set(key, view);
  }
  return view;
}

/**
 * The deployments a chain is built with: the given list, or the one v0.6 paymaster (`entryPoint`/`paymaster`)
 * that chains were configured with before v0.7.
 */
function deploymentsOf(args: {
  entryPoint?: Address | undefined;
  paymaster?: Address | undefined;
  deployments?: readonly PaymasterDeployment[] | undefined;
}): { first: PaymasterDeployment; all: readonly PaymasterDeployment[] } {
  const all =
    args.deployments !== undefined && args.deployments.length > 0
      ? args.deployments
      : args.entryPoint !== undefined && args.paymaster !== undefined
        ? [{ entryPointVersion: '0.6' as const, entryPoint: args.entryPoint, paymaster: args.paymaster }]
        : [];
  const first = all[0];
  if (first === undefined) throw new Error('a chain needs at least one paymaster deployment');
  return { first, all };
}

/** A chain reached over HTTP JSON-RPC (keep-alive connections through Node's fetch). */
export function httpChainRuntime(args: {
  chainId: number;
  rpcUrl: string;
  /** v0.6's deployment when `deployments` is not given (the configuration before v0.7). */
  entryPoint?: Address;
  paymaster?: Address;
  deployments?: readonly PaymasterDeployment[];
  timeoutMs?: number;
  maxBlockTimeSeconds?: number | undefined;
  l1Fee?: L1FeeKind | undefined;
  accounts?: KnownAccountsSetting | undefined;
}): ChainRuntime {
  const transport = http(args.rpcUrl, { timeout: args.timeoutMs ?? 10_000, retryCount: 1 });
  const client = createPublicClient({ transport });
  const { first, all } = deploymentsOf(args);
  return {
    chainId: args.chainId,
    entryPointVersion: first.entryPointVersion,
    entryPoint: first.entryPoint,
    paymaster: first.paymaster,
    deployments: all,
    client,
    request: (req) => client.request(req as Parameters<typeof client.request>[0]),
    embedded: false,
    maxBlockTimeSeconds: args.maxBlockTimeSeconds,
    l1Fee: args.l1Fee,
    accounts: args.accounts,
  };
}

/** A chain reached through an EIP-1193 function (the in-process dev chain). */
export function eip1193ChainRuntime(args: {
  chainId: number;
  request: Eip1193Request;
  entryPoint: Address;
  paymaster: Address;
  deployments?: readonly PaymasterDeployment[];
  simpleAccountFactory?: Address;
  demoAccount?: NonNullable<ChainRuntime['demoAccount']>;
  accounts?: KnownAccountsSetting;
  l1Fee?: L1FeeKind;
}): ChainRuntime {
  const client = createPublicClient({ transport: custom({ request: args.request }) });
  const { first, all } = deploymentsOf(args);
  const { deployments: _, ...rest } = args;
  return {
    ...rest,
    entryPointVersion: first.entryPointVersion,
    entryPoint: first.entryPoint,
    paymaster: first.paymaster,
    deployments: all,
    client,
    embedded: true,
  };
}
