import { type Address, erc20Abi, erc20Abi_bytes32, hexToString, type PublicClient } from 'viem';
import { describeReadError } from '../pricing/priceSource.js';

/**
 * `symbol()` and `decimals()` of the configured tokens, read from the chain and cached after the first success:
 * an ERC-20's metadata does not change, so it is read once per process. A failed read is retried at the next
 * refresh, and the token is unusable until then.
 */

export interface TokenMetadata {
  readonly symbol: string;
  readonly decimals: number;
}

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

async function readMetadata(client: PublicClient, address: Address): Promise<TokenMetadataState> {
  try {
    const [symbol, decimals] = await Promise.all([
      readSymbol(client, address),
      client.readContract({ address, abi: erc20Abi, functionName: 'decimals' }),
    ]);
    if (decimals > MAX_TOKEN_DECIMALS) {
      return { ok: false, reason: `decimals() is ${decimals}, more than ${MAX_TOKEN_DECIMALS}` };
    }
    const trimmed = symbol.trim();
    if (trimmed === '' || [...trimmed].length > MAX_SYMBOL_LENGTH || CONTROL.test(trimmed)) {
      return { ok: false, reason: `symbol() returned an unusable value ${JSON.stringify(symbol.slice(0, 64))}` };
    }
    return { ok: true, metadata: Object.freeze({ symbol: trimmed, decimals }) };
  } catch (err) {
    return { ok: false, reason: `token metadata read failed: ${describeReadError(err)}`, err };
  }
}

export function createTokenMetadataCache(args: {
  client: PublicClient;
  tokens: readonly Address[];
}): TokenMetadataCache {
  const entries = new Map<string, { readonly address: Address; state: TokenMetadataState }>(
    args.tokens.map((address) => [
      address.toLowerCase(),
      { address, state: { ok: false, reason: 'token metadata not read yet' } },
    ]),
  );
  return {
    get(token) {
      return entries.get(token.toLowerCase())?.state ?? { ok: false, reason: 'token not configured' };
    },
    async refresh() {
      await Promise.all(
        [...entries.values()].map(async (entry) => {
          if (!entry.state.ok) entry.state = await readMetadata(args.client, entry.address);
        }),
      );
    },
  };
}
