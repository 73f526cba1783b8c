import { type Address, createPublicClient, custom, type Hex, http, type PublicClient } from 'viem';

/** An EIP-1193 request function: how Patron talks to a chain, in-process (EDR) or over HTTP. */
export type Eip1193Request = (args: { method: string; params?: readonly unknown[] }) => Promise<unknown>;

/** A chain Patron serves: where its EntryPoint v0.6 and Patron's paymaster are, and a client to read it. */
export interface ChainRuntime {
  readonly chainId: number;
  readonly entryPoint: Address;
  readonly paymaster: Address;
  readonly client: PublicClient;
  /** Raw JSON-RPC access; the embedded dev chain is also served to local clients through it. */
  readonly request: Eip1193Request;
  readonly embedded: boolean;
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

/** A chain reached over HTTP JSON-RPC (keep-alive connections through Node's fetch). */
export function httpChainRuntime(args: {
  chainId: number;
  rpcUrl: string;
  entryPoint: Address;
  paymaster: Address;
  timeoutMs?: number;
}): ChainRuntime {
  const transport = http(args.rpcUrl, { timeout: args.timeoutMs ?? 10_000, retryCount: 1 });
  const client = createPublicClient({ transport });
  return {
    chainId: args.chainId,
    entryPoint: args.entryPoint,
    paymaster: args.paymaster,
    client,
    request: (req) => client.request(req as Parameters<typeof client.request>[0]),
    embedded: false,
  };
}

/** A chain reached through an EIP-1193 function (the in-process dev chain). */
export function eip1193ChainRuntime(args: {
  chainId: number;
  request: Eip1193Request;
  entryPoint: Address;
  paymaster: Address;
  simpleAccountFactory?: Address;
  demoAccount?: NonNullable<ChainRuntime['demoAccount']>;
}): ChainRuntime {
  const client = createPublicClient({ transport: custom({ request: args.request }) });
  return { ...args, client, embedded: true };
}
