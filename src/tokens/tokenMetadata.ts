import { type Address, erc20Abi, erc20Abi_bytes32, hashDomain, hexToString, type PublicClient, parseAbi } from 'viem';
import { describeReadError } from '../pricing/priceSource.js';

/**
 * `symbol()` and `decimals()` of the configured tokens, read from the chain and cached after the first success:
 * an ERC-20's metadata does not change, so it is read once per process. A failed read is retried at the next
 * refresh, and the token is unusable until then. For a token configured with `permit`, its EIP-712 domain too.
 */

/**
 * What a permit's EIP-712 domain needs beyond the chain id and the token's address: `name()` and `version()` as
 * the token reports them, checked against its DOMAIN_SEPARATOR(), so the typed data Patron hands out is the one the
 * token verifies.
 */
export interface PermitDomain {
  readonly name: string;
  readonly version: string;
}

export interface TokenMetadata {
  readonly symbol: string;
  readonly decimals: number;
  /** Only for a token configured with `permit` (its EIP-2612 domain, verified). */
  readonly permit?: PermitDomain;
}

const permitDomainAbi = parseAbi([
  'function name() view returns (string)',
  'function version() view returns (string)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
]);

export type TokenMetadataState =
  | { readonly ok: true; readonly metadata: TokenMetadata }
  | {
      readonly ok: false;
      readonly reason: string;
      /** The read's error, for the log (whose serializer adds its cause chain); `reason` is shown publicly. */
      readonly err?: unknown;
    };

export interface TokenMetadataCache {
  /** Synchronous: what is known of the token now. */
  get(token: Address): TokenMetadataState;
  /** Reads the metadata of every token not known yet, concurrently. Never rejects. */
  refresh(): Promise<void>;
}

/** 10^36 base units per token still leaves exchange rates far inside uint128 for any sane price. */
export const MAX_TOKEN_DECIMALS = 36;
const MAX_SYMBOL_LENGTH = 32;

/** Some early tokens (MKR, SAI) return `bytes32` from symbol(): tried when the string form does not decode. */
async function readSymbol(client: PublicClient, address: Address): Promise<string> {
  try {
    return await client.readContract({ address, abi: erc20Abi, functionName: 'symbol' });
  } catch (err) {
    const raw = await client
      .readContract({ address, abi: erc20Abi_bytes32, functionName: 'symbol' })
      .catch(() => Promise.reject(err));
    return hexToString(raw, { size: 32 });
  }
}

// The symbol is shown to wallets and dApps: control characters and empty or very long values are refused.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The permit's domain: name() and version() (EIP-2612 does not require version(); without one, "1", the common
 * default), held to DOMAIN_SEPARATOR(): a token whose separator is not EIP-712's of those values would refuse every
 * permit signed from them, so it is unusable rather than offered.
 */
async function readPermitDomain(client: PublicClient, address: Address): Promise<PermitDomain | string> {
  const read = <F extends 'name' | 'version' | 'DOMAIN_SEPARATOR'>(functionName: F) =>
    client.readContract({ address, abi: permitDomainAbi, functionName });
  let name: string;
  let version: string;
  let separator: string;
  let chainId: number;
  try {
    [name, version, separator, chainId] = await Promise.all([
      read('name'),
      read('version').catch(() => '1'),
      read('DOMAIN_SEPARATOR'),
      client.getChainId(),
    ]);
  } catch (err) {
    return `permit: the token's EIP-712 domain (name(), DOMAIN_SEPARATOR()) could not be read: ${describeReadError(err)}`;
  }
  const expected = hashDomain({
    domain: { name, version, chainId: BigInt(chainId), verifyingContract: address },
    types: { EIP712Domain: EIP712_DOMAIN },
  });
  if (expected !== separator) {
    return `permit: DOMAIN_SEPARATOR() is not the EIP-712 domain of name ${JSON.stringify(name)}, version ${JSON.stringify(version)}, chain ${chainId} and the token, so no permit signed from them would verify`;
  }
  return { name, version };
}

const EIP712_DOMAIN = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
] as const;

async function readMetadata(client: PublicClient, address: Address, permit: boolean): Promise<TokenMetadataState> {
  try {
    const [symbol, decimals, domain] = await Promise.all([
      readSymbol(client, address),
      client.readContract({ address, abi: erc20Abi, functionName: 'decimals' }),
      permit ? readPermitDomain(client, address) : undefined,
    ]);
    if (typeof domain === 'string') return { ok: false, reason: domain };
    if (decimals > MAX_TOKEN_DECIMALS) {
      return { ok: false, reason: `decimals() is ${decimals}, more than ${MAX_TOKEN_DECIMALS}` };
    }
    const trimmed = symbol.trim();
    if (trimmed === '' || [...trimmed].length > MAX_SYMBOL_LENGTH || CONTROL.test(trimmed)) {
      return { ok: false, reason: `symbol() returned an unusable value ${JSON.stringify(symbol.slice(0, 64))}` };
    }
    const metadata =
      domain === undefined ? { symbol: trimmed, decimals } : { symbol: trimmed, decimals, permit: domain };
    return { ok: true, metadata: Object.freeze(metadata) };
  } catch (err) {
    return { ok: false, reason: `token metadata read failed: ${describeReadError(err)}`, err };
  }
}

export function createTokenMetadataCache(args: {
  client: PublicClient;
  tokens: readonly Address[];
  /** Those of `tokens` configured with `permit`: their EIP-712 domain is read and checked too. */
  permitTokens?: readonly Address[] | undefined;
}): TokenMetadataCache {
  const permit = new Set((args.permitTokens ?? []).map((a) => a.toLowerCase()));
  const entries = new Map<string, { readonly address: Address; readonly permit: boolean; state: TokenMetadataState }>(
    args.tokens.map((address) => [
      address.toLowerCase(),
      {
        address,
        permit: permit.has(address.toLowerCase()),
        state: { ok: false, reason: 'token metadata not read yet' },
      },
    ]),
  );
  return {
    get(token) {
      return entries.get(token.toLowerCase())?.state ?? { ok: false, reason: 'token not configured' };
    },
    async refresh() {
      await Promise.all(
        [...entries.values()].map(async (entry) => {
          if (!entry.state.ok) entry.state = await readMetadata(args.client, entry.address, entry.permit);
        }),
      );
    },
  };
}
