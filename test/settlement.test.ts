import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Hex } from 'viem';
import { getUserOperationHash } from 'viem/account-abstraction';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { createSettlementFollower, type SettlementFollower } from '../src/settlement/settlementFollower.js';
import type { ChainWindow, LedgerCharge } from '../src/store/ledger/spendLedgerRepository.js';
import type { Store } from '../src/store/store.js';
import {
  buildDeployingOp,
  fixtureChainRuntime,
  signAccount,
  signPaymaster,
  submitHandleOps,
} from './helpers/patronPaymasterV06.js';
import { BACKEND, dropTestSchema, insertBareDapp, openTestStore } from './helpers/testContext.js';
import { usePatronChain } from './helpers/usePatronChain.js';

/**
 * The settlement follower on the in-process chain (EntryPoint v0.6 and Patron's paymaster) and the configured
 * back end: a reservation made for an op's userOpHash is replaced by the op's actualGasCost as read from its
 * UserOperationEvent, once, whatever is read again (a second round, a restart, a rewound cursor, a reorg, a
 * second process), and only once the event is `confirmations` deep. Each test has its own store and its own
 * EVM snapshot.
 */
const WEI_CAP = 10n ** 18n;
const RESERVED_WEI = 10n ** 16n;
const RESERVED_USD = 5_000_000n;
/** $2,500.000001 per coin, in micro-USD: not a round number, so the rounding up is visible. */
const PRICE_MICROS = 2_500_000_001n;

