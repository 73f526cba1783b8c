import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, test } from 'node:test';
import {
  type Address,
  createPublicClient,
  custom,
  encodeFunctionData,
  getAddress,
  type Hex,
  type PublicClient,
  parseEther,
} from 'viem';
import { devTokenAbi } from '../src/chain/artifacts.js';
import { createChainRegistry, eip1193ChainRuntime } from '../src/chain/chainRegistry.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { ENTRY_POINT_ADDRESSES } from '../src/chain/entryPoints.js';
import { opKey } from '../src/chain/opKey.js';
import type { PendingEvent } from '../src/lifecycleEvents/eventRecorder.js';
import { createIncludedEmitter } from '../src/lifecycleEvents/lifecycleEventEmitters.js';
import { buildSettlement } from '../src/settlement/buildSettlement.js';
import { createSettlementFollower } from '../src/settlement/settlementFollower.js';
import { createTankFollowers, type TankFollowers, type TankToFollow } from '../src/settlement/tankFollowers.js';
import { alwaysHeld } from '../src/store/db/followerLease.js';
import { reservationId } from '../src/store/ledger/reservationMerge.js';
import type { ChainWindow, LedgerCharge } from '../src/store/ledger/spendLedgerRepository.js';
import type { Store } from '../src/store/store.js';
import {
  accountAddress,
  buildDeployingOp,
  createAccountInitCode,
  executeCallData,
  handleOne,
  mintToken,
  type OpV07,
  signAccount,
  tokenBalance,
  userOpHashOf,
  useV07Chain,
} from './helpers/patronPaymasterV07.js';
import { BACKEND, dropTestSchema, insertBareDapp, openTestStore, testConfig } from './helpers/testContext.js';

/**
 * MEE gas tanks' settlement (issue 35) on the in-process chain, EntryPoint v0.7: a tank's payment op is an op whose
 * sender is the tank and whose gas another paymaster pays (the MEE node's). There is no Nexus bytecode on the dev
 * chain, so the "tank" here is a SimpleAccount v0.7 paying its own gas (paymaster topic zero, as foreign to Patron's
 * paymaster as the node's), whose op transfers the dev USDC to a "node": real UserOperationEvents whose sender is
 * the tank. Its reservation is made as the MEE sign endpoint makes it (kind 'mee', paymaster = the tank, op key of
 * (chain, EntryPoint v0.7, tank, nonce), window in seconds). Each test has its own store and EVM snapshot.
 */
const CAP = 10n ** 18n;
const RESERVED_WEI = 7n * 10n ** 15n;
const RESERVED_USD = 3_250_000n;
/** A native price the tank's settlement must not use: its payment is fixed. */
const PRICE_MICROS = 2_500_000_001n;
const NODE = getAddress('0x00000000000000000000000000000000000e0de0');
const PAYMENT = 1_500_000n;

