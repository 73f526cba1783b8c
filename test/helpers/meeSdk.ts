import {
  createMeeClient,
  getMEEVersion,
  MEEVersion,
  toGasTankAccount,
  toMultichainNexusAccount,
} from '@biconomy/abstractjs';
import {
  type Address,
  type Chain,
  custom,
  decodeFunctionData,
  defineChain,
  encodeAbiParameters,
  getAddress,
  type Hex,
  http,
  type LocalAccount,
  parseAbi,
  toHex,
} from 'viem';
import { entryPoint07Address } from 'viem/account-abstraction';
import { startMeeNode } from './meeNode.js';
import { cloneMeeQuote } from './meeQuote.js';
import type { MeeQuote } from './meeQuoteWire.js';

/**
 * Drives abstractjs 1.2.3's real MEE client against a stand-in node (meeNode.ts) and a sponsor URL, with no Nexus
 * code anywhere: the account's chain is a scripted transport (sdkChainTransport) that answers exactly the reads the
 * SDK makes for a sponsored quote and throws on anything else, so a new read in the SDK fails the test loudly.
 */
export interface SdkRpcCall {
  method: string;
  params: unknown;
}

const getNonceAbi = parseAbi(['function getNonce(address sender, uint192 key) view returns (uint256)']);
/** `accountId()`: abstractjs toNexusAccount reads it from the implementation even with versionCheck off. */
const ACCOUNT_ID_SELECTOR = '0x9cfd7cff';

/**
 * The chain as abstractjs reads it for `toMultichainNexusAccount` + `getQuote({ sponsorship: true })`:
 * eth_chainId; eth_call accountId() on the implementation; eth_call EntryPoint v0.7 getNonce(sender, key)
 * (answered from `nonces`, 0 by default, or by `rpcUrl`'s chain, which has the EntryPoint); eth_getCode of the
 * account (none: not deployed, so the SDK attaches initCode); eth_getBlockByNumber only for chain ids outside the
 * SDK's built-in Cancun list (utils/Utils.js supportsCancun), answered by `rpcUrl` or as a Cancun block.
 */
export function sdkChainTransport(args: {
  chain: Chain;
  meeVersion: MEEVersion;
  nonces?: ReadonlyMap<string, bigint>;
  rpcUrl?: string;
  calls?: SdkRpcCall[];
}) {
  const config = getMEEVersion(args.meeVersion) as { accountId: string; implementationAddress: Address };
  const forward = args.rpcUrl === undefined ? undefined : http(args.rpcUrl)({ chain: args.chain, retryCount: 0 });
  return custom({
    async request({ method, params }: { method: string; params?: unknown }) {
      args.calls?.push({ method, params });
      if (method === 'eth_chainId') return toHex(args.chain.id);
      if (method === 'eth_getCode') return '0x';
      if (method === 'eth_getBlockByNumber') {
        if (forward) return forward.request({ method, params });
        return cancunBlock();
      }
      if (method === 'eth_call') {
        const [call] = (params ?? []) as [{ to?: Address; data?: Hex }];
        const to = call.to?.toLowerCase();
        if (to === config.implementationAddress.toLowerCase() && call.data === ACCOUNT_ID_SELECTOR) {
          return encodeAbiParameters([{ type: 'string' }], [config.accountId]);
        }
        if (to === entryPoint07Address.toLowerCase() && call.data !== undefined) {
          if (forward) return forward.request({ method, params });
          const { args: nonceArgs } = decodeFunctionData({ abi: getNonceAbi, data: call.data });
          const [sender, key] = nonceArgs;
          const nonce = (key << 64n) | (args.nonces?.get(sender.toLowerCase()) ?? 0n);
          return encodeAbiParameters([{ type: 'uint256' }], [nonce]);
        }
      }
      throw new Error(`meeSdk transport: unexpected request ${method} ${JSON.stringify(params)}`);
    },
  });
}

/** A post-Cancun block with the fields viem's formatter reads (supportsCancun looks for blobGasUsed). */
function cancunBlock() {
  const zero32 = `0x${'0'.repeat(64)}`;
  return {
    number: '0x1',
    hash: zero32,
    parentHash: zero32,
    timestamp: toHex(Math.floor(Date.now() / 1000)),
    gasLimit: '0x1c9c380',
    gasUsed: '0x0',
    baseFeePerGas: '0x1',
    blobGasUsed: '0x0',
    excessBlobGas: '0x0',
    transactions: [],
    uncles: [],
  };
}

