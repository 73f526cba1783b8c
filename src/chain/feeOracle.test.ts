import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeFunctionResult } from 'viem';
import type { ChainRuntime, Eip1193Request } from './chainRegistry.js';
import { eip1193ChainRuntime } from './chainRegistry.js';
import { createFeeOracle } from './feeOracle.js';
import { ARBITRUM_NODE_INTERFACE, nodeInterfaceAbi } from './readL1Fee.js';

/**
 * The oracle's caching against a scripted node (the block number and base fee are the script's); the real
 * chain's answers are exercised by the signing-bounds end-to-end test on EDR.
 */
function scriptedChain() {
  const state = { block: 1n, baseFee: 7n, tip: 3n, time: 1_800_000_000, failing: false, calls: { block: 0, tip: 0 } };
  const request: Eip1193Request = async ({ method }) => {
    if (state.failing) throw new Error('connection refused');
    if (method === 'eth_getBlockByNumber') {
      state.calls.block++;
      return {
        number: `0x${state.block.toString(16)}`,
        baseFeePerGas: `0x${state.baseFee.toString(16)}`,
        timestamp: `0x${state.time.toString(16)}`,
      };
    }
    if (method === 'eth_maxPriorityFeePerGas') {
      state.calls.tip++;
      return `0x${state.tip.toString(16)}`;
    }
    throw new Error(`unexpected ${method}`);
  };
  const chain: ChainRuntime = eip1193ChainRuntime({
    chainId: 5,
    request,
    entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789',
    paymaster: '0x1111111111111111111111111111111111111111',
  });
  return { state, chain };
}

test('one read per refresh interval whatever the request rate; the tip is read again only on a new block', async () => {
  const { state, chain } = scriptedChain();
  let now = 0;
  const oracle = createFeeOracle({ refreshMs: 1000, maxAgeMs: 30_000, now: () => now });
  const first = await Promise.all(Array.from({ length: 50 }, () => oracle.get(chain)));
  assert.deepEqual(state.calls, { block: 1, tip: 1 }, '50 concurrent first requests share one read');
  assert.equal(first[49]?.baseFee, 7n);
  for (let i = 0; i < 100; i++) await oracle.get(chain);
  assert.deepEqual(state.calls, { block: 1, tip: 1 });
  now = 1500;
  state.baseFee = 9n;
  // Stale but within maxAge: answered at once from the cache, refreshed behind it.
  assert.equal((await oracle.get(chain))?.baseFee, 7n);
  await new Promise((r) => setImmediate(r));
  assert.equal((await oracle.get(chain))?.baseFee, 9n);
  assert.deepEqual(state.calls, { block: 2, tip: 1 }, 'same block: the tip is not read again');
  now = 3000;
  state.block = 2n;
  state.tip = 4n;
  state.time += 12;
  await oracle.get(chain);
  await new Promise((r) => setImmediate(r));
  assert.equal((await oracle.get(chain))?.tip, 4n);
  // The latest block's time comes with the same read: the chain's clock for validity windows.
  assert.equal((await oracle.get(chain))?.timestamp, 1_800_000_012);
  assert.deepEqual(state.calls, { block: 3, tip: 2 });
});

test('a chain that cannot be read gives nothing once its last fees are older than maxAge', async () => {
  const { state, chain } = scriptedChain();
  let now = 0;
  const errors: number[] = [];
  const oracle = createFeeOracle({
    refreshMs: 1000,
    maxAgeMs: 10_000,
    now: () => now,
    onError: (id) => errors.push(id),
  });
  assert.equal(
    await createFeeOracle({ refreshMs: 1, maxAgeMs: 1, now: () => 0 }).get({
      ...chain,
      request: async () => {
        throw new Error('down');
      },
    }),
    undefined,
  );
  assert.equal((await oracle.get(chain))?.baseFee, 7n);
  state.failing = true;
  now = 5000;
  assert.equal((await oracle.get(chain))?.baseFee, 7n, 'within maxAge the last read stands');
  now = 10_001;
  assert.equal(await oracle.get(chain), undefined);
  assert.ok(errors.length >= 1 && errors.every((id) => id === 5));
  state.failing = false;
  assert.equal((await oracle.get(chain))?.baseFee, 7n, 'back as soon as the chain answers');
});

