import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  BaseError,
  createPublicClient,
  defineChain,
  encodeFunctionData,
  type Hex,
  hexToBytes,
  http,
  parseEther,
  parseEventLogs,
  RpcRequestError,
  zeroHash,
} from 'viem';
import {
  createBundlerClient,
  createPaymasterClient,
  entryPoint06Abi,
  getUserOperationHash,
  toSmartAccount,
  type UserOperation,
} from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { registerDevChainRoutes } from '../src/api/devChainRpc.js';
import { createApp } from '../src/app.js';
import { createChainRegistry } from '../src/chain/chainRegistry.js';
import { createDeps, type Deps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import { openStore, type Store } from '../src/store/store.js';
import { type AltoBundler, startAlto } from './helpers/altoBundler.js';
import {
  COUNTER_ADDRESS,
  counterValue,
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  simpleAccountAbi,
  simpleAccountFactoryAbi,
  startPatronFixture,
  testKey,
} from './helpers/patronPaymasterV06.js';
import {
  BACKEND,
  createTenant,
  dropTestSchema,
  fakeResolver,
  openTestStore,
  TEST_MASTER_KEY,
  type Tenant,
  testConfig,
  withoutHoldShares,
} from './helpers/testContext.js';

/**
 * Sponsorship policies end to end, the way a dApp's users meet them: viem's bundler client
 * (`createBundlerClient`, viem/account-abstraction) with the ERC-7677 paymaster client
 * (`createPaymasterClient`: pm_getPaymasterStubData, then pm_getPaymasterData over the gas alto estimated) pointed
 * at a Patron listening on 127.0.0.1, a real bundler (alto) and the in-process chain (EntryPoint v0.6, Patron's
 * paymaster, SimpleAccountFactory v0.6). Proven here: caps reached and reset, a settled op's reservation replaced
 * by its real cost, an expired signature released, and a restart between signing and inclusion.
 *
 * The smart account: viem 2.x ships no SimpleAccount (`toSimpleSmartAccount` lives in `permissionless`, which is
 * not a dependency), so the SimpleAccount v0.6 of the dev chain's factory is described to viem through its public
 * `toSmartAccount` (address from the factory, initCode, `execute`/`executeBatch`, key-0 nonce, and the owner's
 * EIP-191 signature of the EntryPoint's userOpHash, which is what SimpleAccount 0.6 verifies). Everything else is
 * viem's own flow: fees, stub, estimation by alto, final paymaster data, signing, eth_sendUserOperation, receipt.
 *
 * Time: each Patron here has a clock of the test's (`Date.now()` plus an offset) that the test moves; the chain
 * keeps real time. It has to: alto simulates each bundle with the EntryPoint's code overridden so that
 * `block.timestamp` is alto's own wall clock (its filterOps state override), so a chain moved ahead of real time
 * gets ops that pass on chain refused by alto as AA32. What keeps every signed window valid instead is room in
 * the window around real time: `validAfter` one hour back (PATRON_VALID_AFTER_SKEW_SECONDS at its maximum, the
 * knob for a bundler whose clock lags) and up to two hours of `expiryDuration` (PATRON_EXPIRY_MAX_SECONDS 7200)
 * where the test's clock runs behind. Each test has its own Patron (its clock only moves forward), dApp and
 * smart account: clocks, caches and counters never leak between tests.
 *
 * The chain is served to alto and the SDK by a JSON-RPC node of its own (Patron's dev-chain route on a bare
 * Fastify), not by a Patron, so a Patron can be stopped while the op goes on chain (the restart test).
 */
const HOUR_MS = 3_600_000;
const defaults = testConfig();
const VALID_AFTER_SKEW_SECONDS = 3600;
const MAX_EXPIRY_SECONDS = 7200;
const config = testConfig({
  paymaster: {
    ...defaults.paymaster,
    sponsorship: {
      ...defaults.paymaster.sponsorship,
      validAfterSkewSeconds: VALID_AFTER_SKEW_SECONDS,
      maxExpirySeconds: MAX_EXPIRY_SECONDS,
    },
  },
});

let fx: PatronFixture;
let node: FastifyInstance;
let nodeUrl: string;
let alto: AltoBundler;

/** A Patron's clock: real time plus an offset the test moves forward. */
class TestClock {
  private offsetMs: number;
  constructor(startMs = Date.now()) {
    this.offsetMs = startMs - Date.now();
  }
  readonly now = (): number => Date.now() + this.offsetMs;
  /** Moves the clock forward to `ms` (never back: caches keyed by time would then hold stale entries). */
  moveTo(ms: number): void {
    assert.ok(ms >= this.now(), 'the clock only moves forward');
    this.offsetMs = ms - Date.now();
  }
}

interface Patron {
  readonly deps: Deps;
  paymasterUrl(tenant: Tenant): string;
  close(): Promise<void>;
}

/** A Patron on `store`, signing for the fixture's chain on `clock`, listening on 127.0.0.1. */
async function startPatron(store: Store, clock: TestClock): Promise<Patron> {
  const deps = await createDeps(config, createLogger({ level: 'silent' }), {
    store,
    masterKey: TEST_MASTER_KEY,
    signerKey: hexToBytes(KEYS.signer),
    resolver: fakeResolver,
    chains: [fixtureChainRuntime(fx)],
    now: clock.now,
  });
  const app = createApp(deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return {
    deps,
    paymasterUrl: (tenant) => `http://127.0.0.1:${port}/api/v1/${fx.chain.chainId}/${tenant.apiKey}`,
    async close() {
      await app.close();
      await deps.close();
    },
  };
}

/** A Patron on a fresh test database (in-memory SQLite, or a PostgreSQL schema dropped on close). */
async function startFreshPatron(clock: TestClock): Promise<Patron> {
  const { store, schema } = await openTestStore();
  const patron = await startPatron(store, clock);
  return {
    ...patron,
    async close() {
      await patron.close();
      await dropTestSchema(schema);
    },
  };
}

before(async () => {
  fx = await startPatronFixture();
  node = Fastify();
  registerDevChainRoutes(node, { chains: createChainRegistry([fixtureChainRuntime(fx)]) });
  await node.listen({ port: 0, host: '127.0.0.1' });
  nodeUrl = `http://127.0.0.1:${(node.server.address() as AddressInfo).port}/chain/${fx.chain.chainId}`;
  await fx.client.setBalance({ address: privateKeyToAccount(KEYS.alto).address, value: parseEther('100') });
  alto = await startAlto({ rpcUrl: nodeUrl, entryPoints: [fx.entryPoint], executorKey: KEYS.alto });
});
after(async () => {
  await alto?.close();
  await node?.close();
  await fx?.close();
});

const chain = () =>
  defineChain({
    id: fx.chain.chainId,
    name: 'Patron dev chain',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [nodeUrl] } },
  });