describe(`settlement follower (${BACKEND})`, () => {
  const chain = usePatronChain();
  let store: Store;
  let schema: string | undefined;
  let dappId: string;
  let errors: string[];
  let warnings: string[];
  let keys: { wei: string; usd: string; ops: string };

  beforeEach(async () => {
    ({ store, schema } = await openTestStore());
    dappId = await insertBareDapp(store, 'settlement');
    errors = [];
    warnings = [];
    const k = randomUUID();
    keys = { wei: `t|${k}|wei`, usd: `t|${k}|usd`, ops: `t|${k}|ops` };
  });
  afterEach(async () => {
    await store.close();
    await dropTestSchema(schema);
  });

  /** Every event the followers passed on after settling it (onIncluded), as userOpHash@block. */
  let included: string[] = [];
  /** Makes onIncluded throw (it must not hold the round). */
  let includedFails = false;
  beforeEach(() => {
    included = [];
    includedFails = false;
  });

  function follower(over: { confirmations?: number; on?: Store } = {}): SettlementFollower {
    const on = over.on ?? store;
    return createSettlementFollower({
      onIncluded: async ({ event }) => {
        included.push(`${event.userOpHash}@${event.blockNumber}`);
        if (includedFails) throw new Error('the metrics are down');
      },
      chain: fixtureChainRuntime(chain.fx),
      cursors: on.chainCursors,
      ledger: on.spendLedger,
      nativeUsdMicros: () => PRICE_MICROS,
      confirmations: over.confirmations ?? 0,
      maxBlockRange: 2000n,
      logger: {
        error: (_o, msg) => errors.push(msg),
        warn: (_o, msg) => warnings.push(msg),
        info: () => {},
        debug: () => {},
      },
      now: Date.now,
    });
  }

  /** A sponsored, fully signed op (salt: another account) and its EntryPoint userOpHash. */
  async function sponsoredOp(salt = 0n): Promise<{ op: UserOperationV06; hash: Hex }> {
    const signed = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx, salt), chain.window);
    const op = await signAccount(chain.fx, signed);
    const hash = getUserOperationHash({
      chainId: chain.fx.chain.chainId,
      entryPointAddress: chain.fx.entryPoint,
      entryPointVersion: '0.6',
      userOperation: op,
    });
    return { op, hash: hash.toLowerCase() as Hex };
  }

  const charges = (): LedgerCharge[] => [
    { key: keys.wei, unit: 'wei', amount: RESERVED_WEI, limit: WEI_CAP, windowEnd: undefined },
    { key: keys.usd, unit: 'usd', amount: RESERVED_USD, limit: 10n ** 12n, windowEnd: undefined },
    { key: keys.ops, unit: 'ops', amount: 1n, limit: 10n, windowEnd: undefined },
  ];

  async function reserve(hash: Hex, window: ChainWindow = { unit: 'seconds', until: chain.window.validUntil }) {
    const r = await store.spendLedger.reserve({
      id: randomUUID(),
      dappId,
      chainId: chain.fx.chain.chainId,
      userOpHash: hash,
      charges: charges(),
      expiresAt: Date.now() + 3_600_000,
      now: Date.now(),
      window,
      paymaster: chain.fx.paymaster,
    });
    assert.deepEqual(r, { ok: true });
  }

  async function counters(on: Store = store) {
    const m = await on.spendLedger.counters([keys.wei, keys.usd, keys.ops]);
    const get = (k: string) => m.get(k) ?? { used: -1n, reserved: -1n };
    return { wei: get(keys.wei), usd: get(keys.usd), ops: get(keys.ops) };
  }

  const usdOf = (wei: bigint) => (wei * PRICE_MICROS + 10n ** 18n - 1n) / 10n ** 18n;

  /** Submits the op with handleOps and returns its actualGasCost and block, read from the receipt. */
  async function include(op: UserOperationV06) {
    const { receipt, events } = await submitHandleOps(chain.fx, [op], { gas: 3_000_000n });
    assert.equal(receipt.status, 'success');
    const [event] = events;
    assert.ok(event !== undefined && events.length === 1, 'one UserOperationEvent');
    return { cost: event.args.actualGasCost, block: receipt.blockNumber, blockHash: receipt.blockHash };
  }

  const cursor = () => store.chainCursors.get(fixtureChainRuntime(chain.fx));

  test('settles the op by its actualGasCost; a second round and the same event read again count nothing', async () => {
    const f = follower();
    await f.runOnce(); // first start: the cursor is set at the head
    const { op, hash } = await sponsoredOp();
    await reserve(hash);
    assert.deepEqual(await counters(), {
      wei: { used: 0n, reserved: RESERVED_WEI },
      usd: { used: 0n, reserved: RESERVED_USD },
      ops: { used: 0n, reserved: 1n },
    });
    const { cost, block, blockHash } = await include(op);
    const report = await f.runOnce();
    assert.equal(report.settled, 1);
    const settled = {
      wei: { used: cost, reserved: 0n },
      usd: { used: usdOf(cost), reserved: 0n },
      ops: { used: 1n, reserved: 0n },
    };
    assert.deepEqual(await counters(), settled);
    assert.deepEqual(await cursor(), { blockNumber: block, blockHash });
    assert.deepEqual(included, [`${hash}@${block}`], 'passed on once settled');

    assert.deepEqual(await f.runOnce(), {
      fromBlock: undefined,
      toBlock: undefined,
      settled: 0,
      unmatched: 0,
      reorg: false,
    });
    const again = { chainId: chain.fx.chain.chainId, userOpHash: hash, opKey: hash, actualWei: cost, now: Date.now() };
    assert.equal((await store.spendLedger.settleUserOp({ ...again, actualUsdMicros: 1n })).settled, false);
    // A crash between the settlement and the cursor's step: the block is read again, and nothing is added.
    const at = await cursor();
    assert.ok(at);
    const before = {
      blockNumber: block - 1n,
      blockHash: (await chain.fx.client.getBlock({ blockNumber: block - 1n })).hash,
    };
    assert.equal(
      await store.chainCursors.rewind({ ...fixtureChainRuntime(chain.fx), from: at, to: before, now: 0 }),
      true,
    );
    const reread = await f.runOnce();
    assert.deepEqual([reread.fromBlock, reread.settled, reread.unmatched], [block, 0, 1]);
    assert.deepEqual(await counters(), settled);
    assert.deepEqual(f.status().settled, 1);
    assert.deepEqual(errors, []);
  });

  test('an onIncluded that fails is logged and holds nothing: settled, cursor moved', async () => {
    const f = follower();
    await f.runOnce();
    const { op, hash } = await sponsoredOp();
    await reserve(hash);
    includedFails = true;
    const { cost, block } = await include(op);
    assert.equal((await f.runOnce()).settled, 1);
    assert.deepEqual((await counters()).wei, { used: cost, reserved: 0n });
    assert.equal((await cursor())?.blockNumber, block);
    assert.deepEqual(warnings, ['settlement: onIncluded failed']);
  });

  test('a new follower on the same store resumes after the cursor and does not read settled blocks again', async () => {
    const first = follower();
    await first.runOnce();
    const one = await sponsoredOp(1n);
    await reserve(one.hash);
    const a = await include(one.op);
    assert.equal((await first.runOnce()).settled, 1);

    const restarted = follower();
    const idle = await restarted.runOnce();
    assert.equal(idle.fromBlock, undefined, 'nothing new since the cursor');
    const two = await sponsoredOp(2n);
    await reserve(two.hash);
    const b = await include(two.op);
    const report = await restarted.runOnce();
    assert.deepEqual(
      [report.fromBlock, report.toBlock, report.settled, report.unmatched],
      [a.block + 1n, b.block, 1, 0],
    );
    assert.deepEqual((await counters()).wei, { used: a.cost + b.cost, reserved: 0n });
    assert.deepEqual((await counters()).ops, { used: 2n, reserved: 0n });
    const status = restarted.status();
    assert.deepEqual([status.cursorBlock, status.lag, status.lastError], [b.block, 0n, undefined]);
  });

  test('with 2 confirmations the op is settled only once 2 more blocks are mined', async () => {
    const f = follower({ confirmations: 2 });
    await f.runOnce();
    const { op, hash } = await sponsoredOp();
    await reserve(hash);
    const { cost, block } = await include(op);
    assert.equal((await f.runOnce()).settled, 0);
    assert.equal((await counters()).wei.reserved, RESERVED_WEI);
    await chain.fx.client.mine({ blocks: 1 });
    assert.equal((await f.runOnce()).settled, 0, 'one block deep');
    assert.equal((await cursor())?.blockNumber, block - 1n);
    await chain.fx.client.mine({ blocks: 1 });
    assert.equal((await f.runOnce()).settled, 1, 'two blocks deep');
    assert.deepEqual((await counters()).wei, { used: cost, reserved: 0n });
    assert.equal((await cursor())?.blockNumber, block);
    assert.equal(f.status().lag, 2n);
  });

  test('a reorg that replaced the settled block is seen by its hash: re-read, new ops settled, none twice', async () => {
    const f = follower();
    await f.runOnce();
    const one = await sponsoredOp(1n);
    const two = await sponsoredOp(2n);
    await reserve(one.hash);
    const branch = await chain.fx.client.snapshot();
    const old = await include(one.op);
    assert.equal((await f.runOnce()).settled, 1);
    assert.deepEqual(await cursor(), { blockNumber: old.block, blockHash: old.blockHash });

    // The other branch: the block at that height now holds op two, and op one comes a block later.
    await chain.fx.client.revert({ id: branch });
    const oldTime = (await chain.fx.client.getBlock({ blockNumber: old.block - 1n })).timestamp;
    await chain.fx.client.setNextBlockTimestamp({ timestamp: oldTime + 100n });
    await reserve(two.hash);
    const replaced = await include(two.op);
    const later = await include(one.op);
    assert.equal(replaced.block, old.block);
    assert.notEqual(replaced.blockHash, old.blockHash, 'EDR replaced the block');

    const report = await f.runOnce();
    assert.equal(report.reorg, true);
    assert.deepEqual([report.settled, report.unmatched], [2, 0], 'op one reopened and settled again, op two settled');
    assert.equal(errors.length, 1, 'the reorg is logged as an error');
    assert.deepEqual((await counters()).wei, { used: later.cost + replaced.cost, reserved: 0n }, 'the canonical costs');
    assert.deepEqual((await counters()).ops, { used: 2n, reserved: 0n });
    assert.deepEqual(await cursor(), { blockNumber: later.block, blockHash: later.blockHash });
    assert.equal(f.status().reorgs, 1);
    assert.deepEqual(await f.runOnce(), {
      fromBlock: undefined,
      toBlock: undefined,
      settled: 0,
      unmatched: 0,
      reorg: false,
    });
  });

  test('a reorg re-includes a settled op at a higher cost: used ends at the canonical cost; one not re-included is open again, then released past its window', async () => {
    const f = follower();
    await f.runOnce();
    const one = await sponsoredOp(1n);
    const two = await sponsoredOp(2n);
    await reserve(one.hash);
    const start = await chain.fx.client.getBlock({ blockTag: 'latest' });
    // Two's window closes a minute after the chain's present: the new branch will pass it.
    await reserve(two.hash, { unit: 'seconds', until: Number(start.timestamp) + 60 });
    const branch = await chain.fx.client.snapshot();
    const cheap = await include(one.op);
    const lost = await include(two.op);
    assert.equal((await f.runOnce()).settled, 2);
    assert.deepEqual((await counters()).wei, { used: cheap.cost + lost.cost, reserved: 0n });

    // The canonical branch: a higher base fee, op one included at its new cost, op two never; and longer.
    await chain.fx.client.revert({ id: branch });
    await chain.fx.client.setNextBlockTimestamp({ timestamp: start.timestamp + 5n });
    await chain.fx.client.setNextBlockBaseFeePerGas({ baseFeePerGas: (start.baseFeePerGas ?? 1n) * 3n });
    const dear = await include(one.op);
    assert.ok(dear.cost > cheap.cost, `${dear.cost} > ${cheap.cost}`);
    await chain.fx.client.mine({ blocks: 3 });
    const report = await f.runOnce();
    assert.equal(report.reorg, true);
    assert.equal(report.settled, 1, 'op one settled again, at the new cost');
    assert.deepEqual(await counters(), {
      wei: { used: dear.cost, reserved: RESERVED_WEI },
      usd: { used: usdOf(dear.cost), reserved: RESERVED_USD },
      ops: { used: 1n, reserved: 1n },
    });
    // Op two is open again: the chain may still include it until its window closes, then it is released.
    await chain.fx.client.setNextBlockTimestamp({ timestamp: start.timestamp + 61n });
    await chain.fx.client.mine({ blocks: 1 });
    await f.runOnce();
    assert.deepEqual((await counters()).wei, { used: dear.cost, reserved: 0n });
    assert.deepEqual((await counters()).ops, { used: 1n, reserved: 0n });
  });

  test('a cursor past the head (a restarted dev chain on a kept database) steps back below the head', async () => {
    const f = follower();
    const head = await chain.fx.client.getBlockNumber({ cacheTime: 0 });
    const key = fixtureChainRuntime(chain.fx);
    const stale = { blockNumber: head + 500n, blockHash: `0x${'ab'.repeat(32)}` };
    assert.equal(await store.chainCursors.initialize({ ...key, to: stale, now: 0 }), true);
    const { op, hash } = await sponsoredOp();
    await reserve(hash);
    const { cost } = await include(op);
    const report = await f.runOnce();
    assert.deepEqual([report.reorg, report.settled], [true, 1]);
    assert.deepEqual((await counters()).wei, { used: cost, reserved: 0n });
  });

  test('two followers (two processes) on one database: each event counts once, the cursor never goes back', async () => {
    const second = schema === undefined ? { store } : await openTestStore({ schema });
    try {
      const [a, b] = [follower(), follower({ on: second.store })];
      await a.runOnce();
      const ops = [await sponsoredOp(1n), await sponsoredOp(2n), await sponsoredOp(3n)];
      let cost = 0n;
      for (const o of ops) {
        await reserve(o.hash);
        cost += (await include(o.op)).cost;
      }
      const reports = await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
      assert.equal(
        reports.reduce((n, r) => n + r.settled, 0),
        3,
      );
      assert.deepEqual((await counters()).wei, { used: cost, reserved: 0n });
      assert.deepEqual((await counters()).ops, { used: 3n, reserved: 0n });
      const at = await cursor();
      assert.ok(at);
      const lower = { blockNumber: at.blockNumber - 1n, blockHash: `0x${'cd'.repeat(32)}` };
      const key = fixtureChainRuntime(chain.fx);
      assert.equal(await second.store.chainCursors.advance({ ...key, to: lower, now: 0 }), false);
      assert.deepEqual(await cursor(), at);
    } finally {
      if (second.store !== store) await second.store.close();
    }
  });

  test('released only once the cursor block is past the signed window, whatever the server clock; an op included after that counts once', async () => {
    const f = follower();
    await f.runOnce();
    const head = await chain.fx.client.getBlock({ blockTag: 'latest' });
    const late = await sponsoredOp(1n);
    // The server's clock is far past this window (the chain's last block is older than now): nothing is released
    // while the chain does not move.
    const validUntil = Number(head.timestamp) + 30;
    await reserve(late.hash, { unit: 'seconds', until: validUntil });
    const recent = await sponsoredOp(2n);
    await reserve(recent.hash);
    assert.equal((await f.runOnce()).settled, 0);
    assert.equal(f.status().released, 0);
    assert.deepEqual((await counters()).wei, { used: 0n, reserved: 2n * RESERVED_WEI });
    // A block at validUntil: the op is still valid in it.
    await chain.fx.client.setNextBlockTimestamp({ timestamp: BigInt(validUntil) });
    await chain.fx.client.mine({ blocks: 1 });
    await f.runOnce();
    assert.equal(f.status().released, 0);
    // The next block is past it: the chain can no longer include the op, and the cursor says everything before is read.
    // (EDR's hardhat_mine can repeat a timestamp, as some L2s do: a block at the same second is still "at" it.)
    await chain.fx.client.mine({ blocks: 1 });
    await f.runOnce();
    assert.equal(f.status().released, 0, 'a second block at validUntil');
    await chain.fx.client.setNextBlockTimestamp({ timestamp: BigInt(validUntil + 1) });
    await chain.fx.client.mine({ blocks: 1 });
    await f.runOnce();
    assert.equal(f.status().released, 1);
    assert.deepEqual((await counters()).wei, { used: 0n, reserved: RESERVED_WEI });

    // Included all the same (here its signature says otherwise): counted, once.
    const { cost } = await include(late.op);
    assert.equal((await f.runOnce()).settled, 1);
    assert.deepEqual((await counters()).wei, { used: cost, reserved: RESERVED_WEI }, 'the other stays reserved');
    assert.deepEqual((await counters()).ops, { used: 1n, reserved: 1n });
    const key = fixtureChainRuntime(chain.fx);
    const at = await cursor();
    assert.ok(at);
    const back = {
      blockNumber: at.blockNumber - 1n,
      blockHash: (await chain.fx.client.getBlock({ blockNumber: at.blockNumber - 1n })).hash,
    };
    await store.chainCursors.rewind({ ...key, from: at, to: back, now: 0 });
    assert.equal((await f.runOnce()).settled, 0, 'read again: counted once');
    assert.deepEqual((await counters()).wei, { used: cost, reserved: RESERVED_WEI });
  });
});
