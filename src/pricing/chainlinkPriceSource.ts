import { type Address, type PublicClient, parseAbi } from 'viem';
import { type PriceReading, type PriceSource, PriceSourceError } from './priceSource.js';

/**
 * A Chainlink data feed read through eth_call on the chain's own client: `decimals()` and `latestRoundData()`
 * of AggregatorV3Interface (https://docs.chain.link/data-feeds/api-reference#aggregatorv3interface).
 * The cache turns `updatedAt` into staleness against `maxAgeSeconds`, which should be the feed's heartbeat
 * (ETH/USD on mainnet: 3600 s; many stablecoin feeds: 86400 s) plus a margin.
 */
export const aggregatorV3Abi = parseAbi([
  'function decimals() view returns (uint8)',
  'function description() view returns (string)',
  'function version() view returns (uint256)',
  'function getRoundData(uint80 roundId) view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
]);

export interface ChainlinkPriceSourceArgs {
  readonly chainId: number;
  readonly client: PublicClient;
  readonly aggregator: Address;
  readonly maxAgeSeconds: number;
  readonly now: () => number;
}

/** The answer at 18 decimals: a feed's `decimals` is usually 8 (USD pairs) or 18. */
function toE18(answer: bigint, decimals: number): bigint {
  return decimals <= 18 ? answer * 10n ** BigInt(18 - decimals) : answer / 10n ** BigInt(decimals - 18);
}

export function chainlinkPriceSource(args: ChainlinkPriceSourceArgs): PriceSource {
  const { client, aggregator } = args;
  async function read(): Promise<PriceReading> {
    const [decimals, round] = await Promise.all([
      client.readContract({ address: aggregator, abi: aggregatorV3Abi, functionName: 'decimals' }),
      client.readContract({ address: aggregator, abi: aggregatorV3Abi, functionName: 'latestRoundData' }),
    ]);
    const [roundId, answer, , updatedAt, answeredInRound] = round;
    if (answer <= 0n) throw new PriceSourceError(`Chainlink feed answered ${answer}, not a positive price`);
    // updatedAt 0 means the round never completed.
    if (updatedAt === 0n) throw new PriceSourceError('Chainlink round is not complete (updatedAt is 0)');
    // An answer carried over from an earlier round is stale even when updatedAt looks recent.
    if (answeredInRound < roundId) {
      throw new PriceSourceError(`Chainlink answer is stale (answeredInRound ${answeredInRound} < roundId ${roundId})`);
    }
    const usdE18 = toE18(answer, decimals);
    if (usdE18 <= 0n) throw new PriceSourceError(`Chainlink answer ${answer} is below 1e-18 USD`);
    // A timestamp ahead of our clock (skew) counts as "now", never as fresher than now.
    const updatedAtMs = Math.min(Number(updatedAt) * 1000, args.now());
    return { usdE18, updatedAtMs };
  }
  return {
    key: `chainlink:${args.chainId}:${aggregator.toLowerCase()}:${args.maxAgeSeconds}`,
    label: `Chainlink feed ${aggregator} on chain ${args.chainId}`,
    maxAgeMs: args.maxAgeSeconds * 1000,
    read,
  };
}
