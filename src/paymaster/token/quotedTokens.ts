import type { Address } from 'viem';
import { UnsupportedError } from '../../errors/PatronError.js';
import type { ChainTokens, QuotableToken } from '../../tokens/tokenCatalog.js';
import { weiToTokenUnitsAt } from '../entryPoints/tokenMath.js';

/**
 * The tokens of a quote and of the token mode's final data, read from the token catalog's snapshot: what a quote
 * needs of each, prepared once per snapshot; the selection a request asks for; one token by address.
 */
/**
 * A token a quote is made in: the catalog's token (address, symbol, decimals, exchangeRate, priceMarkup, premium,
 * USD price, logo) and what the quote's arithmetic needs of it, computed once per catalog snapshot (snapshots are
 * immutable, so these objects are too, and stay the same object while the snapshot does).
 */
export interface QuotedToken {
  readonly token: QuotableToken;
  /** exchangeRate × priceMarkup: one multiplication per token and request instead of two. */
  readonly rateTimesMarkup: bigint;
  /** 10^decimals. */
  readonly unitScale: bigint;
}

/**
 * Fee quotes for one op: the most the paymaster may charge for it in wei (the same for every token), and the
 * tokens it is quoted in. A token's quote is `quotedTokenCost(token, maxChargeWei)` base units, worth
 * `quotedTokenUsdE18(token, units)`; the quote holds until `validUntil`. Each dialect writes these its own way
 * (Biconomy's fee quotes: rpc/wire/biconomyQuotes.ts).
 */
export interface TokenQuotes {
  readonly paymasterAddress: Address;
  readonly maxChargeWei: bigint;
  readonly validUntil: number;
  /** The usable requested tokens, preferred first. */
  readonly tokens: readonly QuotedToken[];
  /** The requested tokens the chain does not take, as sent. */
  readonly unsupportedTokens: readonly string[];
}

/** A quote's maximum charge in the token's base units: maxChargeWei at the marked-up rate, rounded up. */
export function quotedTokenCost(t: QuotedToken, maxChargeWei: bigint): bigint {
  return weiToTokenUnitsAt(maxChargeWei, t.rateTimesMarkup);
}

/** What `units` base units of the token are worth in USD, 18-decimal fixed point (rounded down). */
export function quotedTokenUsdE18(t: QuotedToken, units: bigint): bigint {
  return (units * t.token.tokenUsdE18) / t.unitScale;
}

export interface TokenSelection {
  readonly preferredToken?: string | undefined;
  readonly tokenList?: readonly string[] | undefined;
}

export interface PreparedSnapshot {
  readonly all: readonly QuotedToken[];
  /** Lower-case address → token. */
  readonly byKey: ReadonlyMap<string, QuotedToken>;
}

const prepared = new WeakMap<ChainTokens, PreparedSnapshot>();

export function prepare(snapshot: ChainTokens): PreparedSnapshot {
  let p = prepared.get(snapshot);
  if (p === undefined) {
    const all = snapshot.tokens.map(
      (token): QuotedToken => ({
        token,
        rateTimesMarkup: token.exchangeRate * BigInt(token.priceMarkup),
        unitScale: 10n ** BigInt(token.decimals),
      }),
    );
    p = { all, byKey: new Map(all.map((t) => [t.token.address.toLowerCase(), t])) };
    prepared.set(snapshot, p);
  }
  return p;
}

export function findToken(snapshot: ChainTokens, address: string): QuotableToken {
  const key = address.toLowerCase();
  const token = prepare(snapshot).byKey.get(key)?.token;
  if (token !== undefined) return token;
  const reason = snapshot.unusable.get(key);
  if (reason !== undefined) {
    throw new UnsupportedError(`Fee token ${address} cannot be used right now: ${reason}`);
  }
  throw new UnsupportedError(`Fee token ${address} is not supported on this chain`);
}

/**
 * preferredToken first, then tokenList in order, duplicates (any letter case) once. An empty or absent
 * tokenList means every token of the chain (clients.md), still with preferredToken first.
 */
export function selectTokens(
  snapshot: PreparedSnapshot,
  sel: TokenSelection,
): { selected: QuotedToken[]; unsupported: string[] } {
  const list = sel.tokenList ?? [];
  if (sel.preferredToken === undefined && list.length === 0) return { selected: [...snapshot.all], unsupported: [] };
  const selected: QuotedToken[] = [];
  const unsupported: string[] = [];
  const seen = new Set<string>();
  const add = (address: string) => {
    const key = address.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    const token = snapshot.byKey.get(key);
    if (token === undefined) unsupported.push(address);
    else selected.push(token);
  };
  if (sel.preferredToken !== undefined) add(sel.preferredToken);
  if (list.length === 0) for (const t of snapshot.all) add(t.token.address);
  else for (const address of list) add(address);
  return { selected, unsupported };
}
