import type { CoinGeckoClient } from './coinGeckoClient.js';
import type { PriceSource } from './priceSource.js';

/**
 * One CoinGecko id's USD price. Staleness is measured from CoinGecko's `last_updated_at` when the server
 * sends it, else from when the answer arrived, so a run of failed refreshes ages the last good value out.
 */
export function coinGeckoPriceSource(args: {
  readonly client: CoinGeckoClient;
  /** Tells clients apart (base URL and a digest of the key); must not contain the API key itself. */
  readonly clientKey: string;
  readonly baseUrl: string;
  readonly id: string;
  readonly maxAgeSeconds: number;
}): PriceSource {
  const { client, id } = args;
  return {
    key: `coingecko:${args.clientKey}:${id}:${args.maxAgeSeconds}`,
    label: `CoinGecko "${id}" at ${args.baseUrl}`,
    maxAgeMs: args.maxAgeSeconds * 1000,
    read: () => client.price(id),
  };
}
