import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChainRuntime, Eip1193Request } from './chainRegistry.js';
import { eip1193ChainRuntime } from './chainRegistry.js';
import { createFeeOracle } from './feeOracle.js';

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
