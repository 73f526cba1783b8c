import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, hexToBytes, parseEther } from 'viem';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { SolvencySettings } from '../src/config/solvencySettings.js';
import { PaymasterInsolventError } from '../src/errors/PatronError.js';
import { viemKeccak } from '../src/paymaster/entryPoints/abiWords.js';
import { userOpHashV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { issuedSignature } from '../src/paymaster/requestFacts.js';
import { generateSigningSecret } from '../src/webhooks/standardWebhooks.js';
import {
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  paymasterDeposit,
  startPatronFixture,
} from './helpers/patronPaymasterV06.js';
import {
  createTenant,
  createTestContext,
  insertBareDapp,
  type TestContext,
  WEBHOOK_PATH,
  webhookHeaders,
} from './helpers/testContext.js';
import { answer, type Receiver, signedWith, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The operator alerts (src/solvency/docs/guides/operations.md, "Alerts"): the low-water warning with its runway, hysteresis against
 * a deposit held on a threshold, and the operator's alert URL on 127.0.0.1 in production mode. The in-process chain's
 * paymaster (10 ETH deposited), a real receiver, and the service's own clock moved by the test.
 */
const FLOOR = parseEther('1');
const LOW_WATER = parseEther('3');
const HOLD_MS = 60_000;
const INTERVAL_MS = 15_000;

async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const settle = () => new Promise((r) => setTimeout(r, 100));

describe('operator alerts with the low-water mark and hysteresis', () => {
  const secret = generateSigningSecret();
  let fx: PatronFixture;
  let receiver: Receiver;
  let ctx: TestContext | undefined;
  let now = Date.now();
  before(async () => {
    fx = await startPatronFixture();
    receiver = await startReceiver(answer({ ok: true }));
  });
  after(async () => {
    await receiver.close();
    await fx.close();
  });

  const paymaster = () => ({ address: fx.paymaster, abi: patronPaymasterAbi }) as const;
  /** Withdraws or deposits the difference, on chain. */
  async function setDeposit(target: bigint): Promise<void> {
    const current = await paymasterDeposit(fx);
    if (current === target) return;
    const hash =
      current > target
        ? await fx.client.writeContract({
            ...paymaster(),
            functionName: 'withdrawTo',
            args: ['0x000000000000000000000000000000000000f00d', current - target],
          })
        : await fx.client.writeContract({ ...paymaster(), functionName: 'deposit', value: target - current });
    await fx.client.waitForTransactionReceipt({ hash });
    assert.equal(await paymasterDeposit(fx), target);
  }

  /** A service in production mode: tenant webhooks held to the SSRF rule, the operator's alerts to 127.0.0.1. */
  async function service(): Promise<TestContext> {
    await ctx?.close();
    receiver.requests.length = 0;
    const solvency: SolvencySettings = {
      enabled: true,
      // The test reads (checkNow) as the loop would, every INTERVAL_MS of its clock.
      intervalMs: 3_600_000,
      trackedSignatures: 100_000,
      marginBps: 15_000n,
      floorWei: FLOOR,
      floorWeiByChain: new Map(),
      lowWaterWei: undefined,
      lowWaterWeiByChain: new Map([[fx.chain.chainId, LOW_WATER]]),
      alertHoldMs: HOLD_MS,
      alert: { url: receiver.url('/alerts'), secret },
    };
    ctx = await createTestContext({
      chains: [fixtureChainRuntime(fx)],
      signerKey: hexToBytes(KEYS.signer),
      now: () => now,
      config: { solvency, production: true, allowPrivateWebhookUrls: false },
    });
    return ctx;
  }
  after(() => ctx?.close());

  type Alert = { type: string; data: Record<string, unknown> };
  /** The alerts about the fixture's v0.6 paymaster (the chain's other EntryPoints have theirs, untouched). */
  const alerts = (): Alert[] =>
    receiver.requests
      .filter((r) => r.url === '/alerts')
      .map((r) => {
        // Signed at the service's clock, which the test moves by hours: the signature checked, not its age.
        assert.ok(
          signedWith(secret, r, () => Number(r.headers['webhook-timestamp']) * 1000),
          'every alert is Standard Webhooks signed',
        );
        return JSON.parse(r.body) as Alert;
      })
      .filter((a) => a.data.paymaster === fx.paymaster);
  const types = () => alerts().map((a) => a.type);
  const sender: Address = '0x0000000000000000000000000000000000a77ac4';
  let nonce = 0n;
  /** A signature of the fixture's v0.6 paymaster as the pipeline hands it to the guard, worst case `worstCaseWei`. */
  const sign = (worstCaseWei: bigint) => {
    const chainId = fx.chain.chainId;
    const entryPoint = fx.entryPoint;
    nonce += 1n;
    const n = nonce;
    const validUntil = Math.floor(Date.now() / 1000) + 3600;
    return issuedSignature({
      chain: { chainId, paymaster: fx.paymaster, entryPoint },
      worstCaseWei,
      validUntil,
      window: { unit: 'seconds', until: validUntil },
      sender,
      nonce: n,
      opKey: () => '0x00',
      signature: '00',
      hash: () =>
        userOpHashV06(
          {
            userOp: {
              sender,
              nonce: n,
              initCode: '0x',
              callData: '0x',
              callGasLimit: 1n,
              verificationGasLimit: 1n,
              preVerificationGas: 1n,
              maxFeePerGas: 1n,
              maxPriorityFeePerGas: 1n,
              paymasterAndData: '0x',
            },
            entryPoint,
            chainId,
          },
          viemKeccak,
        ),
    });
  };
  /** An op of the fixture's v0.6 paymaster included at the service's clock, the deposit charged `wei` (the ledger). */
  async function included(c: TestContext, wei: bigint): Promise<void> {
    const dappId = await insertBareDapp(c.deps.store, 'spender');
    const opKey = `0x${dappId.replaceAll('-', '').padEnd(64, '0')}`;
    const id = `${dappId}:${opKey}`;
    const window = { unit: 'seconds', until: Math.floor(now / 1000) + 60 } as const;
    const reserved = await c.deps.store.spendLedger.reserve({
      ...{ id, dappId, chainId: fx.chain.chainId, userOpHash: undefined, opKey, charges: [], window },
      ...{ expiresAt: now + 60_000, now, paymaster: fx.paymaster },
    });
    assert.deepEqual(reserved, { ok: true });
    const settled = await c.deps.store.spendLedger.settle({
      ...{ id, actualWei: wei, actualUsdMicros: undefined, now: now + 1 },
      paymaster: fx.paymaster,
    });
    assert.equal(settled, true);
  }
  const mine = (c: TestContext) => c.deps.solvency.state().find((s) => s.paymaster === fx.paymaster);

  test('below the low-water mark: one signed `low` warning with the spend rate and the runway, signing goes on', async () => {
    await setDeposit(parseEther('10'));
    const c = await service();
    await c.deps.solvency.checkNow();
    // Ops took 0.75 ETH from the deposit (the ledger, the paymaster's first: an hour's rate), and the owner withdrew
    // the rest down to 2.5 ETH (not spend): floor 1, low 3.
    await included(c, parseEther('0.75'));
    await setDeposit(parseEther('2.5'));
    now += 60_000;
    await c.deps.solvency.checkNow();
    await until(() => alerts().length === 1, 'the low alert');
    const [low] = alerts();
    assert.equal(low?.type, 'paymaster.solvency.low');
    assert.deepEqual(
      {
        depositWei: low?.data.depositWei,
        floorWei: low?.data.floorWei,
        lowWaterWei: low?.data.lowWaterWei,
        headroomWei: low?.data.headroomWei,
        spendWeiPerHour: low?.data.spendWeiPerHour,
        runwaySeconds: low?.data.runwaySeconds,
      },
      {
        depositWei: parseEther('2.5').toString(),
        floorWei: FLOOR.toString(),
        lowWaterWei: LOW_WATER.toString(),
        headroomWei: parseEther('2.5').toString(),
        // 0.75 ETH in its first hour: 0.75 ETH an hour, whatever was withdrawn; 1.5 ETH above the floor lasts 2 h.
        spendWeiPerHour: parseEther('0.75').toString(),
        runwaySeconds: 7200,
      },
    );
    assert.doesNotThrow(() => c.deps.solvency.assertCanSign({ chainId: fx.chain.chainId, paymaster: fx.paymaster }));
    assert.equal(mine(c)?.alertLevel, 'low');
    assert.equal(mine(c)?.runwaySeconds, 7200);

    // Read again and again at the mark's edge: no second warning.
    for (const deposit of ['2.9', '3.05', '2.95', '3.1']) {
      await setDeposit(parseEther(deposit));
      now += INTERVAL_MS;
      await c.deps.solvency.checkNow();
    }
    await settle();
    assert.deepEqual(types(), ['paymaster.solvency.low']);
    assert.equal(mine(c)?.alertLevel, 'low', '3.1 ETH is not 10 % above the mark');

    // Topped up: the warning clears once the deposit has stayed clear for the hold time (silently), then re-arms.
    await setDeposit(parseEther('5'));
    now += INTERVAL_MS;
    await c.deps.solvency.checkNow();
    now += HOLD_MS - 1;
    await c.deps.solvency.checkNow();
    assert.equal(mine(c)?.alertLevel, 'low', 'not clear for the whole hold time yet');
    now += 1;
    await c.deps.solvency.checkNow();
    assert.equal(mine(c)?.alertLevel, 'ok');
    await setDeposit(parseEther('2'));
    now += INTERVAL_MS;
    await c.deps.solvency.checkNow();
    await until(() => alerts().length === 2, 'the second low alert');
    assert.deepEqual(types(), ['paymaster.solvency.low', 'paymaster.solvency.low']);
  });

  test('a deposit held on the threshold by bursts of signatures: one halt, no recovery until clear for the hold time', async () => {
    await setDeposit(parseEther('10'));
    const c = await service();
    const guard = c.deps.solvency;
    const chainId = fx.chain.chainId;
    await guard.checkNow();
    // Ten rounds, one per guard interval: a burst of 1 ETH worst cases until the guard refuses one (10 ETH covers
    // 6 × 1.5), then the ops are included within the second (their liabilities gone) and the next read finds the
    // deposit covering everything again.
    for (let round = 0; round < 10; round++) {
      const admitted: bigint[] = [];
      for (;;) {
        const op = sign(parseEther('1'));
        try {
          // As the signing pipeline does: the claim on the shared deposit first (PostgreSQL), then the check.
          await guard.ensureHeadroom(op);
          guard.admitSignature(op);
          admitted.push(op.nonce);
        } catch (err) {
          assert.ok(err instanceof PaymasterInsolventError);
          break;
        }
      }
      // The guard is not weakened: exactly what 10 ETH covers at × 1.5, every round.
      assert.equal(admitted.length, 6);
      now += 800;
      for (const n of admitted) {
        guard.observeIncluded({ chainId, paymaster: fx.paymaster, sender, nonce: n, actualGasCost: 0n });
      }
      now += INTERVAL_MS - 800;
      await guard.checkNow();
      // Signing resumes at once: hysteresis is for the alerts, never for the guard.
      assert.doesNotThrow(() => guard.assertCanSign({ chainId, paymaster: fx.paymaster }));
    }
    await settle();
    // The first burst crossed the low-water mark on its way to the halt; then nothing, however many rounds.
    assert.deepEqual(types(), ['paymaster.solvency.low', 'paymaster.solvency.halted']);
    assert.equal(mine(c)?.alertLevel, 'halted');

    // The attack stops: the halt is over once the deposit has stayed above the low-water mark for the hold time
    // (from the last read that found it clear, the burst's aftermath).
    now += HOLD_MS - 1;
    await guard.checkNow();
    await settle();
    assert.equal(types().length, 2, 'not clear for the whole hold time yet');
    now += 1;
    await guard.checkNow();
    await until(() => alerts().length === 3, 'the recovered alert');
    const recovered = alerts()[2];
    assert.equal(recovered?.type, 'paymaster.solvency.recovered');
    assert.equal(recovered?.data.depositWei, parseEther('10').toString());
    assert.equal(recovered?.data.liabilitiesWei, '0');
    assert.equal(mine(c)?.alertLevel, 'low', 'the warning stays until the deposit clears it by a tenth');
  });

  test('held at the floor by reads: above the floor but under the low-water mark is no recovery', async () => {
    await setDeposit(parseEther('10'));
    const c = await service();
    await c.deps.solvency.checkNow();
    for (const deposit of ['0.9', '1.1', '0.99', '1.5', '0.5', '2.9']) {
      await setDeposit(parseEther(deposit));
      now += INTERVAL_MS;
      await c.deps.solvency.checkNow();
      // The guard stops exactly at the floor and resumes at once above it.
      assert.equal(mine(c)?.signing, parseEther(deposit) >= FLOOR, deposit);
      now += HOLD_MS * 2;
      await c.deps.solvency.checkNow();
    }
    await settle();
    assert.deepEqual(types(), ['paymaster.solvency.halted']);
    await setDeposit(parseEther('3'));
    now += INTERVAL_MS;
    await c.deps.solvency.checkNow();
    now += HOLD_MS;
    await c.deps.solvency.checkNow();
    await until(() => alerts().length === 2, 'the recovered alert');
    assert.deepEqual(types(), ['paymaster.solvency.halted', 'paymaster.solvency.recovered']);
  });

  test('the dashboard warns at the low-water mark, before the halt banner at the floor', async () => {
    await setDeposit(parseEther('2.5'));
    const c = await service();
    await c.deps.solvency.checkNow();
    const tenant = await createTenant(c.deps);
    const status = async () => {
      const res = await c.app.inject({
        method: 'GET',
        url: '/api/admin/paymaster-status',
        headers: { authorization: `Bearer ${tenant.authToken}` },
      });
      assert.equal(res.statusCode, 200, res.body);
      type Row = {
        paymaster: string;
        warnings: { code: string; message: string }[];
        solvency: {
          signing: boolean;
          lowWater: { eth: string };
          lowWaterDeposit: { eth: string };
          alertLevel: string;
          floor: { eth: string };
        };
      };
      const rows = (res.json() as { data: { paymasters: Row[] } }).data.paymasters;
      const row = rows.find((r) => r.paymaster === fx.paymaster);
      assert.ok(row);
      return row;
    };
    // 2.5 ETH: above the 1 ETH floor (signing), under the 3 ETH low-water mark (PATRON_DEPOSIT_WARNING_ETH is 0.1).
    let row = await status();
    const lowWarnings = () => row.warnings.filter((w) => w.code === 'deposit_low').map((w) => w.message);
    assert.deepEqual(lowWarnings(), [
      'The deposit is below 3 ETH (the low-water mark, PATRON_SOLVENCY_LOW_WATER_WEI): top it up before signing stops at the floor (patron paymaster deposit)',
    ]);
    assert.deepEqual(
      [row.solvency.signing, row.solvency.alertLevel, row.solvency.lowWater.eth, row.solvency.floor.eth],
      [true, 'low', '3', '1'],
    );
    await setDeposit(parseEther('3.5'));
    row = await status();
    assert.deepEqual(lowWarnings(), []);
    // The mark is on what the deposit holds beyond liabilities × margin, as the alert's: 1 ETH signed and not yet
    // included needs 1.5 ETH, so 3.5 ETH holds 2 ETH beyond it, under the mark. The card and the alert agree.
    // As the signing pipeline does: the guard has read 3.5 ETH, the claim on the shared deposit (PostgreSQL) first.
    await c.deps.solvency.checkNow();
    const op = sign(parseEther('1'));
    await c.deps.solvency.ensureHeadroom(op);
    c.deps.solvency.admitSignature(op);
    now += INTERVAL_MS;
    await c.deps.solvency.checkNow();
    row = await status();
    assert.deepEqual(lowWarnings(), [
      'The deposit is below 4.5 ETH (the live liabilities × margin, 1.5 ETH, plus the low-water mark, 3 ETH): top it up before signing stops at the floor (patron paymaster deposit)',
    ]);
    assert.equal(row.solvency.alertLevel, 'low');
    assert.equal(row.solvency.lowWaterDeposit.eth, '4.5');
  });

  test('production mode: the operator URL on 127.0.0.1 is delivered; a tenant webhook there is still refused', async () => {
    await setDeposit(parseEther('10'));
    const c = await service();
    assert.equal(c.deps.config.production, true);
    await c.deps.solvency.checkNow();
    await setDeposit(parseEther('0.5'));
    now += INTERVAL_MS;
    await c.deps.solvency.checkNow();
    await until(() => alerts().length === 1, 'the halted alert on 127.0.0.1');
    assert.equal(alerts()[0]?.type, 'paymaster.solvency.halted');

    const tenant = await createTenant(c.deps);
    const res = await c.app.inject({
      method: 'POST',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(tenant),
      payload: { webhookUrl: receiver.url('/tenant'), requestType: 'POST' },
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.body, /must not point at a loopback, private, link-local or metadata address/);
    assert.equal(receiver.requests.filter((r) => r.url === '/tenant').length, 0);
  });
});