const publicClient = () => createPublicClient({ chain: chain(), transport: http(nodeUrl), pollingInterval: 50 });

/** SimpleAccount v0.6 (the dev chain's factory, salt 0) of an owner of its own, described to viem. */
async function simpleAccount(label: string) {
  const client = publicClient();
  const owner = privateKeyToAccount(testKey(`e2e-policies-${label}`));
  const address = await client.readContract({
    address: fx.simpleAccountFactory,
    abi: simpleAccountFactoryAbi,
    functionName: 'getAddress',
    args: [owner.address, 0n],
  });
  const factoryData = encodeFunctionData({
    abi: simpleAccountFactoryAbi,
    functionName: 'createAccount',
    args: [owner.address, 0n],
  });
  // For estimation: a real signature by the owner, of another hash. It costs what the real one costs to recover
  // and fails validation softly (SIG_VALIDATION_FAILED), as a stub signature must.
  const stubSignature = await owner.sign({ hash: zeroHash });
  return toSmartAccount({
    client,
    entryPoint: { abi: entryPoint06Abi, address: fx.entryPoint, version: '0.6' },
    getAddress: async () => address,
    getFactoryArgs: async () => ({ factory: fx.simpleAccountFactory, factoryData }),
    async encodeCalls(calls) {
      const [only, ...more] = calls;
      if (only !== undefined && more.length === 0) {
        return encodeFunctionData({
          abi: simpleAccountAbi,
          functionName: 'execute',
          args: [only.to, only.value ?? 0n, only.data ?? '0x'],
        });
      }
      return encodeFunctionData({
        abi: simpleAccountAbi,
        functionName: 'executeBatch',
        args: [calls.map((c) => c.to), calls.map((c) => c.data ?? '0x')],
      });
    },
    getNonce: () =>
      client.readContract({
        address: fx.entryPoint,
        abi: entryPoint06Abi,
        functionName: 'getNonce',
        args: [address, 0n],
      }),
    getStubSignature: async () => stubSignature,
    async signUserOperation({ chainId = fx.chain.chainId, ...op }) {
      const hash = getUserOperationHash({
        chainId,
        entryPointAddress: fx.entryPoint,
        entryPointVersion: '0.6',
        userOperation: { ...op, sender: address } as UserOperation<'0.6'>,
      });
      return owner.signMessage({ message: { raw: hash } });
    },
    // SimpleAccount 0.6 has no isValidSignature (ERC-1271): nothing it signed off chain would verify. Unused here.
    signMessage: () => Promise.reject(new Error('SimpleAccount v0.6 does not implement ERC-1271')),
    signTypedData: () => Promise.reject(new Error('SimpleAccount v0.6 does not implement ERC-1271')),
  });
}

