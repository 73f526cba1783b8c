/**
 * What every price source produces: a USD price with 18 decimals (`usdE18`) and when it was observed. Sources
 * are read in the background by the price cache (priceCache.ts), never on a request's path.
 */
export interface PriceReading {
  /** USD per whole unit (one token, one native coin), 18-decimal fixed point; always > 0. */
  readonly usdE18: bigint;
  /** When the source says the price was last updated (unix ms); the cache measures staleness from it. */
  readonly updatedAtMs: number;
}

export interface PriceSource {
  /** Identity: two sources with the same key read the same price, so the cache reads it once. */
  readonly key: string;
  /** For logs and unusable reasons: names the feed, never a credential. */
  readonly label: string;
  /** A reading older than this is stale and must not price anything (Infinity for a fixed price). */
  readonly maxAgeMs: number;
  /** Rejects with a PriceSourceError (or a transport error) when no valid price could be read. */
  read(): Promise<PriceReading>;
}

/** A source answered, but with something that is not a usable price (non-positive, malformed, incomplete). */
export class PriceSourceError extends Error {
  override readonly name = 'PriceSourceError';
}

/** A short, secret-free description of why a read failed, for logs and unusable reasons. */
export function describeReadError(err: unknown): string {
  if (err instanceof PriceSourceError) return err.message;
  if (typeof err === 'object' && err !== null) {
    // viem errors carry a one-line `shortMessage`; their `message` adds request details (URLs, calldata).
    const short = (err as { shortMessage?: unknown }).shortMessage;
    if (typeof short === 'string' && short !== '') return short;
  }
  if (err instanceof Error) return err.message.split('\n', 1)[0] ?? err.name;
  return String(err);
}