test('a block without a base fee (no EIP-1559) is unreadable, so nothing is bounded and nothing signed', async () => {
  const { chain } = scriptedChain();
  const legacy = { ...chain, request: (async () => ({ number: '0x1' })) as Eip1193Request };
  const oracle = createFeeOracle({ refreshMs: 1000, maxAgeMs: 10_000, now: () => 0 });
  assert.equal(await oracle.get(legacy), undefined);
});

/** A scripted Arbitrum node: its NodeInterface answers gasEstimateL1Component with the script's L1 price. */
function scriptedArbitrum() {
  const { state, chain } = scriptedChain();
  const l1 = { pricePerUnit: 20_000_000n, failing: false, calls: 0, blocks: [] as unknown[] };
  const request: Eip1193Request = async (args) => {
    if (args.method !== 'eth_call') return chain.request(args);
    l1.calls++;
    const [call, block] = args.params ?? [];
    l1.blocks.push(block);
    assert.equal((call as { to?: string }).to, ARBITRUM_NODE_INTERFACE);
    if (l1.failing) throw new Error('execution reverted');
    return encodeFunctionResult({
      abi: nodeInterfaceAbi,
      functionName: 'gasEstimateL1Component',
      result: [0n, 10_000_000n, l1.pricePerUnit],
    });
  };
  return { state, l1, chain: { ...chain, request, l1Fee: 'arbitrum' as const } };
}

test("an L2's L1 fee is read with the block's fees, once per new block, at that block", async () => {
  const { state, l1, chain } = scriptedArbitrum();
  let now = 0;
  const oracle = createFeeOracle({ refreshMs: 1000, maxAgeMs: 30_000, now: () => now });
  const first = await Promise.all(Array.from({ length: 20 }, () => oracle.get(chain)));
  assert.deepEqual(first[19]?.l1, { kind: 'arbitrum', l1PricePerUnit: 20_000_000n, l2BaseFee: 10_000_000n });
  assert.equal(l1.calls, 1);
  assert.deepEqual(l1.blocks, ['0x1'], 'read at the block whose base fee it comes with');
  now = 1500;
  l1.pricePerUnit = 200_000_000n;
  await oracle.get(chain);
  await new Promise((r) => setImmediate(r));
  assert.equal(l1.calls, 1, 'same block: the L1 fee is not read again');
  assert.equal((await oracle.get(chain))?.l1?.kind, 'arbitrum');
  now = 3000;
  state.block = 2n;
  await oracle.get(chain);
  await new Promise((r) => setImmediate(r));
  const spiked = (await oracle.get(chain))?.l1;
  assert.equal(spiked?.kind === 'arbitrum' ? spiked.l1PricePerUnit : undefined, 200_000_000n);
  assert.equal(l1.calls, 2);
});

test('an L1 fee that cannot be read is fees that cannot be read: the last read stands until maxAge, then nothing', async () => {
  const { state, l1, chain } = scriptedArbitrum();
  let now = 0;
  const errors: unknown[] = [];
  const oracle = createFeeOracle({
    refreshMs: 1000,
    maxAgeMs: 10_000,
    now: () => now,
    onError: (_, err) => errors.push(err),
  });
  assert.equal((await oracle.get(chain))?.baseFee, 7n);
  l1.failing = true;
  state.block = 2n;
  state.baseFee = 9n;
  now = 5000;
  const stale = await oracle.get(chain);
  await new Promise((r) => setImmediate(r));
  assert.equal(stale?.blockNumber, 1n, 'within maxAge the last whole read stands, its L1 fee with it');
  assert.equal((await oracle.get(chain))?.baseFee, 7n, 'a new block whose L1 fee fails is not taken half');
  now = 10_001;
  assert.equal(await oracle.get(chain), undefined);
  assert.match(String(errors[0]), /execution reverted/);
  l1.failing = false;
  assert.equal((await oracle.get(chain))?.baseFee, 9n, 'back as soon as the oracle answers');
});
