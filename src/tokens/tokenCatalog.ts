import { type Address, getAddress, type PublicClient } from 'viem';
import type { PriceSourceSpec, TokenSetting } from '../config/chainSettings.js';
import { decimalToFixed, fixedToDecimal } from '../pricing/decimal.js';
import { exchangeRate, MAX_UINT128, priceMarkupFromPremium } from '../pricing/exchangeRate.js';
import { createPriceCache, type PriceState } from '../pricing/priceCache.js';
import type { PriceSource } from '../pricing/priceSource.js';
import { createPriceSourceFactory } from '../pricing/priceSourceFactory.js';
import { startRefreshLoop } from '../pricing/refreshLoop.js';
import { createTokenMetadataCache, type PermitDomain, type TokenMetadataCache } from './tokenMetadata.js';

/**
 * Which ERC-20s each chain accepts for gas right now, with their exchange rates against the native coin.
 * Prices and metadata are refreshed in the background; `snapshot()` is a Map lookup on objects built at
 * refresh time, so a quote never waits on I/O. A token without a fresh price (its own or the native coin's)
 * or without metadata is listed as unusable with the reason, never quoted with an old rate.
 */

export interface QuotableToken {
  /** EIP-55 checksummed. */
  readonly address: Address;
  /** Read from the token contract, cached. */
  readonly symbol: string;
  /** Read from the token contract, cached; 0..36. */
  readonly decimals: number;
  /** As configured, '' when none. */
  readonly logoUrl: string;
  /** As configured, canonical decimal string: "10", "0.5", "0". */
  readonly premiumPercentage: string;
  /** Parts-per-million multiplier: 1_000_000 + ceil(premiumPercentage * 10_000); "10" -> 1_100_000. */
  readonly priceMarkup: number;
  /** Token base units per 1 native coin (1e18 wei), rounded up (in the paymaster's favour); fits uint128. */
  readonly exchangeRate: bigint;
  /** USD per whole token, 18-decimal fixed point. */
  readonly tokenUsdE18: bigint;
  /**
   * Configured with `permit` (Circle FiatToken v2.2's, what the token mode's permit needs): its EIP-712 domain as
   * read from the token and checked; undefined for every other token.
   */
  readonly permit?: PermitDomain | undefined;
}

export interface ChainTokens {
  /** USD per whole native coin, 18-decimal fixed point; undefined while unknown or stale. */
  readonly nativeUsdE18: bigint | undefined;
  /** Usable right now, in configured order. */
  readonly tokens: readonly QuotableToken[];
  /** Lower-case address -> why a configured token cannot be quoted now. */
  readonly unusable: ReadonlyMap<string, string>;
}

export interface TokenCatalog {
  /** Synchronous; undefined when the chain has no token configuration. */
  snapshot(chainId: number): ChainTokens | undefined;
  /**
   * When the chain's native coin price was last read successfully (the source's own update time, unix ms), also
   * once that price is stale; undefined before any good read or for a chain without token configuration. For the
   * price age metric: a stale price is exactly when its age matters.
   */
  nativePriceUpdatedAtMs(chainId: number): number | undefined;
  /** Settles once the first refresh of every chain has (successfully or not). */
  ready(): Promise<void>;
  /** Refreshes prices and missing metadata now (after any refresh in flight); settles when done. */
  refresh(): Promise<void>;
  /** Stops the timer and closes the HTTP pools. */
  close(): Promise<void>;
}

/** One chain's token configuration plus a client to read that chain (token metadata, Chainlink feeds). */
export interface ChainTokenSettings {
  readonly chainId: number;
  readonly client: PublicClient;
  readonly nativeUsd: PriceSourceSpec;
  readonly tokens: readonly TokenSetting[];
}

export interface TokenCatalogLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface TokenCatalogDeps {
  readonly chains: readonly ChainTokenSettings[];
  readonly logger: TokenCatalogLogger;
  /** Clock in unix ms; staleness is judged against it. */
  readonly now?: () => number;
  /** Time between the end of one refresh and the start of the next (default 30 s). */
  readonly refreshMs?: number;
  /** Budget of one HTTP price request (default 3 s). */
  readonly httpTimeoutMs?: number;
}

export const DEFAULT_PRICE_REFRESH_MS = 30_000;

interface ConfiguredToken {
  readonly address: Address;
  readonly key: string;
  readonly logoUrl: string;
  readonly premiumPercentage: string;
  readonly priceMarkup: number;
  readonly price: PriceSource;
}

interface ChainState {
  readonly chainId: number;
  readonly native: PriceSource;
  readonly tokens: readonly ConfiguredToken[];
  readonly metadata: TokenMetadataCache;
  view: ChainTokens;
  /** The view must be rebuilt from this instant: one of the prices it used turns stale. */
  validUntilMs: number;
  /** Usability per token at the last logged build, so each transition is logged once. */
  readonly wasUsable: Map<string, boolean>;
}

type Evaluation =
  | { readonly token: QuotableToken; readonly staleAtMs: number }
  | { readonly reason: string; readonly err?: unknown };

function evaluate(chain: ChainState, t: ConfiguredToken, native: PriceState, price: PriceState): Evaluation {
  const meta = chain.metadata.get(t.address);
  if (!meta.ok) return meta.err === undefined ? { reason: meta.reason } : { reason: meta.reason, err: meta.err };
  if (!native.fresh) return { reason: `native coin price unavailable: ${native.reason}` };
  if (!price.fresh) return { reason: price.reason };
  const { decimals, symbol, permit } = meta.metadata;
  const rate = exchangeRate({ nativeUsdE18: native.usdE18, tokenUsdE18: price.usdE18, decimals });
  if (rate > MAX_UINT128) return { reason: `exchange rate ${rate} does not fit in uint128` };
  const token: QuotableToken = Object.freeze({
    address: t.address,
    symbol,
    decimals,
    logoUrl: t.logoUrl,
    premiumPercentage: t.premiumPercentage,
    priceMarkup: t.priceMarkup,
    exchangeRate: rate,
    tokenUsdE18: price.usdE18,
    ...(permit === undefined ? {} : { permit }),
  });
  return { token, staleAtMs: price.staleAtMs };
}

