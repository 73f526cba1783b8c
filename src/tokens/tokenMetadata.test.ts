import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, createPublicClient, custom, getAddress, type PublicClient, stringToHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devTokenAbi, loadDevContractArtifact } from '../chain/artifacts.js';
import { createDevClient, type DevClient } from '../chain/devClient.js';
import { createEmbeddedChain, type EmbeddedChain } from '../chain/embeddedChain.js';
import { createTokenMetadataCache } from './tokenMetadata.js';

const owner = privateKeyToAccount('0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba');
let chain: EmbeddedChain;
let dev: DevClient;
let client: PublicClient;

async function deployToken(symbol: string, decimals: number): Promise<Address> {
  const hash = await dev.deployContract({
    abi: devTokenAbi,
    bytecode: loadDevContractArtifact('DevToken').bytecode,
    args: [`${symbol} token`, symbol, decimals],
  });
  const receipt = await dev.waitForTransactionReceipt({ hash });
  assert.ok(receipt.contractAddress);
  return getAddress(receipt.contractAddress);
}

/**
 * Runtime code of an early-style token (MKR): `decimals()` (0x313ce567) returns 18, every other call returns
 * the bytes32 `symbolWord`, so `symbol()` answers bytes32 instead of string.
 */
function bytes32SymbolToken(symbol: string): `0x${string}` {
  const word = stringToHex(symbol, { size: 32 }).slice(2);
  return `0x60003560e01c63313ce56714603857 7f${word} 600052 60206000f3 5b 6012600052 60206000f3`.replace(
    / /g,
    '',
  ) as `0x${string}`;
}

before(async () => {
  chain = await createEmbeddedChain({ fundedAccounts: [owner.address] });
  dev = createDevClient({ chain, account: owner });
  client = createPublicClient({ transport: custom(chain, { retryCount: 0 }) });
});
after(() => chain.close());

describe('token metadata', () => {
  test('symbol and decimals are read once and then served from memory', async () => {
    const usdc = await deployToken('USDC', 6);
    const dai = await deployToken('DAI', 18);
    const cache = createTokenMetadataCache({ client, tokens: [usdc, dai] });
    assert.deepEqual(cache.get(usdc), { ok: false, reason: 'token metadata not read yet' });
    await cache.refresh();
    assert.deepEqual(cache.get(usdc), { ok: true, metadata: { symbol: 'USDC', decimals: 6 } });
    assert.deepEqual(cache.get(dai.toLowerCase() as Address), { ok: true, metadata: { symbol: 'DAI', decimals: 18 } });
    // Known metadata is never read again: replacing the code does not change it.
    await dev.setCode({ address: usdc, bytecode: bytes32SymbolToken('OTHER') });
    await cache.refresh();
    assert.deepEqual(cache.get(usdc), { ok: true, metadata: { symbol: 'USDC', decimals: 6 } });
    assert.deepEqual(cache.get(`0x${'9'.repeat(40)}`), { ok: false, reason: 'token not configured' });
  });

  test('a failed read is retried at the next refresh', async () => {
    const address: Address = '0x00000000000000000000000000000000000000c1';
    const cache = createTokenMetadataCache({ client, tokens: [address] });
    await cache.refresh();
    const first = cache.get(address);
    assert.equal(first.ok, false);
    assert.match(first.ok ? '' : first.reason, /^token metadata read failed: /);
    await dev.setCode({ address, bytecode: bytes32SymbolToken('MKR') });
    await cache.refresh();
    assert.deepEqual(cache.get(address), { ok: true, metadata: { symbol: 'MKR', decimals: 18 } });
  });

  test('decimals above 36 or an unusable symbol make the token unusable', async () => {
    const big = await deployToken('BIG', 37);
    const empty = await deployToken(' ', 6);
    const control = await deployToken('A\u0007B', 6);
    const long = await deployToken('X'.repeat(33), 6);
    const ok36 = await deployToken('MAX', 36);
    const cache = createTokenMetadataCache({ client, tokens: [big, empty, control, long, ok36] });
    await cache.refresh();
    assert.deepEqual(cache.get(big), { ok: false, reason: 'decimals() is 37, more than 36' });
    for (const t of [empty, control, long]) {
      const state = cache.get(t);
      assert.match(state.ok ? '' : state.reason, /^symbol\(\) returned an unusable value/);
    }
    assert.deepEqual(cache.get(ok36), { ok: true, metadata: { symbol: 'MAX', decimals: 36 } });
  });
});