export interface MeeGetQuoteArgs {
  nodeUrl: string;
  sponsorUrl: string;
  customHeaders?: Record<string, string>;
  gasTank: { chainId: number; address: Address; token: Address };
  calls: readonly { to: Address; value?: bigint; data?: Hex; gasLimit?: bigint }[];
  owner: LocalAccount;
  chain: Chain;
  /** The user's Nexus address (given, so no SDK asks a factory for it). */
  accountAddress?: Address;
  meeVersion?: MEEVersion;
  rpcUrl?: string;
  lowerBoundTimestamp?: number;
  upperBoundTimestamp?: number;
}

export const DEFAULT_USER_NEXUS: Address = getAddress('0x00000000000000000000000000000000000a11ce');

/** The real `createMeeClient` + `toMultichainNexusAccount` + `getQuote({ sponsorship: true, sponsorshipOptions })`. */
export async function meeGetQuote(args: MeeGetQuoteArgs): Promise<{ quote: MeeQuote; rpcCalls: SdkRpcCall[] }> {
  const meeVersion = args.meeVersion ?? MEEVersion.V2_0_0;
  const rpcCalls: SdkRpcCall[] = [];
  const account = await toMultichainNexusAccount({
    signer: args.owner,
    chainConfigurations: [
      {
        chain: args.chain,
        transport: sdkChainTransport({
          chain: args.chain,
          meeVersion,
          calls: rpcCalls,
          ...(args.rpcUrl === undefined ? {} : { rpcUrl: args.rpcUrl }),
        }),
        version: getMEEVersion(meeVersion),
        versionCheck: false,
        accountAddress: args.accountAddress ?? DEFAULT_USER_NEXUS,
      },
    ],
  });
  const meeClient = await createMeeClient({ account, url: args.nodeUrl, isDebugMode: false });
  const quote: MeeQuote = await meeClient.getQuote({
    sponsorship: true,
    sponsorshipOptions: {
      url: args.sponsorUrl,
      gasTank: args.gasTank,
      ...(args.customHeaders === undefined ? {} : { customHeaders: args.customHeaders }),
    },
    instructions: [{ chainId: args.chain.id, calls: args.calls }],
    ...(args.lowerBoundTimestamp === undefined ? {} : { lowerBoundTimestamp: args.lowerBoundTimestamp }),
    ...(args.upperBoundTimestamp === undefined ? {} : { upperBoundTimestamp: args.upperBoundTimestamp }),
  });
  return { quote, rpcCalls };
}

/**
 * The quote signed by abstractjs's OWN sponsor code: `toGasTankAccount({ privateKey }).signSponsorship({ quote })`
 * (account/decorators/sponsorSupertransaction.js), which rebuilds the root from the leaves, throws "Invalid merkle
 * tree…" if it differs from `quote.hash`, signs the root with EIP-191 and writes userOps[0].userOp.signature. ECDSA
 * here is RFC 6979 (deterministic), so Patron's signature for the same quote and key must be these exact bytes.
 * toGasTankAccount opens an MEE client (GET info), so it gets `nodeUrl`, or a stand-in node of its own.
 */
export async function referenceSponsorQuote(args: {
  quote: MeeQuote;
  ownerPrivateKey: Hex;
  nodeUrl?: string;
  meeVersion?: MEEVersion;
}): Promise<MeeQuote> {
  const chainId = Number(args.quote.paymentInfo.chainId);
  const chain = defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: ['http://127.0.0.1:1'] } },
  });
  const meeVersion = args.meeVersion ?? MEEVersion.V2_0_0;
  const node =
    args.nodeUrl === undefined
      ? await startMeeNode({ chains: [chain], nodeAddress: args.quote.node })
      : { url: args.nodeUrl, close: async () => {} };
  try {
    const tank = await toGasTankAccount({
      privateKey: args.ownerPrivateKey,
      chainConfiguration: {
        chain,
        transport: sdkChainTransport({ chain, meeVersion }),
        version: getMEEVersion(meeVersion),
        versionCheck: false,
        accountAddress: args.quote.paymentInfo.sender,
      },
      options: { mee: { url: node.url } },
    });
    // The SDK writes the signature into the quote it is given: hand it a copy.
    const signed: MeeQuote = await tank.signSponsorship({ quote: cloneMeeQuote(args.quote) });
    return signed;
  } finally {
    await node.close();
  }
}
