import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, type Hex, keccak256, pad } from 'viem';
import { type ChainRuntime, eip1193ChainRuntime } from './chainRegistry.js';
import { createEmbeddedChain, type EmbeddedChain } from './embeddedChain.js';
import { CODE_TTL_MS, createChainReads, delegationCodeHash, SHORT_TTL_MS } from './senderCode.js';

/**
 * The sender-code cache against the in-process EVM (EDR): real eth_getCode / eth_getStorageAt answers, with the
 * node's requests counted to see what the cache saves, and hardhat_setCode to change code under it.
 */
const CONTRACT: Address = '0x00000000000000000000000000000000000c0de1';
const EOA: Address = '0x00000000000000000000000000000000000e0a01';
const NOBODY: Address = '0x00000000000000000000000000000000000e0a02';
const DELEGATE_A: Address = '0xe6Cae83BdE06E4c305530e199D7217f42808555B';
const DELEGATE_B: Address = '0xa46cc63eBF4Bd77888AA327837d20b23A63a56B5';
const CODE: Hex = '0x60005460010160005500';

let node: EmbeddedChain;
let chain: ChainRuntime;
const calls = new Map<string, number>();
const count = (method: string) => calls.get(method) ?? 0;
const setCode = (address: Address, code: Hex) => node.request({ method: 'hardhat_setCode', params: [address, code] });

before(async () => {
  node = await createEmbeddedChain({ fundedAccounts: [] });
  chain = eip1193ChainRuntime({
    chainId: node.chainId,
    request: async (args) => {
      calls.set(args.method, count(args.method) + 1);
      return node.request(args);
    },
    entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789',
    paymaster: '0x1111111111111111111111111111111111111111',
  });
  await setCode(CONTRACT, CODE);
  await setCode(EOA, `0xef0100${DELEGATE_A.slice(2)}`);
  await node.request({ method: 'hardhat_setStorageAt', params: [CONTRACT, pad('0x00'), pad(DELEGATE_B)] });
});
after(() => node.close());

describe('createChainReads', () => {
  test("a contract's code is read once and kept for CODE_TTL_MS; its hash is EXTCODEHASH's", async () => {
    let now = 0;
    const reads = createChainReads({ maxEntries: 100, now: () => now });
    const before = count('eth_getCode');
    const first = await reads.code(chain, CONTRACT);
    assert.deepEqual(first, { codeHash: keccak256(CODE), delegate: undefined });
    now = CODE_TTL_MS - 1;
    await Promise.all(Array.from({ length: 20 }, () => reads.code(chain, CONTRACT)));
    assert.equal(count('eth_getCode') - before, 1, 'one read for 21 lookups');
    now = CODE_TTL_MS + 1;
    await reads.code(chain, CONTRACT);
    assert.equal(count('eth_getCode') - before, 2, 'read again once the hour is over');
  });

  test('an EIP-7702 delegation lives SHORT_TTL_MS: a re-delegation is seen within seconds', async () => {
    let now = 0;
    const reads = createChainReads({ maxEntries: 100, now: () => now });
    const a = await reads.code(chain, EOA);
    assert.deepEqual(a, { codeHash: delegationCodeHash(DELEGATE_A), delegate: DELEGATE_A });
    await setCode(EOA, `0xef0100${DELEGATE_B.slice(2)}`);
    now = SHORT_TTL_MS - 1;
    assert.equal((await reads.code(chain, EOA))?.delegate, DELEGATE_A, 'still the cached delegation');
    now = SHORT_TTL_MS + 1;
    assert.equal((await reads.code(chain, EOA))?.delegate, DELEGATE_B, 'the new one after SHORT_TTL_MS');
    assert.equal((await reads.code(chain, EOA))?.codeHash, keccak256(`0xef0100${DELEGATE_B.slice(2).toLowerCase()}`));
  });

  test('an address without code is never cached: it may be deployed by the next block', async () => {
    const reads = createChainReads({ maxEntries: 100, now: () => 0 });
    const before = count('eth_getCode');
    assert.equal(await reads.code(chain, NOBODY), undefined);
    assert.equal(await reads.code(chain, NOBODY), undefined);
    assert.equal(count('eth_getCode') - before, 2, 'read each time');
    await setCode(NOBODY, CODE);
    assert.equal((await reads.code(chain, NOBODY))?.codeHash, keccak256(CODE), 'seen at once once deployed');
    await setCode(NOBODY, '0x');
  });

  test('a storage slot (a proxy implementation) lives SHORT_TTL_MS', async () => {
    let now = 0;
    const reads = createChainReads({ maxEntries: 100, now: () => now });
    const before = count('eth_getStorageAt');
    assert.equal(await reads.storage(chain, CONTRACT, pad('0x00')), pad(DELEGATE_B.toLowerCase() as Hex));
    now = SHORT_TTL_MS - 1;
    await reads.storage(chain, CONTRACT, pad('0x00'));
    assert.equal(count('eth_getStorageAt') - before, 1);
    now = SHORT_TTL_MS + 1;
    await reads.storage(chain, CONTRACT, pad('0x00'));
    assert.equal(count('eth_getStorageAt') - before, 2, 'an upgrade is seen within SHORT_TTL_MS');
  });

  test('the cache holds at most maxEntries, evicting the least recently used', async () => {
    const reads = createChainReads({ maxEntries: 2, now: () => 0 });
    const addresses = [1, 2, 3].map((i) => pad(`0x${(0xc0de00 + i).toString(16)}`, { size: 20 }));
    for (const a of addresses) await setCode(a, CODE);
    const before = count('eth_getCode');
    for (const a of [...addresses, addresses[0] as Address]) await reads.code(chain, a);
    assert.equal(count('eth_getCode') - before, 4, 'the first was evicted by the third, so it is read again');
    await reads.code(chain, addresses[2] as Address);
    assert.equal(count('eth_getCode') - before, 4, 'the third is still held');
  });

  test('a chain that does not answer is UnavailableError (HTTP 503, which clients retry)', async () => {
    const broken = eip1193ChainRuntime({
      chainId: 9,
      request: async () => {
        throw new Error('connection refused');
      },
      entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789',
      paymaster: '0x1111111111111111111111111111111111111111',
    });
    const reads = createChainReads({ maxEntries: 10, now: () => 0 });
    await assert.rejects(reads.code(broken, CONTRACT), { name: 'UnavailableError' });
    await assert.rejects(reads.storage(broken, CONTRACT, pad('0x00')), { name: 'UnavailableError' });
  });
});
