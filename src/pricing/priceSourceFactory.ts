import { createHash } from 'node:crypto';
import type { PublicClient } from 'viem';
import type { PriceSourceSpec } from '../config/chainSettings.js';
import { chainlinkPriceSource } from './chainlinkPriceSource.js';
import { type CoinGeckoClient, createCoinGeckoClient } from './coinGeckoClient.js';
import { coinGeckoPriceSource } from './coinGeckoPriceSource.js';
import { fixedPriceSource } from './fixedPriceSource.js';
import type { PriceSource } from './priceSource.js';

/**
 * Turns configured price source specs into sources. CoinGecko sources that share a base URL and API key
 * share one HTTP client, so their ids go out together in one request per refresh.
 */
export interface PriceSourceFactory {
  /** `client` reads the chain the spec belongs to (Chainlink feeds live on that chain). */
  create(args: { spec: PriceSourceSpec; chainId: number; client: PublicClient }): PriceSource;
  /** Closes the HTTP connection pools. */
  close(): Promise<void>;
}

export function createPriceSourceFactory(args: { now: () => number; httpTimeoutMs?: number }): PriceSourceFactory {
  const coinGeckoClients = new Map<string, CoinGeckoClient>();

  function coinGeckoClient(spec: Extract<PriceSourceSpec, { type: 'coingecko' }>): {
    client: CoinGeckoClient;
    clientKey: string;
  } {
    // A digest tells two keys apart without keeping the key itself in a string that could be logged.
    const keyDigest =
      spec.apiKey === undefined ? 'anonymous' : createHash('sha256').update(spec.apiKey).digest('hex').slice(0, 16);
    const clientKey = `${spec.baseUrl}#${spec.apiKeyHeader.toLowerCase()}#${keyDigest}`;
    let client = coinGeckoClients.get(clientKey);
    if (client === undefined) {
      client = createCoinGeckoClient({
        baseUrl: spec.baseUrl,
        apiKey: spec.apiKey,
        apiKeyHeader: spec.apiKeyHeader,
        timeoutMs: args.httpTimeoutMs,
        now: args.now,
      });
      coinGeckoClients.set(clientKey, client);
    }
    return { client, clientKey };
  }

  return {
    create({ spec, chainId, client }) {
      switch (spec.type) {
        case 'fixed':
          return fixedPriceSource({ usd: spec.usd, now: args.now });
        case 'chainlink':
          return chainlinkPriceSource({
            chainId,
            client,
            aggregator: spec.aggregator,
            maxAgeSeconds: spec.maxAgeSeconds,
            now: args.now,
          });
        case 'coingecko':
          return coinGeckoPriceSource({
            ...coinGeckoClient(spec),
            baseUrl: spec.baseUrl,
            id: spec.id,
            maxAgeSeconds: spec.maxAgeSeconds,
          });
      }
    },
    async close() {
      await Promise.all([...coinGeckoClients.values()].map((c) => c.close()));
    },
  };
}
