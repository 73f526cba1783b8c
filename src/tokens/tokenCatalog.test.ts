import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Address, createPublicClient, custom, getAddress, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devPriceFeedAbi, devTokenAbi, loadDevContractArtifact } from '../chain/artifacts.js';
import { createDevClient, type DevClient } from '../chain/devClient.js';
import { createEmbeddedChain, type EmbeddedChain } from '../chain/embeddedChain.js';
import { type PriceSourceSpecInput, priceSourceSpecSchema, tokenSettingSchema } from '../config/chainSettings.js';
import { type ChainTokenSettings, createTokenCatalog, type TokenCatalog } from './tokenCatalog.js';

const E18 = 10n ** 18n;
const owner = privateKeyToAccount('0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba');
let chain: EmbeddedChain;
let dev: DevClient;
let client: PublicClient;
let usdc: Address;
let t18: Address;
let t36: Address;
let nowMs = 1_800_000_000_000;
const now = () => nowMs;

/** CoinGecko stand-in: answers with `cgBody` and `cgStatus`. */
let server: Server;
let cgBaseUrl: string;
let cgStatus = 200;
let cgBody: Record<string, unknown> = {};

async function deploy(abi: typeof devTokenAbi | typeof devPriceFeedAbi, args: readonly unknown[]): Promise<Address> {
  const name = abi === devTokenAbi ? 'DevToken' : 'DevPriceFeed';
  const hash = await dev.deployContract({
    abi,
    bytecode: loadDevContractArtifact(name).bytecode,
    args: args as never,
  });
  const receipt = await dev.waitForTransactionReceipt({ hash });
  assert.ok(receipt.contractAddress);
  return getAddress(receipt.contractAddress);
}

async function setFeed(feed: Address, answer: bigint, updatedAtMs: number): Promise<void> {
  const hash = await dev.writeContract({
    address: feed,
    abi: devPriceFeedAbi,
    functionName: 'setAnswer',
    args: [answer, BigInt(Math.floor(updatedAtMs / 1000))],
  });
  await dev.waitForTransactionReceipt({ hash });
}

function recordingLogger() {
  const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
  const log = (level: string) => (obj: object, msg: string) =>
    lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { lines, info: log('info'), warn: log('warn'), error: log('error') };
}

const catalogs: TokenCatalog[] = [];
function catalog(
  chains: Array<{ nativeUsd: PriceSourceSpecInput; tokens: unknown[]; chainId?: number }>,
  logger = recordingLogger(),
) {
  const settings: ChainTokenSettings[] = chains.map((c) => ({
    chainId: c.chainId ?? 31337,
    client,
    nativeUsd: priceSourceSpecSchema.parse(c.nativeUsd),
    tokens: c.tokens.map((t) => tokenSettingSchema.parse(t)),
  }));
  const cat = createTokenCatalog({ chains: settings, logger, now, refreshMs: 3_600_000 });
  catalogs.push(cat);
  return { cat, logger };
}

const fixed = (usd: string) => ({ type: 'fixed', usd }) as const;