export function createTokenCatalog(deps: TokenCatalogDeps): TokenCatalog {
  const now = deps.now ?? Date.now;
  const { logger } = deps;
  const factory = createPriceSourceFactory({
    now,
    ...(deps.httpTimeoutMs === undefined ? {} : { httpTimeoutMs: deps.httpTimeoutMs }),
  });
  const chains = new Map<number, ChainState>();
  // Source key → the update time of its last good reading. The price cache forgets it once the price is stale
  // (it answers only a reason then); the age metric wants it most exactly then. Recorded by key, as the cache
  // reads one source per key.
  const lastGoodAt = new Map<string, number>();
  const recordingReads = (s: PriceSource): PriceSource => ({
    key: s.key,
    label: s.label,
    maxAgeMs: s.maxAgeMs,
    read: async () => {
      const reading = await s.read();
      lastGoodAt.set(s.key, reading.updatedAtMs);
      return reading;
    },
  });
  for (const c of deps.chains) {
    if (chains.has(c.chainId)) throw new Error(`token settings name chain ${c.chainId} twice`);
    const source = (spec: PriceSourceSpec) =>
      recordingReads(factory.create({ spec, chainId: c.chainId, client: c.client }));
    const tokens = c.tokens.map((t): ConfiguredToken => {
      const premium = decimalToFixed(t.premiumPercentage, 18);
      return {
        address: getAddress(t.address),
        key: t.address.toLowerCase(),
        logoUrl: t.logoUrl,
        premiumPercentage: premium === undefined ? t.premiumPercentage : fixedToDecimal(premium, 18),
        priceMarkup: priceMarkupFromPremium(t.premiumPercentage),
        price: source(t.price),
      };
    });
    if (new Set(tokens.map((t) => t.key)).size !== tokens.length) {
      throw new Error(`token settings of chain ${c.chainId} list a token twice`);
    }
    const metadata = createTokenMetadataCache({
      client: c.client,
      tokens: tokens.map((t) => t.address),
      permitTokens: c.tokens.filter((t) => t.permit).map((t) => getAddress(t.address)),
    });
    const unusable = new Map(tokens.map((t) => [t.key, 'prices not loaded yet']));
    chains.set(c.chainId, {
      chainId: c.chainId,
      native: source(c.nativeUsd),
      tokens,
      metadata,
      view: Object.freeze({ nativeUsdE18: undefined, tokens: Object.freeze([]), unusable }),
      validUntilMs: Number.POSITIVE_INFINITY,
      wasUsable: new Map(),
    });
  }
  const states = [...chains.values()];
  const prices = createPriceCache({
    sources: states.flatMap((c) => [c.native, ...c.tokens.map((t) => t.price)]),
    now,
    logger,
  });

  function logTransitions(chain: ChainState, t: ConfiguredToken, result: Evaluation): void {
    const reason = 'reason' in result ? result.reason : undefined;
    const err = 'err' in result ? { err: result.err } : {};
    const usable = reason === undefined;
    const was = chain.wasUsable.get(t.key);
    if (was === usable) return;
    chain.wasUsable.set(t.key, usable);
    if (!usable) {
      logger.warn({ chainId: chain.chainId, token: t.address, reason, ...err }, 'token unusable for gas payment');
    } else if (was === false) logger.info({ chainId: chain.chainId, token: t.address }, 'token usable for gas payment');
  }

  function rebuild(chain: ChainState): void {
    const native = prices.get(chain.native.key);
    let validUntilMs = native.fresh ? native.staleAtMs : Number.POSITIVE_INFINITY;
    const tokens: QuotableToken[] = [];
    const unusable = new Map<string, string>();
    for (const t of chain.tokens) {
      const result = evaluate(chain, t, native, prices.get(t.price.key));
      if ('reason' in result) unusable.set(t.key, result.reason);
      else {
        tokens.push(result.token);
        validUntilMs = Math.min(validUntilMs, result.staleAtMs);
      }
      logTransitions(chain, t, result);
    }
    chain.view = Object.freeze({
      nativeUsdE18: native.fresh ? native.usdE18 : undefined,
      tokens: Object.freeze(tokens),
      unusable,
    });
    chain.validUntilMs = validUntilMs;
  }

  let closing: Promise<void> | undefined;
  const loop = startRefreshLoop({
    intervalMs: deps.refreshMs ?? DEFAULT_PRICE_REFRESH_MS,
    async tick() {
      await Promise.all([prices.refresh(), ...states.map((c) => c.metadata.refresh())]);
      for (const chain of states) rebuild(chain);
    },
    onError: (err) => logger.error({ err }, 'token catalog refresh failed'),
  });

  return {
    snapshot(chainId) {
      const chain = chains.get(chainId);
      if (chain === undefined) return undefined;
      // A price used by the current view has just turned stale: rebuild from the cache (no I/O).
      if (now() >= chain.validUntilMs) rebuild(chain);
      return chain.view;
    },
    nativePriceUpdatedAtMs(chainId) {
      const chain = chains.get(chainId);
      return chain === undefined ? undefined : lastGoodAt.get(chain.native.key);
    },
    ready: () => loop.first,
    refresh: () => loop.runNow(),
    close() {
      loop.stop();
      closing ??= factory.close();
      return closing;
    },
  };
}