type SimpleAccountV06 = Awaited<ReturnType<typeof simpleAccount>>;

/** viem's bundler client on alto, sponsored through `patron`'s paymaster URL for `tenant` (ERC-7677). */
function bundlerFor(patron: Patron, tenant: Tenant, paymasterContext?: Record<string, unknown>) {
  return createBundlerClient({
    client: publicClient(),
    chain: chain(),
    transport: http(alto.url),
    paymaster: createPaymasterClient({ transport: http(patron.paymasterUrl(tenant)) }),
    ...(paymasterContext === undefined ? {} : { paymasterContext }),
    pollingInterval: 50,
  });
}
type Bundler = ReturnType<typeof bundlerFor>;

const counterCall = { to: COUNTER_ADDRESS, data: '0x' as Hex };

/** sendUserOperation + waitForUserOperationReceipt; the op executed, paid by Patron's paymaster. */
async function sendAndWait(bundler: Bundler, account: SimpleAccountV06) {
  const hash = await bundler.sendUserOperation({ account, calls: [counterCall] });
  const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 20_000 });
  assert.equal(receipt.success, true, alto.output());
  assert.equal(receipt.paymaster?.toLowerCase(), fx.paymaster.toLowerCase());
  const [event, ...more] = parseEventLogs({
    abi: entryPoint06Abi,
    logs: receipt.receipt.logs,
    eventName: 'UserOperationEvent',
  });
  assert.ok(event !== undefined && more.length === 0, 'one UserOperationEvent');
  assert.equal(event.args.userOpHash, hash);
  assert.equal(event.args.actualGasCost, receipt.actualGasCost);
  return { hash, actualGasCost: event.args.actualGasCost };
}

/** Patron's JSON-RPC error as the SDK threw it (viem keeps code and data on its RpcRequestError). */
function patronError(err: unknown): { code: number; data: unknown } {
  assert.ok(err instanceof BaseError, `expected a viem error, got ${String(err)}`);
  const found = err.walk((e) => e instanceof RpcRequestError);
  assert.ok(found instanceof RpcRequestError, `no RpcRequestError in ${err.message}`);
  return { code: found.code, data: found.data };
}

/**
 * What Patron reserves for a v0.6 op with a paymaster, its worst case (the EntryPoint's prefund):
 * (callGasLimit + 3 × verificationGasLimit + preVerificationGas) × maxFeePerGas.
 */
function worstCase(op: {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
}): bigint {
  return (op.callGasLimit + 3n * op.verificationGasLimit + op.preVerificationGas) * op.maxFeePerGas;
}

/** validUntil of Patron's sponsored paymasterAndData: paymaster (20 bytes), mode (1), validUntil (6), validAfter (6), signature. */
function validUntilOf(paymasterAndData: Hex): number {
  return Number.parseInt(paymasterAndData.slice(2 + 21 * 2, 2 + 27 * 2), 16);
}

async function usageOf(patron: Patron, tenant: Tenant, policyId: string) {
  const [usage, ...more] = await patron.deps.policies.usage({ dappId: tenant.dappId, policyId });
  assert.ok(usage !== undefined && more.length === 0, 'one dApp-wide cap');
  return usage;
}

async function sponsoredRows(patron: Patron, tenant: Tenant) {
  await patron.deps.requestLog.flush();
  return patron.deps.store.requestLog.query({ accountId: tenant.accountId, outcome: 'sponsored', limit: 10 });
}