before(async () => {
  chain = await createEmbeddedChain({ fundedAccounts: [owner.address] });
  dev = createDevClient({ chain, account: owner });
  client = createPublicClient({ transport: custom(chain, { retryCount: 0 }) });
  usdc = await deploy(devTokenAbi, ['USD Coin', 'USDC', 6]);
  t18 = await deploy(devTokenAbi, ['Eighteen', 'T18', 18]);
  t36 = await deploy(devTokenAbi, ['Thirty-six', 'T36', 36]);
  server = createServer((_req, res) => {
    res.writeHead(cgStatus, { 'content-type': 'application/json' });
    res.end(JSON.stringify(cgBody));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cgBaseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v3`;
});

after(async () => {
  await Promise.all(catalogs.map((c) => c.close()));
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await chain.close();
});

describe('token catalog', () => {
  test('quotes every usable token in configured order, with metadata, markup and a rounded-up rate', async () => {
    const { cat } = catalog([
      {
        nativeUsd: fixed('3000'),
        tokens: [
          { address: t18.toLowerCase(), price: fixed('7'), logoUrl: 'https://example.com/t18.png' },
          { address: usdc, price: fixed('1.00'), premiumPercentage: '10' },
        ],
      },
    ]);
    const before = cat.snapshot(31337);
    assert.equal(before?.tokens.length, 0, 'nothing is quotable before the first refresh');
    assert.equal(before?.unusable.get(usdc.toLowerCase()), 'prices not loaded yet');
    await cat.ready();
    const snap = cat.snapshot(31337);
    assert.equal(snap?.nativeUsdE18, 3000n * E18);
    assert.deepEqual(snap?.unusable, new Map());
    assert.deepEqual(snap?.tokens, [
      {
        address: t18,
        symbol: 'T18',
        decimals: 18,
        logoUrl: 'https://example.com/t18.png',
        premiumPercentage: '0',
        priceMarkup: 1_000_000,
        // 3000 / 7 * 1e18 = 428.571428571428571428571… * 1e18, rounded up
        exchangeRate: 428_571_428_571_428_571_429n,
        tokenUsdE18: 7n * E18,
      },
      {
        address: usdc,
        symbol: 'USDC',
        decimals: 6,
        logoUrl: '',
        premiumPercentage: '10',
        priceMarkup: 1_100_000,
        exchangeRate: 3_000_000_000n,
        tokenUsdE18: E18,
      },
    ]);
    assert.equal(cat.snapshot(31337), snap, 'snapshot() returns the object built at refresh time');
    assert.equal(cat.snapshot(1), undefined);
  });

  test('a rate that does not fit in uint128 makes the token unusable', async () => {
    const { cat, logger } = catalog([
      { nativeUsd: fixed('3000'), tokens: [{ address: t36, price: fixed('0.000000000000000001') }] },
    ]);
    await cat.ready();
    const snap = cat.snapshot(31337);
    assert.equal(snap?.tokens.length, 0);
    assert.match(snap?.unusable.get(t36.toLowerCase()) ?? '', /does not fit in uint128/);
    assert.equal(logger.lines.filter((l) => l.level === 'warn').length, 1);
  });

  test('a stale token price makes the token unusable without a refresh, and a fresh one brings it back', async () => {
    const feed = await deploy(devPriceFeedAbi, [8, 'USDC / USD', 0n]);
    await setFeed(feed, 1_00000000n, nowMs);
    const { cat, logger } = catalog([
      {
        nativeUsd: fixed('3000'),
        tokens: [
          { address: usdc, price: { type: 'chainlink', aggregator: feed, maxAgeSeconds: 3600 } },
          { address: t18, price: fixed('2') },
        ],
      },
    ]);
    await cat.ready();
    assert.deepEqual(
      cat.snapshot(31337)?.tokens.map((t) => t.symbol),
      ['USDC', 'T18'],
    );
    nowMs += 3_600_000;
    const stale = cat.snapshot(31337);
    assert.deepEqual(
      stale?.tokens.map((t) => t.symbol),
      ['T18'],
    );
    assert.match(stale?.unusable.get(usdc.toLowerCase()) ?? '', /price is stale \(3600 s old, max 3600 s\)/);
    cat.snapshot(31337);
    await cat.refresh();
    assert.deepEqual(
      logger.lines.map((l) => [l.level, l.msg, l.obj.token]),
      [['warn', 'token unusable for gas payment', usdc]],
      'the transition is logged once',
    );
    await setFeed(feed, 1_00000000n, nowMs);
    await cat.refresh();
    assert.deepEqual(
      cat.snapshot(31337)?.tokens.map((t) => t.symbol),
      ['USDC', 'T18'],
    );
    assert.deepEqual(
      logger.lines.map((l) => [l.level, l.msg]),
      [
        ['warn', 'token unusable for gas payment'],
        ['info', 'token usable for gas payment'],
      ],
    );
  });

  test('a failing HTTP source keeps its last good price until it is stale', async () => {
    cgStatus = 200;
    cgBody = { 'usd-coin': { usd: 0.9998 }, ethereum: { usd: 3000 } };
    const cg = (id: string) =>
      ({ type: 'coingecko', id, baseUrl: cgBaseUrl, apiKey: 'top-secret', maxAgeSeconds: 60 }) as const;
    const { cat, logger } = catalog([
      { nativeUsd: cg('ethereum'), tokens: [{ address: usdc, price: cg('usd-coin') }] },
    ]);
    await cat.ready();
    const fresh = cat.snapshot(31337);
    assert.equal(fresh?.nativeUsdE18, 3000n * E18);
    // 3000 / 0.9998 * 1e6 = 3000600120.02… -> rounded up
    assert.equal(fresh?.tokens[0]?.exchangeRate, 3_000_600_121n);
    cgStatus = 503;
    nowMs += 30_000;
    await cat.refresh();
    assert.deepEqual(cat.snapshot(31337), fresh, 'still fresh: the last good prices are kept');
    nowMs += 30_000;
    const stale = cat.snapshot(31337);
    assert.equal(stale?.nativeUsdE18, undefined);
    assert.equal(stale?.tokens.length, 0);
    assert.match(stale?.unusable.get(usdc.toLowerCase()) ?? '', /^native coin price unavailable: .*HTTP 503/);
    assert.ok(
      !JSON.stringify(logger.lines).includes('top-secret') &&
        !JSON.stringify([...(stale?.unusable ?? [])]).includes('top-secret'),
      'the API key is never logged',
    );
    cgStatus = 200;
    await cat.refresh();
    assert.equal(cat.snapshot(31337)?.tokens.length, 1);
  });

  test('the native price’s last good read time is kept when later reads fail, also once it is stale', async () => {
    cgStatus = 200;
    cgBody = { ethereum: { usd: 3000 } };
    const { cat } = catalog([
      {
        nativeUsd: { type: 'coingecko', id: 'ethereum', baseUrl: cgBaseUrl, maxAgeSeconds: 60 },
        tokens: [{ address: usdc, price: fixed('1') }],
      },
    ]);
    assert.equal(cat.nativePriceUpdatedAtMs(31337), undefined, 'nothing read yet');
    await cat.ready();
    const readAt = nowMs;
    assert.equal(cat.nativePriceUpdatedAtMs(31337), readAt);
    cgStatus = 503;
    nowMs += 90_000;
    await cat.refresh();
    assert.equal(cat.snapshot(31337)?.nativeUsdE18, undefined, 'stale');
    assert.equal(cat.nativePriceUpdatedAtMs(31337), readAt, 'the last good read, not the failed one');
    assert.equal(cat.nativePriceUpdatedAtMs(1), undefined, 'a chain without tokens');
    cgStatus = 200;
    await cat.refresh();
    assert.equal(cat.nativePriceUpdatedAtMs(31337), nowMs);
  });

  test('a token whose metadata cannot be read is unusable until a refresh reads it', async () => {
    const address: Address = '0x00000000000000000000000000000000000000d7';
    const { cat } = catalog([{ nativeUsd: fixed('3000'), tokens: [{ address, price: fixed('1') }] }]);
    await cat.ready();
    assert.match(cat.snapshot(31337)?.unusable.get(address) ?? '', /^token metadata read failed/);
    const code = await client.getCode({ address: usdc });
    assert.ok(code);
    await dev.setCode({ address, bytecode: code });
    await cat.refresh();
    // DevToken keeps decimals in an immutable (part of the code) and the name/symbol in storage, so the copy
    // has decimals 6 and an empty symbol, which is refused; either way the read was retried.
    assert.match(cat.snapshot(31337)?.unusable.get(address) ?? '', /symbol\(\) returned an unusable value/);
  });

  test('refreshes in the background on its own timer', async () => {
    cgStatus = 500;
    const price = { type: 'coingecko', id: 'usd-coin', baseUrl: cgBaseUrl, maxAgeSeconds: 60 } as const;
    const cat = createTokenCatalog({
      chains: [
        {
          chainId: 31337,
          client,
          nativeUsd: priceSourceSpecSchema.parse(fixed('3000')),
          tokens: [tokenSettingSchema.parse({ address: usdc, price })],
        },
      ],
      logger: recordingLogger(),
      now,
      refreshMs: 10,
    });
    catalogs.push(cat);
    await cat.ready();
    assert.equal(cat.snapshot(31337)?.tokens.length, 0);
    cgStatus = 200;
    cgBody = { 'usd-coin': { usd: 1 } };
    for (let i = 0; i < 200 && cat.snapshot(31337)?.tokens.length === 0; i++) await sleep(10);
    assert.equal(cat.snapshot(31337)?.tokens[0]?.exchangeRate, 3_000_000_000n);
    await cat.close();
  });

  test('chains are independent; a chain listed twice is refused', async () => {
    const { cat } = catalog([
      { chainId: 10, nativeUsd: fixed('3000'), tokens: [{ address: usdc, price: fixed('1') }] },
      { chainId: 137, nativeUsd: fixed('0.5'), tokens: [{ address: usdc, price: fixed('1') }] },
    ]);
    await cat.ready();
    assert.equal(cat.snapshot(10)?.tokens[0]?.exchangeRate, 3_000_000_000n);
    assert.equal(cat.snapshot(137)?.tokens[0]?.exchangeRate, 500_000n);
    assert.throws(
      () =>
        catalog([
          { nativeUsd: fixed('1'), tokens: [] },
          { nativeUsd: fixed('1'), tokens: [] },
        ]),
      /chain 31337 twice/,
    );
  });
});
