import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, createPublicClient, custom, getAddress, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devPriceFeedAbi, loadDevContractArtifact } from '../src/chain/artifacts.js';
import { createDevClient, type DevClient } from '../src/chain/devClient.js';
import { createEmbeddedChain, type EmbeddedChain } from '../src/chain/embeddedChain.js';
import { aggregatorV3Abi, chainlinkPriceSource } from '../src/pricing/chainlinkPriceSource.js';
import { createPriceCache } from '../src/pricing/priceCache.js';
import { PriceSourceError } from '../src/pricing/priceSource.js';

/** The Chainlink source against contracts/DevPriceFeed.sol on the in-process chain (EDR). */

const owner = privateKeyToAccount('0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba');
const NOW_S = 1_800_000_000;
const now = () => NOW_S * 1000;
const silent = { info: () => {}, warn: () => {} };

let chain: EmbeddedChain;
let dev: DevClient;
let reader: PublicClient;

async function deployFeed(decimals: number, initialAnswer: bigint): Promise<Address> {
  const hash = await dev.deployContract({
    abi: devPriceFeedAbi,
    bytecode: loadDevContractArtifact('DevPriceFeed').bytecode,
    args: [decimals, 'ETH / USD', initialAnswer],
  });
  const receipt = await dev.waitForTransactionReceipt({ hash });
  assert.ok(receipt.contractAddress);
  return getAddress(receipt.contractAddress);
}

async function setAnswer(feed: Address, answer: bigint, updatedAt: number): Promise<void> {
  const hash = await dev.writeContract({
    address: feed,
    abi: devPriceFeedAbi,
    functionName: 'setAnswer',
    args: [answer, BigInt(updatedAt)],
  });
  await dev.waitForTransactionReceipt({ hash });
}

function source(aggregator: Address, maxAgeSeconds = 3600) {
  return chainlinkPriceSource({ chainId: 31337, client: reader, aggregator, maxAgeSeconds, now });
}

async function failure(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => assert.fail('expected a failure'),
    (err: unknown) => {
      assert.ok(err instanceof PriceSourceError, String(err));
      return err.message;
    },
  );
}

before(async () => {
  chain = await createEmbeddedChain({ fundedAccounts: [owner.address] });
  dev = createDevClient({ chain, account: owner });
  reader = createPublicClient({ transport: custom(chain, { retryCount: 0 }) });
});
after(() => chain.close());

describe('DevPriceFeed', () => {
  test('implements AggregatorV3Interface: rounds count up, getRoundData reads past rounds', async () => {
    const feed = await deployFeed(8, 3000_00000000n);
    await setAnswer(feed, 3100_00000000n, NOW_S);
    const read = (functionName: 'decimals' | 'description' | 'version') =>
      reader.readContract({ address: feed, abi: aggregatorV3Abi, functionName });
    assert.equal(await read('decimals'), 8);
    assert.equal(await read('description'), 'ETH / USD');
    assert.equal(await read('version'), 1n);
    const latest = await reader.readContract({ address: feed, abi: aggregatorV3Abi, functionName: 'latestRoundData' });
    assert.deepEqual(latest, [2n, 3100_00000000n, BigInt(NOW_S), BigInt(NOW_S), 2n]);
    const first = await reader.readContract({
      address: feed,
      abi: aggregatorV3Abi,
      functionName: 'getRoundData',
      args: [1n],
    });
    assert.equal(first[1], 3000_00000000n);
    await assert.rejects(
      reader.readContract({ address: feed, abi: devPriceFeedAbi, functionName: 'getRoundData', args: [3n] }),
      /NoDataPresent/,
    );
  });
});

describe('Chainlink price source', () => {
  test('reads the latest answer scaled to 18 decimals, with updatedAt', async () => {
    const feed = await deployFeed(8, 0n);
    await setAnswer(feed, 3456_78000000n, NOW_S - 60);
    assert.deepEqual(await source(feed).read(), {
      usdE18: 3_456_780_000_000_000_000_000n,
      updatedAtMs: (NOW_S - 60) * 1000,
    });
    // 18- and 20-decimal feeds scale too (the latter truncates).
    const feed18 = await deployFeed(18, 10n ** 18n);
    await setAnswer(feed18, 999_800_000_000_000_000n, NOW_S);
    assert.equal((await source(feed18).read()).usdE18, 999_800_000_000_000_000n);
    const feed20 = await deployFeed(20, 0n);
    await setAnswer(feed20, 123n * 10n ** 20n + 99n, NOW_S);
    assert.equal((await source(feed20).read()).usdE18, 123n * 10n ** 18n);
  });

  test('an answer older than maxAgeSeconds is stale in the cache', async () => {
    const feed = await deployFeed(8, 0n);
    await setAnswer(feed, 2000_00000000n, NOW_S - 3601);
    const s = source(feed, 3600);
    const cache = createPriceCache({ sources: [s], now, logger: silent });
    await cache.refresh();
    const state = cache.get(s.key);
    assert.equal(state.fresh, false);
    assert.match(state.fresh ? '' : state.reason, /price is stale \(3601 s old, max 3600 s\)/);
    await setAnswer(feed, 2000_00000000n, NOW_S - 3599);
    await cache.refresh();
    assert.equal(cache.get(s.key).fresh, true);
  });

  test('a non-positive answer, an incomplete round or a carried-over answer is a failure', async () => {
    const feed = await deployFeed(8, 0n);
    await setAnswer(feed, 0n, NOW_S);
    assert.equal(await failure(source(feed).read()), 'Chainlink feed answered 0, not a positive price');
    await setAnswer(feed, -5n, NOW_S);
    assert.equal(await failure(source(feed).read()), 'Chainlink feed answered -5, not a positive price');
    await setAnswer(feed, 1n, 0);
    assert.equal(await failure(source(feed).read()), 'Chainlink round is not complete (updatedAt is 0)');
    const hash = await dev.writeContract({
      address: feed,
      abi: devPriceFeedAbi,
      functionName: 'setRound',
      args: [2000_00000000n, BigInt(NOW_S), BigInt(NOW_S), 3n],
    });
    await dev.waitForTransactionReceipt({ hash });
    assert.equal(await failure(source(feed).read()), 'Chainlink answer is stale (answeredInRound 3 < roundId 4)');
  });

  test('a feed that is not there fails', async () => {
    const s = source('0x00000000000000000000000000000000000000f1');
    await assert.rejects(s.read());
    const cache = createPriceCache({ sources: [s], now, logger: silent });
    await cache.refresh();
    assert.equal(cache.get(s.key).fresh, false);
  });
});