describe(`settlement of MEE gas tanks (${BACKEND})`, () => {
  let usdc: DevTokenInfo;
  const chain = useV07Chain('0.7', {
    async setUp(fx) {
      [usdc] = fx.tokens as [DevTokenInfo];
    },
  });
  let store: Store;
  let schema: string | undefined;
  let dappA: string;
  let dappB: string;
  let keysA: { wei: string; usd: string; ops: string };
  let keysB: { wei: string; usd: string; ops: string };
  let tank: Address;
  let tanks: TankToFollow[];
  /** What the tank followers told of each included op: `userOpHash:success:dApps`. */
  let included: string[];
  let reorgs: number;

  const keysOf = () => {
    const k = randomUUID();
    return { wei: `m|${k}|wei`, usd: `m|${k}|usd`, ops: `m|${k}|ops` };
  };

  beforeEach(async () => {
    ({ store, schema } = await openTestStore());
    dappA = await insertBareDapp(store, 'mee-a');
    dappB = await insertBareDapp(store, 'mee-b');
    keysA = keysOf();
    keysB = keysOf();
    included = [];
    reorgs = 0;
    tank = await accountAddress(chain.fx, 7n);
    tanks = [{ id: 'tank_a', dappId: dappA, chainId: chain.fx.chainId, address: tank, status: 'active' }];
    // The tank pays its own gas (the MEE node's paymaster stands apart from Patron's the same way) and holds USDC.
    const funding = await chain.fx.client.sendTransaction({ to: tank, value: parseEther('1') });
    await chain.fx.client.waitForTransactionReceipt({ hash: funding });
    await mintToken(chain.fx, usdc.address, tank, 10n * PAYMENT);
  });
  afterEach(async () => {
    await store.close();
    await dropTestSchema(schema);
  });

  const publicClient = (): PublicClient =>
    createPublicClient({
      transport: custom({
        request: (args: { method: string; params?: unknown }) =>
          chain.fx.chain.request(args as Parameters<typeof chain.fx.chain.request>[0]),
      }),
    });

  const logger = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} };

  /** What both kinds of follower are given here: this test's store, no depth, a price the tanks must not use. */
  const followerBase = () => ({
    cursors: store.chainCursors,
    ledger: store.spendLedger,
    nativeUsdMicros: () => PRICE_MICROS,
    confirmations: 0,
    maxBlockRange: 2000n,
    logger,
    now: Date.now,
  });

  function tankFollowers(
    over: { onIncluded?: Parameters<typeof createTankFollowers>[0]['onIncluded'] } = {},
  ): TankFollowers {
    const fx = chain.fx;
    return createTankFollowers({
      chain: { chainId: fx.chainId, client: publicClient(), entryPoint: fx.entryPoint },
      listTanks: async () => tanks,
      lease: alwaysHeld,
      ...followerBase(),
      onIncluded:
        over.onIncluded ??
        (async ({ event, dappIds }) => {
          included.push(`${event.userOpHash}:${event.success}:${dappIds.join(',')}`);
        }),
      onReorg: async () => {
        reorgs++;
      },
    });
  }

  /** Patron's own paymaster's follower (the fixture's PatronPaymasterV07), as a chain's deployment runs it. */
  const paymasterFollower = () =>
    createSettlementFollower({
      chain: {
        chainId: chain.fx.chainId,
        client: publicClient(),
        entryPoint: chain.fx.entryPoint,
        paymaster: chain.fx.paymaster,
      },
      ...followerBase(),
    });

  /** The tank's payment op: a transfer of `amount` USDC to the node (more than its balance: the op reverts). */
  async function paymentOp(amount = PAYMENT): Promise<{ op: OpV07; hash: Hex; key: Hex }> {
    const fx = chain.fx;
    const deployed = ((await fx.client.getCode({ address: tank })) ?? '0x') !== '0x';
    const transfer = encodeFunctionData({ abi: devTokenAbi, functionName: 'transfer', args: [NODE, amount] });
    const base = await buildDeployingOp(fx, {
      sender: tank,
      initCode: deployed ? '0x' : createAccountInitCode(fx, 7n),
      callData: executeCallData(transfer, usdc.address),
      paymasterVerificationGasLimit: 0n,
      paymasterAndData: '0x',
    });
    const op = await signAccount(fx, base);
    const hash = userOpHashOf(fx, op).toLowerCase() as Hex;
    const key = opKey({ chainId: fx.chainId, entryPoint: fx.entryPoint, sender: tank, nonce: op.nonce });
    return { op, hash, key: key.toLowerCase() as Hex };
  }

  const charges = (keys: { wei: string; usd: string; ops: string }): LedgerCharge[] => [
    { key: keys.wei, unit: 'wei', amount: RESERVED_WEI, limit: CAP, windowEnd: undefined },
    { key: keys.usd, unit: 'usd', amount: RESERVED_USD, limit: CAP, windowEnd: undefined },
    { key: keys.ops, unit: 'ops', amount: 1n, limit: 100n, windowEnd: undefined },
  ];

  /** The quote's reservation as the MEE sign endpoint makes it. */
  async function reserveMee(p: { hash: Hex; key: Hex }, window?: ChainWindow): Promise<void> {
    const r = await store.spendLedger.reserve({
      id: reservationId(dappA, p.key),
      dappId: dappA,
      chainId: chain.fx.chainId,
      userOpHash: p.hash,
      opKey: p.key,
      charges: charges(keysA),
      expiresAt: Date.now() + 3_600_000,
      now: Date.now(),
      window: window ?? { unit: 'seconds', until: chain.window.validUntil },
      paymaster: tank.toLowerCase(),
      kind: 'mee',
    });
    assert.deepEqual(r, { ok: true });
  }

  async function counters(keys: { wei: string; usd: string; ops: string }) {
    const m = await store.spendLedger.counters([keys.wei, keys.usd, keys.ops]);
    const get = (k: string) => m.get(k) ?? { used: -1n, reserved: -1n };
    return { wei: get(keys.wei), usd: get(keys.usd), ops: get(keys.ops) };
  }

  const reserved = {
    wei: { used: 0n, reserved: RESERVED_WEI },
    usd: { used: 0n, reserved: RESERVED_USD },
    ops: { used: 0n, reserved: 1n },
  };
  const settled = {
    wei: { used: RESERVED_WEI, reserved: 0n },
    usd: { used: RESERVED_USD, reserved: 0n },
    ops: { used: 1n, reserved: 0n },
  };
  const released = {
    wei: { used: 0n, reserved: 0n },
    usd: { used: 0n, reserved: 0n },
    ops: { used: 0n, reserved: 0n },
  };

  test('included: settled at the reserved amounts (not its gas, no price), told for its dApp; a tank listed later is followed; read again, counted once; its cursor is its own', async () => {
    const f = tankFollowers();
    const listed = tanks;
    tanks = [];
    assert.equal((await f.runOnce()).followed, 0);
    tanks = listed;
    assert.equal((await f.runOnce()).followed, 1, 'the list is read again each round');
    const p = await paymentOp();
    await reserveMee(p);
    const { event } = await handleOne(chain.fx, p.op);
    assert.equal(event.args.success, true);
    assert.equal(event.args.paymaster, '0x0000000000000000000000000000000000000000', 'Patron paid none of its gas');
    assert.equal(await tokenBalance(chain.fx, usdc.address, NODE), PAYMENT, 'the payment moved');

    assert.equal((await f.runOnce()).settled, 1);
    assert.notEqual(event.args.actualGasCost, RESERVED_WEI);
    assert.deepEqual(await counters(keysA), settled);
    assert.deepEqual(included, [`${p.hash}:true:${dappA}`]);

    assert.deepEqual((await f.runOnce()).settled, 0);
    assert.deepEqual(await counters(keysA), settled);
    const key = { chainId: chain.fx.chainId, entryPoint: chain.fx.entryPoint, paymaster: tank };
    const cursor = await store.chainCursors.get({ ...key, follows: 'sender' });
    assert.equal(cursor?.blockNumber, event.blockNumber);
    assert.equal(await store.chainCursors.get(key), undefined, 'no paymaster cursor of the same address');
  });

  test('reverted (the transfer did not happen): released, not settled; told with success false', async () => {
    const f = tankFollowers();
    await f.runOnce();
    const p = await paymentOp(100n * PAYMENT);
    await reserveMee(p);
    const { event } = await handleOne(chain.fx, p.op);
    assert.equal(event.args.success, false);
    assert.equal(await tokenBalance(chain.fx, usdc.address, NODE), 0n);
    assert.equal((await f.runOnce()).unmatched, 0);
    assert.deepEqual(await counters(keysA), released);
    assert.deepEqual(included, [`${p.hash}:false:${dappA}`]);
  });

  test('never included: released once the chain is past its window; a retired tank is followed only while a reservation is open; a row with no paymaster is not the tank follower’s', async () => {
    tanks = [{ ...(tanks[0] as TankToFollow), status: 'retired' }];
    const f = tankFollowers();
    const head = await chain.fx.client.getBlock({ blockTag: 'latest' });
    const until = Number(head.timestamp) + 30;
    const p = await paymentOp();
    await reserveMee(p, { unit: 'seconds', until });
    // A reservation made before migration 0011 (no paymaster) on the same chain, its window as closed.
    const legacy = await store.spendLedger.reserve({
      id: randomUUID(),
      dappId: dappB,
      chainId: chain.fx.chainId,
      userOpHash: `0x${'ab'.repeat(32)}`,
      charges: charges(keysB),
      expiresAt: Date.now(),
      now: Date.now(),
      window: { unit: 'seconds', until },
    });
    assert.deepEqual(legacy, { ok: true });
    assert.equal((await f.runOnce()).followed, 1, 'retired, with a reservation open');
    await f.runOnce();
    assert.deepEqual(await counters(keysA), reserved);
    await chain.fx.client.setNextBlockTimestamp({ timestamp: BigInt(until + 1) });
    await chain.fx.client.mine({ blocks: 1 });
    await f.runOnce();
    assert.deepEqual(await counters(keysA), released);
    assert.deepEqual(await counters(keysB), reserved, 'the row with no paymaster is left to the paymasters’ followers');
    assert.equal((await f.runOnce()).followed, 0, 'retired, nothing open: no longer followed');
  });

  test('a reorg reopens what the removed blocks closed: a settled payment and a released (reverted) one', async () => {
    const f = tankFollowers();
    await f.runOnce();
    const p = await paymentOp();
    await reserveMee(p);
    const branch = await chain.fx.client.snapshot();
    const start = await chain.fx.client.getBlock({ blockTag: 'latest' });
    await handleOne(chain.fx, p.op);
    assert.equal((await f.runOnce()).settled, 1);
    assert.deepEqual(await counters(keysA), settled);

    // The canonical branch: the op never included, and longer.
    await chain.fx.client.revert({ id: branch });
    await chain.fx.client.setNextBlockTimestamp({ timestamp: start.timestamp + 5n });
    await chain.fx.client.mine({ blocks: 3 });
    const report = await f.runOnce();
    assert.equal(report.reorgs, 1);
    assert.equal(reorgs, 1, 'onReorg told');
    assert.deepEqual(await counters(keysA), reserved, 'open again');

    // Now the op reverts on this branch (its transfer too large): released; a reorg then reopens it too.
    const failing = await paymentOp(100n * PAYMENT);
    assert.equal(failing.key, p.key, 'the same nonce');
    const again = await store.chainCursors.get({
      chainId: chain.fx.chainId,
      entryPoint: chain.fx.entryPoint,
      paymaster: tank,
      follows: 'sender',
    });
    assert.ok(again);
    const second = await chain.fx.client.snapshot();
    const moment = await chain.fx.client.getBlock({ blockTag: 'latest' });
    const { event } = await handleOne(chain.fx, failing.op);
    assert.equal(event.args.success, false);
    await f.runOnce();
    assert.deepEqual(await counters(keysA), released);
    await chain.fx.client.revert({ id: second });
    await chain.fx.client.setNextBlockTimestamp({ timestamp: moment.timestamp + 5n });
    await chain.fx.client.mine({ blocks: 3 });
    assert.equal((await f.runOnce()).reorgs, 1);
    assert.deepEqual(await counters(keysA), reserved, 'the reverted payment’s release undone');
  });

  /** Another dApp's sponsored reservation of the tank's very op key (Patron's paymaster signed an op of that sender). */
  async function reserveOtherDapp(p: { hash: Hex; key: Hex }): Promise<void> {
    const r = await store.spendLedger.reserve({
      id: reservationId(dappB, p.key),
      dappId: dappB,
      chainId: chain.fx.chainId,
      userOpHash: p.hash,
      opKey: p.key,
      charges: charges(keysB),
      expiresAt: Date.now() + 3_600_000,
      now: Date.now(),
      window: { unit: 'seconds', until: chain.window.validUntil },
      paymaster: chain.fx.paymaster.toLowerCase(),
      item: { sender: tank, user: undefined, policyIds: [], worstCaseWei: RESERVED_WEI },
    });
    assert.deepEqual(r, { ok: true });
  }

  /** Both followers started, the tank's row and another dApp's of the same op key, the op included. */
  async function bothDappsIncluded() {
    const f = tankFollowers();
    const pm = paymasterFollower();
    await f.runOnce();
    await pm.runOnce();
    const p = await paymentOp();
    await reserveMee(p);
    await reserveOtherDapp(p);
    await handleOne(chain.fx, p.op);
    return { f, pm, p };
  }

  test('a second dApp’s row of the same op key is not the tank follower’s: untouched by it, closed by its own paymaster’s follower', async () => {
    const { f, pm, p } = await bothDappsIncluded();
    assert.equal((await f.runOnce()).settled, 1);
    assert.deepEqual(await counters(keysA), settled);
    assert.deepEqual(await counters(keysB), reserved, 'untouched by the tank’s follower');
    assert.deepEqual(included, [`${p.hash}:true:${dappA}`], 'told for the tank’s dApp only');
    // Patron's paymaster did not pay for the op: its follower closes its own row as superseded, nothing charged.
    await pm.runOnce();
    assert.deepEqual(await counters(keysB), released);
    assert.deepEqual(await counters(keysA), settled);
  });

  test('Patron’s paymaster follower, reading the tank’s op first, leaves the tank’s row to the tank’s follower', async () => {
    const { f, pm } = await bothDappsIncluded();
    await pm.runOnce();
    assert.deepEqual(await counters(keysB), released, 'its own row superseded');
    assert.deepEqual(await counters(keysA), reserved, 'the tank’s row still open');
    assert.equal((await f.runOnce()).settled, 1);
    assert.deepEqual(await counters(keysA), settled);
  });

  /** A `sponsorship.signed` event of the op key for the dApp, as the MEE sign endpoint would record it. */
  async function signedEvent(dappId: string, p: { hash: Hex; key: Hex }, validUntil: number, nonce: bigint) {
    const data = {
      chainId: chain.fx.chainId,
      entryPoint: chain.fx.entryPoint,
      paymaster: tank,
      sender: tank,
      nonce: nonce.toString(),
      userOpHash: p.hash,
      validUntil,
      reserved: [{ unit: 'usd', amount: RESERVED_USD.toString() }],
    };
    await store.lifecycleEvents.append([
      {
        id: `evt_${randomUUID()}`,
        dappId,
        type: 'sponsorship.signed',
        opKey: p.key,
        payload: JSON.stringify({ type: 'sponsorship.signed', data }),
        createdAt: Date.now(),
        ref: reservationId(dappId, p.key),
      },
    ]);
  }

  test('lifecycle events: sponsorship.included for the tank’s dApp only (not another that signed the key); sponsorship.expired on a window release', async () => {
    const recorded: PendingEvent[] = [];
    const emitter = createIncludedEmitter({
      recorder: { record: (e) => recorded.push(e), flush: async () => {}, dropped: () => 0, close: async () => {} },
      events: store.lifecycleEvents,
      nativeUsdMicros: () => PRICE_MICROS,
      now: Date.now,
    });
    const f = tankFollowers({ onIncluded: emitter });
    await f.runOnce();
    const p = await paymentOp();
    await reserveMee(p);
    await signedEvent(dappA, p, chain.window.validUntil, p.op.nonce);
    await signedEvent(dappB, p, chain.window.validUntil, p.op.nonce);
    await handleOne(chain.fx, p.op);
    await f.runOnce();
    assert.deepEqual(
      recorded.map((e) => [e.dappId, e.build().type]),
      [[dappA, 'sponsorship.included']],
    );

    const head = await chain.fx.client.getBlock({ blockTag: 'latest' });
    const until = Number(head.timestamp) + 30;
    const q = await paymentOp();
    await reserveMee(q, { unit: 'seconds', until });
    await signedEvent(dappA, q, until, q.op.nonce);
    await chain.fx.client.setNextBlockTimestamp({ timestamp: BigInt(until + 1) });
    await chain.fx.client.mine({ blocks: 1 });
    await f.runOnce();
    const expired = (await store.lifecycleEvents.listByDapp({ dappId: dappA, limit: 10 })).filter(
      (e) => e.type === 'sponsorship.expired',
    );
    assert.deepEqual(
      expired.map((e) => e.opKey),
      [q.key],
    );
    assert.equal(
      (await store.lifecycleEvents.listByDapp({ dappId: dappB, limit: 10 })).length,
      1,
      'B: its signed event only',
    );
  });

  test('wired by buildSettlement from store.meeTanks: a tanks’ loop per served chain on EntryPoint v0.7, run by runOnce, told to the lifecycle events only', async () => {
    const fx = chain.fx;
    assert.equal(fx.entryPoint, ENTRY_POINT_ADDRESSES['0.7'], 'the dev chain’s EntryPoint v0.7 is the canonical one');
    const observed: string[] = [];
    const settlement = await buildSettlement({
      config: { settlement: { ...testConfig().settlement, pollMs: 600_000 } },
      chains: createChainRegistry([
        eip1193ChainRuntime({
          chainId: fx.chainId,
          request: fx.chain.request,
          entryPoint: fx.entryPoint,
          paymaster: fx.paymaster,
        }),
      ]),
      store: { ...store, meeTanks: { list: async () => tanks } },
      nativeUsdMicros: () => PRICE_MICROS,
      observers: [{ onIncluded: ({ event }) => void observed.push(`observer:${event.userOpHash}`) }],
      events: {
        onIncluded: async ({ event, dappIds }) => void observed.push(`events:${event.userOpHash}:${dappIds.join(',')}`),
        onReorg: async () => {},
        onTokenCharged: async () => {},
        recorder: { flush: async () => {} },
      },
      onStatus: () => {},
      logger,
      now: Date.now,
    });
    try {
      const p = await paymentOp();
      await reserveMee(p);
      await handleOne(fx, p.op);
      const reports = await settlement.runOnce();
      assert.equal(reports.length, 1, 'the paymaster’s follower reports; the tanks’ loop runs beside it');
      assert.deepEqual(await counters(keysA), settled);
      assert.deepEqual(observed, [`events:${p.hash}:${dappA}`], 'not the metrics, the guard or the request log');
    } finally {
      await settlement.close();
    }
  });
});