describe('policies end to end: viem bundler client + ERC-7677 paymaster client, alto, the in-process chain', () => {
  test('an hourly dApp-wide cap of 2 ops: two ops executed, the third refused by the cap (-32012), sponsored again in the next hour', async () => {
    // Patron's hour starts 5 s before its clock, which runs 1-61 min behind real time; the next hour is then at
    // most an hour ahead of it. Signed for two hours, every window holds real time (the chain's and alto's).
    const hourStart = Math.floor((Date.now() - 60_000) / HOUR_MS) * HOUR_MS;
    const clock = new TestClock(hourStart + 5_000);
    const patron = await startFreshPatron(clock);
    try {
      const tenant = await createTenant(patron.deps);
      // The ops follow each other faster than settlement reads them: this is a test of the cap, not of holds.
      await withoutHoldShares(patron.deps, tenant.dappId);
      const policy = await patron.deps.policies.create({
        dappId: tenant.dappId,
        name: 'two-an-hour',
        rules: { caps: [{ scope: 'dapp', unit: 'ops', limit: '2', resets: 'hourly' }] },
      });
      const account = await simpleAccount('hourly');
      const bundler = bundlerFor(patron, tenant, { expiryDuration: MAX_EXPIRY_SECONDS });
      const counterBefore = await counterValue(fx);

      const first = await sendAndWait(bundler, account);
      const second = await sendAndWait(bundler, account);
      assert.equal(await counterValue(fx), counterBefore + 2n);
      assert.deepEqual(await usageOf(patron, tenant, policy.id), {
        scope: 'dapp',
        unit: 'ops',
        resets: 'hourly',
        limit: '2',
        used: '0',
        reserved: '2',
        windowStart: hourStart,
        windowEnd: hourStart + HOUR_MS,
      });
      const [round] = await patron.deps.settlement.runOnce();
      assert.equal(round?.settled, 2);
      assert.equal((await usageOf(patron, tenant, policy.id)).used, '2');

      await assert.rejects(bundler.sendUserOperation({ account, calls: [counterCall] }), (err: unknown) => {
        const { code, data } = patronError(err);
        assert.equal(code, -32012);
        assert.deepEqual(data, {
          policyId: policy.id,
          policyName: 'two-an-hour',
          rule: 'cap',
          scope: 'dapp',
          unit: 'ops',
          value: '1',
          limit: '2',
          used: '2',
          reserved: '0',
          resetsAt: (hourStart + HOUR_MS) / 1000,
        });
        return true;
      });
      assert.equal(await counterValue(fx), counterBefore + 2n, 'nothing more executed');
      // The stub already reads the caps: the wallet is refused before it pays for an estimation, and it is logged so.
      await patron.deps.requestLog.flush();
      const [denied, ...alsoDenied] = await patron.deps.store.requestLog.query({
        accountId: tenant.accountId,
        outcome: 'denied',
        limit: 10,
      });
      assert.equal(alsoDenied.length, 0);
      assert.equal(denied?.method, 'pm_getPaymasterStubData');
      assert.equal(denied?.errorCode, -32012);
      assert.deepEqual(denied?.policy, { decision: 'denied', rule: 'cap', policyId: policy.id });

      // The next hour: a new window with nothing in it; the same account is sponsored again.
      clock.moveTo(hourStart + HOUR_MS + 5_000);
      const third = await sendAndWait(bundler, account);
      assert.equal(await counterValue(fx), counterBefore + 3n);
      const [after] = await patron.deps.settlement.runOnce();
      assert.equal(after?.settled, 1);
      const next = await usageOf(patron, tenant, policy.id);
      assert.deepEqual(
        { windowStart: next.windowStart, used: next.used, reserved: next.reserved },
        { windowStart: hourStart + HOUR_MS, used: '1', reserved: '0' },
      );
      const signed = (await sponsoredRows(patron, tenant)).map((r) => r.userOpHash);
      assert.deepEqual(signed.sort(), [first.hash, second.hash, third.hash].map((h) => h.toLowerCase()).sort());
    } finally {
      await patron.close();
    }
  });

  test('a wei cap: the op reserves its worst case at signing; settlement replaces it by the UserOperationEvent’s actualGasCost', async () => {
    const patron = await startFreshPatron(new TestClock());
    try {
      const tenant = await createTenant(patron.deps);
      const policy = await patron.deps.policies.create({
        dappId: tenant.dappId,
        name: 'wei-budget',
        rules: { caps: [{ scope: 'dapp', unit: 'wei', limit: parseEther('1').toString() }] },
      });
      const account = await simpleAccount('wei');
      const bundler = bundlerFor(patron, tenant, { sponsorshipPolicyId: policy.id });
      const { hash, actualGasCost } = await sendAndWait(bundler, account);
      const { userOperation } = await bundler.getUserOperation({ hash });
      const reserved = worstCase(userOperation);
      assert.ok(actualGasCost < reserved, 'the worst case bounds the real cost');

      const signedOnly = await usageOf(patron, tenant, policy.id);
      assert.deepEqual(
        { used: signedOnly.used, reserved: signedOnly.reserved },
        { used: '0', reserved: reserved.toString() },
      );

      const [round] = await patron.deps.settlement.runOnce();
      assert.equal(round?.settled, 1);
      const settled = await usageOf(patron, tenant, policy.id);
      assert.deepEqual(
        { used: settled.used, reserved: settled.reserved },
        { used: actualGasCost.toString(), reserved: '0' },
      );

      const [row, ...more] = await sponsoredRows(patron, tenant);
      assert.equal(more.length, 0, 'one signed op');
      assert.equal(row?.method, 'pm_getPaymasterData');
      assert.equal(row?.userOpHash, hash.toLowerCase());
      assert.equal(row?.actualCostWei, actualGasCost.toString());
      assert.deepEqual(row?.policy?.reserved, [{ unit: 'wei', amount: reserved.toString() }]);

      // Another round reads nothing new and counts nothing twice.
      const [again] = await patron.deps.settlement.runOnce();
      assert.equal(again?.settled, 0);
      assert.equal((await usageOf(patron, tenant, policy.id)).used, actualGasCost.toString());
    } finally {
      await patron.close();
    }
  });

  test('a signature is released by the chain: a signed op never sent holds the cap while the chain could include it, then a new op fits', async () => {
    const clock = new TestClock();
    const patron = await startFreshPatron(clock);
    try {
      const tenant = await createTenant(patron.deps);
      const policy = await patron.deps.policies.create({
        dappId: tenant.dappId,
        name: 'one-op',
        rules: { caps: [{ scope: 'dapp', unit: 'ops', limit: '1' }] },
      });
      const account = await simpleAccount('expiry');
      const bundler = bundlerFor(patron, tenant, { expiryDuration: 60 });

      // The wallet prepares the op (stub, alto's estimate, the signed paymaster data); the user walks away.
      const from = Math.floor(clock.now() / 1000);
      const abandoned = await bundler.prepareUserOperation({ account, calls: [counterCall] });
      const to = Math.floor(clock.now() / 1000);
      const validUntil = validUntilOf(abandoned.paymasterAndData);
      assert.ok(validUntil >= from + 60 && validUntil <= to + 60, `validUntil ${validUntil} is the clock + 60 s`);
      assert.equal((await usageOf(patron, tenant, policy.id)).reserved, '1');
      await assert.rejects(bundler.prepareUserOperation({ account, calls: [counterCall] }), (err: unknown) => {
        const { code, data } = patronError(err);
        assert.equal(code, -32012);
        assert.equal((data as { rule?: unknown }).rule, 'cap');
        return true;
      });

      // The server's clock 10 minutes past validUntil, the chain idle (no block since): the op could still be
      // included in the next block, so it stays held and the cap still refuses.
      clock.moveTo(validUntil * 1000 + 600_000);
      await patron.deps.settlement.runOnce();
      assert.equal((await usageOf(patron, tenant, policy.id)).reserved, '1');
      await assert.rejects(bundler.prepareUserOperation({ account, calls: [counterCall] }), (err: unknown) => {
        assert.equal((patronError(err).data as { rule?: unknown }).rule, 'cap');
        return true;
      });
      // A block at validUntil still could include it; the one after cannot: released once the cursor is there.
      if ((await fx.client.getBlock()).timestamp < BigInt(validUntil)) {
        await fx.client.setNextBlockTimestamp({ timestamp: BigInt(validUntil) });
        await fx.client.mine({ blocks: 1 });
        await patron.deps.settlement.runOnce();
        assert.equal((await usageOf(patron, tenant, policy.id)).reserved, '1');
      }
      await fx.client.setNextBlockTimestamp({ timestamp: BigInt(validUntil + 1) });
      await fx.client.mine({ blocks: 1 });
      await patron.deps.settlement.runOnce();
      const released = await usageOf(patron, tenant, policy.id);
      assert.deepEqual({ used: released.used, reserved: released.reserved }, { used: '0', reserved: '0' });

      // The room is back: a new op is signed, executed and, settled, counted once.
      const counterBefore = await counterValue(fx);
      await sendAndWait(bundler, account);
      assert.equal(await counterValue(fx), counterBefore + 1n);
      const [round] = await patron.deps.settlement.runOnce();
      assert.equal(round?.settled, 1);
      const settled = await usageOf(patron, tenant, policy.id);
      assert.deepEqual({ used: settled.used, reserved: settled.reserved }, { used: '1', reserved: '0' });
    } finally {
      await patron.close();
    }
  });

  test('a restart in the middle: signed by one Patron, included while it is down, settled once by the next on the same database', async () => {
    const db = await sharedDatabase();
    const clock = new TestClock();
    try {
      const first = await startPatron(await db.open(), clock);
      const tenant = await createTenant(first.deps);
      const policy = await first.deps.policies.create({
        dappId: tenant.dappId,
        name: 'restart',
        rules: { caps: [{ scope: 'dapp', unit: 'wei', limit: parseEther('1').toString() }] },
      });
      const account = await simpleAccount('restart');
      const op = await bundlerFor(first, tenant).prepareUserOperation({ account, calls: [counterCall] });
      const reserved = worstCase(op);
      assert.equal((await usageOf(first, tenant, policy.id)).reserved, reserved.toString());
      await first.close();

      // Patron is down: the wallet sends what it prepared (no paymaster call left to make); alto includes it.
      const bundler = createBundlerClient({
        client: publicClient(),
        chain: chain(),
        transport: http(alto.url),
        pollingInterval: 50,
      });
      const hash = await bundler.sendUserOperation({ ...op, account, signature: await account.signUserOperation(op) });
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 20_000 });
      assert.equal(receipt.success, true, alto.output());
      const [event] = parseEventLogs({
        abi: entryPoint06Abi,
        logs: receipt.receipt.logs,
        eventName: 'UserOperationEvent',
      });
      assert.ok(event);
      const cost = event.args.actualGasCost;

      // The next Patron on the same data. The cursor the first one left is before the op's block: a follower that
      // started afresh (from the head) would never see the op ...
      const store = await db.open();
      const key = { chainId: fx.chain.chainId, entryPoint: fx.entryPoint, paymaster: fx.paymaster };
      const left = await store.chainCursors.get(key);
      assert.ok(left !== undefined && left.blockNumber < receipt.receipt.blockNumber, 'the cursor is before the op');
      // ... this one resumes there in its first round, at start, and settles the op by its real cost.
      const second = await startPatron(store, clock);
      try {
        const settled = await usageOf(second, tenant, policy.id);
        assert.deepEqual({ used: settled.used, reserved: settled.reserved }, { used: cost.toString(), reserved: '0' });
        const [row, ...more] = await sponsoredRows(second, tenant);
        assert.equal(more.length, 0);
        assert.equal(row?.userOpHash, hash.toLowerCase());
        assert.equal(row?.actualCostWei, cost.toString());
        const moved = await store.chainCursors.get(key);
        assert.ok(moved !== undefined && moved.blockNumber >= receipt.receipt.blockNumber, 'the cursor passed the op');
        // Exactly once: another round has nothing to settle, and the count stays.
        const [round] = await second.deps.settlement.runOnce();
        assert.equal(round?.settled, 0);
        assert.equal((await usageOf(second, tenant, policy.id)).used, cost.toString());
      } finally {
        await second.close();
      }
    } finally {
      await db.drop();
    }
  });
});

/** One database two Patron processes open in turn: a SQLite file in a temp dir, or one PostgreSQL schema. */
async function sharedDatabase(): Promise<{ open(): Promise<Store>; drop(): Promise<void> }> {
  if (BACKEND === 'postgres') {
    const first = await openTestStore();
    let unused: Store | undefined = first.store;
    return {
      async open() {
        const store = unused ?? (await openTestStore(first.schema === undefined ? {} : { schema: first.schema })).store;
        unused = undefined;
        return store;
      },
      drop: () => dropTestSchema(first.schema),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'patron-e2e-policies-'));
  const file = join(dir, 'patron.sqlite');
  return {
    open: () => openStore({ storage: { kind: 'sqlite', file } }),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}
