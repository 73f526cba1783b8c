import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, hexToBytes, parseEther } from 'viem';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { SolvencySettings } from '../src/config/solvencySettings.js';
import { PaymasterInsolventError, UnavailableError } from '../src/errors/PatronError.js';
import { viemKeccak } from '../src/paymaster/entryPoints/abiWords.js';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { userOpHashV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { issuedSignature } from '../src/paymaster/requestFacts.js';
import { toRpcError } from '../src/rpc/rpcErrors.js';
import { checkAlertDestination } from '../src/solvency/alertDestination.js';
import { createAlertSender } from '../src/solvency/alertWebhook.js';
import { createLiabilityTracker } from '../src/solvency/liabilityTracker.js';
import { paymasterKey } from '../src/solvency/paymasterKey.js';
import { startSolvencyGuard } from '../src/solvency/solvencyGuard.js';
import type { SolvencyClaims } from '../src/store/ledger/solvencyClaims.js';
import { generateSigningSecret } from '../src/webhooks/standardWebhooks.js';
import {
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  paymasterDeposit,
  startPatronFixture,
} from './helpers/patronPaymasterV06.js';
import { createTestContext, fakeResolver, type TestContext } from './helpers/testContext.js';
import { answer, type Receiver, signedWith, startReceiver } from './helpers/webhookReceiver.js';

/** The solvency guard (src/solvency/README.md) on the in-process chain and with given amounts. */
const silent = { info() {}, warn() {}, error() {} };

async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('solvency guard on the in-process chain', () => {
  const secret = generateSigningSecret();
  let fx: PatronFixture;
  let ctx: TestContext;
  let receiver: Receiver;
  before(async () => {
    fx = await startPatronFixture();
    receiver = await startReceiver(answer({ ok: true }));
    const solvency: SolvencySettings = {
      enabled: true,
      intervalMs: 3_600_000,
      trackedSignatures: 100_000,
      marginBps: 15_000n,
      floorWei: parseEther('5'),
      floorWeiByChain: new Map(),
      // Topped up to 7 ETH below: back above the low-water mark, and no hold to wait out.
      lowWaterWei: parseEther('6'),
      lowWaterWeiByChain: new Map(),
      alertHoldMs: 0,
      alert: { url: receiver.url('/alerts'), secret },
    };
    ctx = await createTestContext({
      chains: [fixtureChainRuntime(fx)],
      signerKey: hexToBytes(KEYS.signer),
      config: { solvency },
    });
  });
  after(async () => {
    await ctx.close();
    await receiver.close();
    await fx.close();
  });

  const paymaster = () => ({ address: fx.paymaster, abi: patronPaymasterAbi }) as const;
  const alerts = () => receiver.requests.filter((r) => r.url === '/alerts');

  test('below the floor: signing stops with PaymasterInsolventError, one signed alert; topped up: one recovery', async () => {
    const chainId = fx.chain.chainId;
    const guard = ctx.deps.solvency;
    await guard.checkNow();
    assert.doesNotThrow(() => guard.assertCanSign({ chainId, paymaster: fx.paymaster }));
    assert.equal(guard.state()[0]?.depositWei, parseEther('10'));

    // The owner withdraws 6 ETH: 4 ETH left, below the 5 ETH floor.
    const recipient: Address = '0x000000000000000000000000000000000000f00d';
    await fx.client.waitForTransactionReceipt({
      hash: await fx.client.writeContract({
        ...paymaster(),
        functionName: 'withdrawTo',
        args: [recipient, parseEther('6')],
      }),
    });
    assert.equal(await paymasterDeposit(fx), parseEther('4'));
    const [state] = await guard.checkNow();
    assert.equal(state?.signing, false);
    const err = (() => {
      try {
        guard.assertCanSign({ chainId, paymaster: fx.paymaster });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    assert.ok(err instanceof PaymasterInsolventError);
    assert.equal(err.code, 'INSOLVENT');
    assert.deepEqual(err.data, {
      rule: 'solvency',
      chainId,
      depositWei: parseEther('4').toString(),
      liabilitiesWei: '0',
      floorWei: parseEther('5').toString(),
    });
    assert.match(
      err.shortMessage,
      /^Chain \d+: the paymaster's deposit \(4000000000000000000 wei\) is below its floor/,
    );
    const wire = toRpcError(err);
    assert.equal(wire.error.code, -32042);
    assert.equal(wire.http, 503);

    await until(() => alerts().length === 1, 'the halted alert');
    const halted = alerts()[0];
    assert.ok(signedWith(secret, halted), 'Standard Webhooks signature verifies');
    const body = JSON.parse(halted?.body ?? '{}') as { type: string; data: Record<string, unknown> };
    assert.equal(body.type, 'paymaster.solvency.halted');
    assert.equal(body.data.depositWei, parseEther('4').toString());
    assert.equal(body.data.reason, 'floor');

    // Still insolvent: no second alert, however many checks and refused requests.
    await guard.checkNow();
    assert.throws(() => guard.assertCanSign({ chainId, paymaster: fx.paymaster }), PaymasterInsolventError);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(alerts().length, 1);

    // Topped up by 3 ETH: 7 ETH, above the floor.
    await fx.client.waitForTransactionReceipt({
      hash: await fx.client.writeContract({ ...paymaster(), functionName: 'deposit', value: parseEther('3') }),
    });
    const [recovered] = await guard.checkNow();
    assert.equal(recovered?.signing, true);
    assert.doesNotThrow(() => guard.assertCanSign({ chainId, paymaster: fx.paymaster }));
    await until(() => alerts().length === 2, 'the recovered alert');
    const second = alerts()[1];
    assert.ok(signedWith(secret, second));
    assert.equal((JSON.parse(second?.body ?? '{}') as { type: string }).type, 'paymaster.solvency.recovered');
    assert.notEqual(second?.headers['webhook-id'], halted?.headers['webhook-id']);
  });
});

describe('solvency guard with given amounts', () => {
  const op = (nonce: bigint): UserOperationV06 => ({
    sender: '0x0000000000000000000000000000000000000001',
    nonce,
    initCode: '0x',
    callData: '0x',
    callGasLimit: 1n,
    verificationGasLimit: 1n,
    preVerificationGas: 1n,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
    paymasterAndData: '0x',
    signature: '0x',
  });
  const entryPoint: Address = '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789';
  const signed = (nonce: bigint, worstCaseWei: bigint, validUntil: number) =>
    issuedSignature({
      chain: { chainId: 1, paymaster: entryPoint, entryPoint },
      worstCaseWei,
      validUntil,
      window: { unit: 'seconds', until: validUntil },
      sender: op(nonce).sender,
      nonce,
      opKey: () => '0x00',
      signature: '00',
      hash: () => userOpHashV06({ userOp: op(nonce), entryPoint, chainId: 1 }, viemKeccak),
    });
  const settings = (floorWei: bigint): SolvencySettings => ({
    enabled: true,
    intervalMs: 3_600_000,
    trackedSignatures: 100_000,
    marginBps: 15_000n,
    floorWei,
    floorWeiByChain: new Map(),
    lowWaterWei: undefined,
    lowWaterWeiByChain: new Map(),
    alertHoldMs: 0,
    alert: undefined,
  });

  test('instances sharing one deposit by claims: a concurrent burst through two guards stops at deposit ÷ margin', async () => {
    // The claims' rule as store/ledger/solvencyClaims.ts applies it in one PostgreSQL transaction, in memory here (the real
    // one runs in test/solvency.instances.process.test.ts): grant what the others' live claims leave, never less
    // than what the instance already promised.
    const rows = new Map<string, { wei: bigint; expiresAt: number }>();
    const claimsOf = (instance: string): SolvencyClaims => ({
      async claim(a) {
        await new Promise((r) => setImmediate(r));
        let others = 0n;
        for (const [k, v] of rows)
          if (k.startsWith(`${a.key}|`) && k !== `${a.key}|${instance}` && v.expiresAt > a.nowSeconds) others += v.wei;
        let granted = a.limitWei - others;
        if (a.wantWei < granted) granted = a.wantWei;
        if (a.atLeastWei > granted) granted = a.atLeastWei;
        rows.set(`${a.key}|${instance}`, { wei: granted, expiresAt: a.expiresAt });
        return granted;
      },
    });
    const now = 1_800_000_000_000;
    const guards = ['a', 'b'].map((instance) =>
      startSolvencyGuard({
        chains: [{ chainId: 1, paymaster: entryPoint, readDeposit: async () => parseEther('1') }],
        settings: settings(0n),
        enforce: true,
        alert: undefined,
        logger: silent,
        now: () => now,
        claims: claimsOf(instance),
        claimWindowSeconds: 3700,
      }),
    );
    try {
      await Promise.all(guards.map((g) => g.checkNow()));
      const worst = parseEther('0.05');
      const validUntil = now / 1000 + 600;
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const guard = guards[i % 2];
          assert.ok(guard);
          const op = signed(BigInt(1000 + i), worst, validUntil);
          await guard.ensureHeadroom(op);
          try {
            guard.admitSignature(op);
            return true;
          } catch (e) {
            assert.ok(e instanceof PaymasterInsolventError);
            return false;
          }
        }),
      );
      const promised = BigInt(outcomes.filter(Boolean).length) * worst;
      const limit = (parseEther('1') * 10_000n) / 15_000n;
      assert.ok(promised <= limit, `promised ${promised} above ${limit}`);
      assert.ok(promised + 2n * worst > limit, `only ${promised} of ${limit}`);
      // Without claims each guard alone would have let 13 through: 26, twice the limit.
      const claimed = [...rows.values()].reduce((sum, r) => sum + r.wei, 0n);
      assert.ok(claimed <= limit, 'the claims never sum above the limit');
    } finally {
      await Promise.all(guards.map((g) => g.close()));
    }
  });

  test('with claims, nothing is signed against a deposit no read has seen: the first read is waited for, a failed one refuses (transient)', async () => {
    // Grants what is asked, up to the whole limit (bigints: no Math.min).
    const grantAll: SolvencyClaims = {
      claim: async (a) => {
        if (a.wantWei < a.limitWei) return a.wantWei;
        return a.limitWei;
      },
    };
    let reads = 0;
    let failing = true;
    let release: () => void = () => undefined;
    const slow = new Promise<void>((r) => {
      release = r;
    });
    const now = 1_800_000_000_000;
    const guard = startSolvencyGuard({
      chains: [
        {
          chainId: 1,
          paymaster: entryPoint,
          readDeposit: async () => {
            reads += 1;
            if (reads === 1) await slow; // the first read is still under way when the first request comes
            if (failing) throw new Error('rpc down');
            return parseEther('1');
          },
        },
      ],
      settings: settings(0n),
      enforce: true,
      alert: undefined,
      logger: silent,
      now: () => now,
      claims: grantAll,
      claimWindowSeconds: 3700,
    });
    try {
      const op = signed(7000n, parseEther('0.01'), now / 1000 + 600);
      let settled = false;
      const headroom = guard.ensureHeadroom(op).finally(() => {
        settled = true;
      });
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(settled, false, 'waits for the first read');
      release();
      await assert.rejects(headroom, (e: unknown) => {
        assert.ok(e instanceof UnavailableError, String(e));
        assert.match(e.message, /has not been read yet; retry/);
        assert.equal(toRpcError(e).error.code, -32603);
        assert.equal(toRpcError(e).http, 503);
        return true;
      });
      // Once a read succeeds, the same op is claimed for and admitted.
      failing = false;
      await guard.checkNow();
      await guard.ensureHeadroom(op);
      guard.admitSignature(op);
    } finally {
      await guard.close();
    }
  });

  test('liabilities × margin: signatures count until included or expired', async () => {
    let now = 1_000_000_000_000;
    const guard = startSolvencyGuard({
      chains: [{ chainId: 1, paymaster: entryPoint, readDeposit: async () => parseEther('1') }],
      settings: settings(0n),
      enforce: true,
      alert: undefined,
      logger: silent,
      now: () => now,
    });
    try {
      await guard.checkNow();
      const validUntil = now / 1000 + 60;
      guard.admitSignature(signed(1n, parseEther('0.4'), validUntil));
      assert.doesNotThrow(() => guard.assertCanSign({ chainId: 1, paymaster: entryPoint }), '0.4 × 1.5 = 0.6 ≤ 1');
      // 0.7 × 1.5 = 1.05 > 1: refused as it is issued, and not counted.
      assert.throws(
        () => guard.admitSignature(signed(2n, parseEther('0.3'), validUntil + 600)),
        (e: unknown) => {
          assert.ok(e instanceof PaymasterInsolventError);
          assert.equal(e.data?.liabilitiesWei, parseEther('0.7').toString());
          assert.match(e.shortMessage, /below its live liabilities × margin \(1050000000000000000 wei\)/);
          return true;
        },
      );
      assert.doesNotThrow(
        () => guard.assertCanSign({ chainId: 1, paymaster: entryPoint }),
        'the refused signature was not counted',
      );
      guard.admitSignature(signed(2n, parseEther('0.2'), validUntil + 600));
      // The first op is included: only 0.2 stays open.
      guard.observeIncluded({
        chainId: 1,
        paymaster: entryPoint,
        sender: op(1n).sender,
        nonce: 1n,
        actualGasCost: parseEther('0.1'),
      });
      const [s] = await guard.checkNow();
      assert.equal(s?.liabilitiesWei, parseEther('0.2'));
      assert.equal(s?.signing, true);
      // Past the second op's validUntil the EntryPoint would refuse it: no longer a liability.
      now += 700_000;
      const [later] = await guard.checkNow();
      assert.equal(later?.liabilitiesWei, 0n);
    } finally {
      await guard.close();
    }
  });

  test('bounded: past trackedSignatures the oldest fold into 10 s buckets, released by their window only, never early', () => {
    let now = 1_000_000_000_000;
    const tracker = createLiabilityTracker({ now: () => now, maxExact: 2 });
    const key = paymasterKey({ chainId: 1, paymaster: entryPoint });
    const t0 = now / 1000;
    tracker.record(signed(1n, 100n, t0 + 61)); // folded below: its bucket ends at t0 + 70
    tracker.record(signed(2n, 20n, t0 + 65));
    tracker.record(signed(3n, 3n, t0 + 300));
    assert.equal(tracker.current(key), 123n);
    // Op 1 no longer has an entry of its own: its inclusion does not release it (the figure stays high, safely)…
    tracker.included(key, op(1n).sender, 1n);
    assert.equal(tracker.total(key), 123n);
    // …while an op still tracked one by one is released as before.
    tracker.included(key, op(3n).sender, 3n);
    assert.equal(tracker.total(key), 120n);
    // The bucket outlives op 1's own window (rounded up, never down): head at t0 + 62 keeps it, past t0 + 70 ends it.
    const head = (timestamp: number) => ({ timestamp, blockNumber: 1 });
    assert.equal(tracker.total(key, head(t0 + 62)), 120n);
    assert.equal(tracker.total(key, head(t0 + 66)), 100n, 'op 2 past its window, the bucket not');
    assert.equal(tracker.total(key, head(t0 + 70)), 100n, 'the bucket ends at its rounded-up second');
    assert.equal(tracker.total(key, head(t0 + 71)), 0n);
    // A thousand more ops through two entries: every one counted, each released by its window.
    for (let i = 0; i < 1000; i++) tracker.record(signed(BigInt(10 + i), 1n, t0 + 100 + (i % 30)));
    now += 1;
    assert.equal(tracker.total(key, head(t0 + 80)), 1000n);
    assert.equal(tracker.total(key, head(t0 + 200)), 0n);
  });

  test('keyed by (sender, nonce): an op re-signed with other gas is one liability, its largest, released by the event’s pair', () => {
    const now = 1_000_000_000_000;
    const tracker = createLiabilityTracker({ now: () => now, maxExact: 100 });
    const key = paymasterKey({ chainId: 1, paymaster: entryPoint });
    const t0 = now / 1000;
    // Three signatures of nonce 7 (other limits, other userOpHashes): the EntryPoint includes one of them at most.
    tracker.record(signed(7n, 30n, t0 + 60));
    tracker.record(signed(7n, 90n, t0 + 30));
    tracker.record(signed(7n, 10n, t0 + 120));
    tracker.record(signed(8n, 5n, t0 + 200));
    assert.equal(tracker.total(key), 95n, 'nonce 7 counts once, at its largest worst case');
    // Its window is the latest of them: at t0 + 61 it is still open.
    assert.equal(tracker.total(key, { timestamp: t0 + 61, blockNumber: 1 }), 95n);
    // Another sender's nonce 7 does not release it; the event's own pair does (the address in any case).
    tracker.included(key, '0x0000000000000000000000000000000000000002', 7n);
    assert.equal(tracker.total(key), 95n);
    tracker.included(key, op(7n).sender.toUpperCase().replace('0X', '0x'), 7n);
    assert.equal(tracker.total(key), 5n);
  });

  test('a liability ends by the chain: its head past validUntil, or past a block window’s last block, not the server’s clock', async () => {
    let now = 1_000_000_000_000;
    // The chain's clock lags the server's by 10 minutes, and its head does not move until the test says.
    let head = { timestamp: now / 1000 - 600, blockNumber: 100 };
    const guard = startSolvencyGuard({
      chains: [
        {
          chainId: 1,
          paymaster: entryPoint,
          readDeposit: async () => parseEther('1'),
          readHead: async () => head,
        },
      ],
      settings: settings(0n),
      enforce: true,
      alert: undefined,
      logger: silent,
      now: () => now,
    });
    const byBlocks = (nonce: bigint, lastBlock: number) => ({
      ...signed(nonce, parseEther('0.2'), now / 1000 + 24),
      window: { unit: 'blocks', until: lastBlock } as const,
    });
    try {
      await guard.checkNow();
      guard.admitSignature(signed(1n, parseEther('0.3'), head.timestamp + 60));
      guard.admitSignature(byBlocks(2n, 102));
      // The server's clock an hour later: the chain has not reached either window's end.
      now += 3_600_000;
      assert.equal((await guard.checkNow())[0]?.liabilitiesWei, parseEther('0.5'));
      // The chain at validUntil, and at the last block: both could still be included.
      head = { timestamp: head.timestamp + 60, blockNumber: 102 };
      assert.equal((await guard.checkNow())[0]?.liabilitiesWei, parseEther('0.5'));
      head = { timestamp: head.timestamp + 1, blockNumber: 102 };
      assert.equal((await guard.checkNow())[0]?.liabilitiesWei, parseEther('0.2'), 'the time window closed');
      head = { timestamp: head.timestamp, blockNumber: 103 };
      assert.equal((await guard.checkNow())[0]?.liabilitiesWei, 0n, 'the block window closed');
    } finally {
      await guard.close();
    }
  });

  test('the deposit unreadable: the last value stands; never read: signing goes on', async () => {
    let fail = true;
    const guard = startSolvencyGuard({
      chains: [
        {
          chainId: 1,
          paymaster: entryPoint,
          readDeposit: async () => {
            if (fail) throw new Error('rpc down');
            return 10n;
          },
        },
      ],
      settings: settings(100n),
      enforce: true,
      alert: undefined,
      logger: silent,
      now: Date.now,
    });
    try {
      await guard.checkNow();
      assert.doesNotThrow(() => guard.assertCanSign({ chainId: 1, paymaster: entryPoint }));
      fail = false;
      await guard.checkNow();
      assert.throws(() => guard.assertCanSign({ chainId: 1, paymaster: entryPoint }), PaymasterInsolventError);
      fail = true;
      await guard.checkNow();
      assert.throws(() => guard.assertCanSign({ chainId: 1, paymaster: entryPoint }), PaymasterInsolventError);
      assert.doesNotThrow(
        () => guard.assertCanSign({ chainId: 2, paymaster: entryPoint }),
        'a chain the guard does not know is not held',
      );
    } finally {
      await guard.close();
    }
  });

  test('each paymaster of a chain is held on its own deposit: v0.7 signatures never draw on the v0.6 figure', async () => {
    const v07: Address = '0x00000000000000000000000000000000000007a7';
    const guard = startSolvencyGuard({
      chains: [
        { chainId: 1, paymaster: entryPoint, readDeposit: async () => parseEther('10') },
        { chainId: 1, paymaster: v07, readDeposit: async () => parseEther('1') },
      ],
      settings: settings(0n),
      enforce: true,
      alert: undefined,
      logger: silent,
      now: Date.now,
    });
    try {
      await guard.checkNow();
      const validUntil = Math.floor(Date.now() / 1000) + 600;
      const onV07 = (nonce: bigint, worstCaseWei: bigint) =>
        issuedSignature({
          chain: { chainId: 1, paymaster: v07, entryPoint },
          worstCaseWei,
          validUntil,
          window: { unit: 'seconds', until: validUntil },
          sender: op(nonce).sender,
          nonce,
          opKey: () => '0x00',
          signature: '00',
          hash: () => userOpHashV06({ userOp: op(nonce), entryPoint, chainId: 1 }, viemKeccak),
        });
      // 0.6 × 1.5 = 0.9 ≤ 1 ETH on the v0.7 paymaster; a second 0.6 would need 1.8.
      guard.admitSignature(onV07(1n, parseEther('0.6')));
      assert.throws(() => guard.admitSignature(onV07(2n, parseEther('0.6'))), PaymasterInsolventError);
      // The v0.6 paymaster of the same chain is untouched by them.
      assert.doesNotThrow(() => guard.admitSignature(signed(3n, parseEther('6'), validUntil)));
      const states = guard.state();
      assert.equal(states.find((x) => x.paymaster === v07)?.liabilitiesWei, parseEther('0.6'));
      assert.equal(states.find((x) => x.paymaster === entryPoint)?.liabilitiesWei, parseEther('6'));
    } finally {
      await guard.close();
    }
  });

  test('PATRON_SOLVENCY=false: reads and reports, never holds', async () => {
    const guard = startSolvencyGuard({
      chains: [{ chainId: 1, paymaster: entryPoint, readDeposit: async () => 1n }],
      settings: settings(100n),
      enforce: false,
      alert: undefined,
      logger: silent,
      now: Date.now,
    });
    try {
      const [s] = await guard.checkNow();
      assert.equal(s?.depositWei, 1n);
      assert.equal(s?.signing, true);
      assert.doesNotThrow(() => guard.assertCanSign({ chainId: 1, paymaster: entryPoint }));
    } finally {
      await guard.close();
    }
  });
});

describe('operator alert webhook', () => {
  test('retried with backoff until a 2xx, the same webhook-id each time', async () => {
    const secret = generateSigningSecret();
    let calls = 0;
    const receiver = await startReceiver((req, res) => {
      calls += 1;
      return answer({}, calls < 3 ? 500 : 200)(req, res);
    });
    const sender = createAlertSender({
      url: receiver.url('/a'),
      secret,
      logger: silent,
      now: Date.now,
      backoffMs: 5,
    });
    try {
      assert.equal(await sender.send({ type: 'paymaster.solvency.halted', data: { chainId: 1 } }), true);
      assert.equal(receiver.requests.length, 3);
      assert.equal(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size, 1);
      assert.ok(receiver.requests.every((r) => signedWith(secret, r)));
    } finally {
      sender.close();
      await receiver.close();
    }
  });

  test('the operator URL is checked at start: resolved once, an internal address allowed (said), no address refused', async () => {
    const check = (url: string) => checkAlertDestination({ url, resolve: fakeResolver });
    assert.deepEqual(await check('http://127.0.0.1:9093/api/v2/alerts'), {
      ok: true,
      destination: { host: '127.0.0.1', addresses: ['127.0.0.1'], internal: true },
    });
    // The issue's case: an Alertmanager on a private address, by name.
    assert.deepEqual(await check('http://internal.example.com:9093/hook'), {
      ok: true,
      destination: { host: 'internal.example.com', addresses: ['10.1.2.3'], internal: true },
    });
    assert.deepEqual(await check('https://hooks.example.com/alerts'), {
      ok: true,
      destination: { host: 'hooks.example.com', addresses: ['93.184.215.14'], internal: false },
    });
    assert.deepEqual(await check('http://[::1]:9093/'), {
      ok: true,
      destination: { host: '::1', addresses: ['::1'], internal: true },
    });
    const refused = await check('http://alertmanager.typo.example.com:9093/');
    assert.equal(refused.ok, false);
    assert.match(
      refused.ok ? '' : refused.problem,
      /^PATRON_ALERT_WEBHOOK_URL: its host alertmanager\.typo\.example\.com does not resolve \(getaddrinfo ENOTFOUND/,
    );
    const empty = await checkAlertDestination({ url: 'http://nowhere.example.com/', resolve: async () => [] });
    assert.deepEqual(empty, {
      ok: false,
      problem: 'PATRON_ALERT_WEBHOOK_URL: its host nowhere.example.com resolves to no address',
    });
  });
});
