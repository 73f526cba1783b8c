import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { type Address, createPublicClient, custom, getAddress, type PublicClient, stringToHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devFiatTokenAbi, devTokenAbi, loadDevContractArtifact } from '../chain/artifacts.js';
import { createDevClient, type DevClient } from '../chain/devClient.js';
import { createEmbeddedChain, deployDevToken, type EmbeddedChain } from '../chain/embeddedChain.js';
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

// solc ships no types: its one function used here takes and returns standard JSON as text.
const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };

/** Compiles one contract of `source` (solc from npm) and deploys it. */
async function deployInline(source: string, name: string): Promise<Address> {
  const input = {
    language: 'Solidity',
    sources: { 'Inline.sol': { content: `// SPDX-License-Identifier: MIT\npragma solidity 0.8.28;\n${source}` } },
    settings: { outputSelection: { '*': { '*': ['evm.bytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>;
  };
  const object = output.contracts['Inline.sol']?.[name]?.evm.bytecode.object;
  assert.ok(object, `${name} compiled`);
  const hash = await dev.sendTransaction({ data: `0x${object}` });
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

describe('the permit domain of a token configured with permit', () => {
  test('USDC-like (DevFiatToken): name() and version() "2", held to its DOMAIN_SEPARATOR()', async () => {
    const usdc = await deployDevToken({ client: dev, name: 'USD Coin', symbol: 'USDC', decimals: 6, permit: true });
    const plain = await deployToken('PDT', 18);
    const cache = createTokenMetadataCache({
      client,
      tokens: [usdc.address, plain],
      permitTokens: [usdc.address, plain],
    });
    await cache.refresh();
    assert.deepEqual(cache.get(usdc.address), {
      ok: true,
      metadata: { symbol: 'USDC', decimals: 6, permit: { name: 'USD Coin', version: '2' } },
    });
    const refused = cache.get(plain);
    assert.equal(refused.ok, false, 'a token without an EIP-2612 domain is unusable when configured with permit');
    assert.match(refused.ok ? '' : refused.reason, /^permit: the token's EIP-712 domain .* could not be read/);
    // Not configured with permit: the same token's metadata has no permit domain.
    const unflagged = createTokenMetadataCache({ client, tokens: [usdc.address] });
    await unflagged.refresh();
    assert.deepEqual(unflagged.get(usdc.address), { ok: true, metadata: { symbol: 'USDC', decimals: 6 } });
  });

  test('a DOMAIN_SEPARATOR() that is not the EIP-712 domain of name() and version() makes the token unusable', async () => {
    const usdc = await deployDevToken({ client: dev, name: 'USD Coin', symbol: 'USDC', decimals: 6, permit: true });
    // A token answering USDC's DOMAIN_SEPARATOR() (version "2", USDC's address) from another address, version "1".
    const separator = await client.readContract({
      address: usdc.address,
      abi: devFiatTokenAbi,
      functionName: 'DOMAIN_SEPARATOR',
    });
    const lying = await deployInline(
      `contract Lying {
        function name() external pure returns (string memory) { return "USD Coin"; }
        function symbol() external pure returns (string memory) { return "USDC"; }
        function decimals() external pure returns (uint8) { return 6; }
        function version() external pure returns (string memory) { return "1"; }
        function DOMAIN_SEPARATOR() external pure returns (bytes32) { return ${separator}; }
      }`,
      'Lying',
    );
    const cache = createTokenMetadataCache({ client, tokens: [lying], permitTokens: [lying] });
    await cache.refresh();
    const state = cache.get(lying);
    assert.equal(state.ok, false);
    assert.match(
      state.ok ? '' : state.reason,
      /^permit: DOMAIN_SEPARATOR\(\) is not the EIP-712 domain of name "USD Coin", version "1"/,
    );
  });
});
