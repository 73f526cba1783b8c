import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, type Hex, hexToBytes, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import { KEEPER_OFF, type KeeperMode, type KeeperSettings } from '../src/config/keeperSettings.js';
import { selectCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { buildKeeper } from '../src/keeper/buildKeeper.js';
import type { DepositTopup } from '../src/store/ledger/depositTopupRepository.js';
import { generateSigningSecret } from '../src/webhooks/standardWebhooks.js';
import {
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  paymasterDeposit,
  startPatronFixture,
  testKey,
} from './helpers/patronPaymasterV06.js';
import { createTenant, createTestContext, type TestContext, testConfig } from './helpers/testContext.js';
import { answer, type Receiver, signedWith, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The deposit keeper (src/keeper/README.md) on the in-process chain: the fixture's v0.6 paymaster (10 ETH deposited),
 * a funding key of its own, the ledger on the test back end (SQLite, or PostgreSQL with PATRON_TEST_DATABASE_URL),
 * the operator alerts posted to a real receiver on 127.0.0.1. The deposit falls as spend would take it (a withdrawal
 * by the owner: to the EntryPoint's balance the same), and the keeper's rounds run when the test asks.
 */
const E = parseEther('1');
const FUNDER_KEY = testKey('keeper-funder');
const EMPTY_FUNDER_KEY = testKey('keeper-empty-funder');
const SINK: Address = '0x000000000000000000000000000000000000f00d';

describe('the deposit keeper', () => {
  const secret = generateSigningSecret();
  let fx: PatronFixture;
  let receiver: Receiver;
  let ctx: TestContext | undefined;
  let now = Date.now();
  before(async () => {
    fx = await startPatronFixture();
    receiver = await startReceiver(answer({ ok: true }));
    await fx.client.setBalance({ address: privateKeyToAccount(FUNDER_KEY).address, value: 20n * E });
  });
  after(async () => {
    await ctx?.close();
    await receiver.close();
    await fx.close();
  });

  async function setDeposit(target: bigint): Promise<void> {
    const current = await paymasterDeposit(fx);
    if (current === target) return;
    const hash =
      current > target
        ? await fx.client.writeContract({
            address: fx.paymaster,
            abi: patronPaymasterAbi,
            functionName: 'withdrawTo',
            args: [SINK, current - target],
          })
        : await fx.client.writeContract({
            address: fx.paymaster,
            abi: patronPaymasterAbi,
            functionName: 'deposit',
            value: target - current,
          });
    await fx.client.waitForTransactionReceipt({ hash });
  }

  /** A service whose keeper looks after the fixture's paymaster: mark 2 ETH (the minimum), target 5 ETH. */
  async function service(args: { mode: KeeperMode; dailyLimitWei?: bigint; funderKey?: Hex }): Promise<TestContext> {
    await ctx?.close();
    ctx = undefined;
    receiver.requests.length = 0;
    // Enough for every top-up here: the low-funder alert only where the test empties the key.
    await fx.client.setBalance({ address: privateKeyToAccount(FUNDER_KEY).address, value: 100n * E });
    const base = testConfig();
    const keeper: KeeperSettings = {
      ...KEEPER_OFF,
      // Rounds only when the test asks.
      intervalMs: 86_400_000,
      gasReserveWei: E / 100n,
      paymasters: [
        {
          chainId: fx.chain.chainId,
          paymaster: fx.paymaster,
          mode: args.mode,
          targetWei: 5n * E,
          dailyLimitWei: args.dailyLimitWei ?? 100n * E,
          minimumWei: 2n * E,
          floorWei: 0n,
          marginBps: undefined,
          leadTimeSeconds: 0,
        },
      ],
      funder: args.mode === 'propose' ? undefined : { kind: 'privateKey', privateKeyHex: args.funderKey ?? FUNDER_KEY },
    };
    ctx = await createTestContext({
      chains: [fixtureChainRuntime(fx)],
      signerKey: hexToBytes(KEYS.signer),
      now: () => now,
      config: { keeper, solvency: { ...base.solvency, alert: { url: receiver.url('/alerts'), secret } } },
    });
    return ctx;
  }

  type Alert = { type: string; data: Record<string, unknown> };
  const alerts = (): Alert[] =>
    receiver.requests
      .filter((r) => r.url === '/alerts')
      .map((r) => {
        assert.ok(
          signedWith(secret, r, () => Number(r.headers['webhook-timestamp']) * 1000),
          'signed',
        );
        return JSON.parse(r.body) as Alert;
      })
      .filter((a) => a.type.startsWith('paymaster.keeper.'));
  const types = () => alerts().map((a) => a.type);
  const rows = (c: TestContext): Promise<readonly DepositTopup[]> =>
    c.deps.store.depositTopups.list({ chainId: fx.chain.chainId, paymaster: fx.paymaster, limit: 100 });
  const funderNonce = (key: Hex) => fx.client.getTransactionCount({ address: privateKeyToAccount(key).address });
  async function round(c: TestContext) {
    // A round every second of the service's clock: rows in the order they were made.
    now += 1000;
    const [r] = await c.deps.keeper.runOnce();
    await c.deps.keeper.settled();
    return r;
  }

  test('spend under the mark: one top-up back to the target, recorded confirmed, alerted; above it nothing', async () => {
    await setDeposit(10n * E);
    const c = await service({ mode: 'send' });
    assert.equal((await round(c))?.outcome, 'ok');
    assert.equal((await rows(c)).length, 0);

    await setDeposit(E + E / 2n);
    const funderBefore = await fx.client.getBalance({ address: privateKeyToAccount(FUNDER_KEY).address });
    const r = await round(c);
    assert.equal(r?.outcome, 'confirmed');
    assert.equal(r?.markWei, 2n * E);
    assert.equal(await paymasterDeposit(fx), 5n * E, 'back at the target');
    const [row] = await rows(c);
    assert.equal(row?.mode, 'sent');
    assert.equal(row?.state, 'confirmed');
    assert.equal(row?.amountWei, 3n * E + E / 2n);
    assert.equal(row?.funder, privateKeyToAccount(FUNDER_KEY).address.toLowerCase());
    const receipt = await fx.client.getTransactionReceipt({ hash: row?.txHash as Hex });
    assert.equal(receipt.status, 'success');
    assert.equal(receipt.to?.toLowerCase(), fx.entryPoint.toLowerCase(), 'depositTo at the EntryPoint');
    const funderAfter = await fx.client.getBalance({ address: privateKeyToAccount(FUNDER_KEY).address });
    assert.ok(funderBefore - funderAfter >= 3n * E + E / 2n, 'sent from the funding key');
    assert.deepEqual(types(), ['paymaster.keeper.topped_up']);
    assert.equal(alerts()[0]?.data.amountWei, (3n * E + E / 2n).toString());
    assert.equal(alerts()[0]?.data.depositAfterWei, (5n * E).toString());

    // At the target: nothing more.
    assert.equal((await round(c))?.outcome, 'ok');
    assert.equal((await rows(c)).length, 1);
  });

  test('the daily limit caps a second top-up, then refuses a third with an alert; it rolls over after 24 h', async () => {
    await setDeposit(10n * E);
    // 6 ETH a day: 4 ETH, then the 2 ETH left of the limit, then nothing.
    const c = await service({ mode: 'send', dailyLimitWei: 6n * E });
    await setDeposit(E);
    assert.equal((await round(c))?.outcome, 'confirmed');
    assert.equal(await paymasterDeposit(fx), 5n * E);

    await setDeposit(E);
    assert.equal((await round(c))?.outcome, 'confirmed');
    assert.equal(await paymasterDeposit(fx), 3n * E, 'partial: what the limit left');
    assert.deepEqual(types(), [
      'paymaster.keeper.topped_up',
      'paymaster.keeper.daily_limit_reached',
      'paymaster.keeper.topped_up',
    ]);

    await setDeposit(E);
    const nonce = await funderNonce(FUNDER_KEY);
    assert.equal((await round(c))?.outcome, 'limit_reached');
    assert.equal(await funderNonce(FUNDER_KEY), nonce, 'nothing sent');
    assert.equal(await paymasterDeposit(fx), E);
    assert.equal(types().at(-1), 'paymaster.keeper.daily_limit_reached');
    // Said once per need, not every round.
    assert.equal((await round(c))?.outcome, 'limit_reached');
    assert.equal(types().length, 4);
    // The limit is summed from the ledger: a keeper started afresh on the same database (a restart, another
    // instance) counts what was sent before it.
    const again = await buildKeeper({
      config: c.deps.config,
      chains: c.deps.chains,
      gate: { solvency: c.deps.solvency, alerts: undefined },
      store: c.deps.store,
      crypto: selectCryptoBackend().backend,
      signer: c.deps.signer,
      observer: undefined,
      logger: c.deps.logger,
      now: () => now,
    });
    try {
      assert.equal((await again.runOnce())[0]?.outcome, 'limit_reached');
      assert.equal(await funderNonce(FUNDER_KEY), nonce);
      // A day later the first two top-ups are out of the window.
      now += 86_400_000 + 1;
      assert.equal((await again.runOnce())[0]?.outcome, 'confirmed');
    } finally {
      await again.close();
    }
    assert.equal(await paymasterDeposit(fx), 5n * E);
    assert.deepEqual(
      (await rows(c)).map((r) => [r.amountWei, r.state]),
      [
        [4n * E, 'confirmed'],
        [2n * E, 'confirmed'],
        [4n * E, 'confirmed'],
      ],
    );
  });

  test('an empty funding key: no transaction, a failed alert and a low-funder alert', async () => {
    await setDeposit(E);
    const c = await service({ mode: 'send', funderKey: EMPTY_FUNDER_KEY });
    const r = await round(c);
    assert.equal(r?.outcome, 'funder_insufficient');
    assert.equal(await funderNonce(EMPTY_FUNDER_KEY), 0);
    assert.equal(await paymasterDeposit(fx), E);
    assert.equal((await rows(c)).length, 0, 'nothing recorded: nothing was sent');
    assert.deepEqual(types().sort(), ['paymaster.keeper.failed', 'paymaster.keeper.funder_low']);
    const failed = alerts().find((a) => a.type === 'paymaster.keeper.failed');
    assert.equal(failed?.data.failure, 'funder_insufficient');
    const low = alerts().find((a) => a.type === 'paymaster.keeper.funder_low');
    assert.equal(low?.data.balanceWei, '0');
  });

  test('dry run: the top-up recorded as dry_run and alerted once, nothing sent', async () => {
    await setDeposit(E);
    const c = await service({ mode: 'dryRun' });
    const nonce = await funderNonce(FUNDER_KEY);
    assert.equal((await round(c))?.outcome, 'dry_run');
    assert.equal((await round(c))?.outcome, 'waiting', 'once per need');
    assert.equal(await funderNonce(FUNDER_KEY), nonce, 'nothing sent');
    assert.equal(await paymasterDeposit(fx), E);
    const all = await rows(c);
    assert.deepEqual(
      all.map((r) => [r.mode, r.amountWei, r.txHash]),
      [['dry_run', 4n * E, undefined]],
    );
    assert.deepEqual(types(), ['paymaster.keeper.dry_run']);
    assert.equal(alerts()[0]?.data.amountWei, (4n * E).toString());
  });

  test('proposal mode: the Safe transaction recorded and alerted once per need; sent by the owner, it is met', async () => {
    await setDeposit(E);
    const c = await service({ mode: 'propose' });
    assert.equal((await round(c))?.outcome, 'proposed');
    assert.equal((await round(c))?.outcome, 'waiting', 'once per need, not every round');
    const [row] = await rows(c);
    assert.equal(row?.mode, 'proposed');
    assert.equal(row?.state, 'pending');
    assert.equal(row?.funder, fx.client.account.address.toLowerCase(), 'the owner');
    const proposal = row?.proposal as {
      transaction: { to: Address; value: string; data: Hex };
      safeTransactionBuilder: { chainId: string; transactions: { to: string }[] };
    };
    assert.equal(proposal.safeTransactionBuilder.chainId, String(fx.chain.chainId));
    assert.equal(proposal.safeTransactionBuilder.transactions[0]?.to, proposal.transaction.to);
    assert.deepEqual(types(), ['paymaster.keeper.proposed']);
    assert.deepEqual(alerts()[0]?.data.transaction, proposal.transaction);

    // The ledger through the admin API: a signed-in account reads it, nobody else.
    const { authToken } = await createTenant(c.deps);
    const url = `/api/admin/keeper/topups?chainId=${fx.chain.chainId}&paymaster=${fx.paymaster}`;
    const res = await c.app.inject({ url, headers: { authorization: `Bearer ${authToken}` } });
    assert.equal(res.statusCode, 200);
    const [listed] = res.json().data.topups;
    assert.equal(listed.mode, 'proposed');
    assert.equal(listed.state, 'pending');
    assert.equal(listed.amountWei, (4n * E).toString());
    assert.deepEqual(listed.proposal.transaction, proposal.transaction);
    assert.equal((await c.app.inject({ url })).statusCode, 401);
    // The same page bound and message as every admin list (api/pageQuery.ts).
    const tooMany = await c.app.inject({ url: `${url}&limit=201`, headers: { authorization: `Bearer ${authToken}` } });
    assert.equal(tooMany.statusCode, 400);
    assert.match(tooMany.body, /limit must be an integer from 1 to 200/);

    // The owner sends the proposed bytes as they are: the deposit is back at the target, the proposal met.
    const hash = await fx.client.sendTransaction({
      to: proposal.transaction.to,
      value: BigInt(proposal.transaction.value),
      data: proposal.transaction.data,
    });
    await fx.client.waitForTransactionReceipt({ hash });
    assert.equal(await paymasterDeposit(fx), 5n * E);
    assert.equal((await round(c))?.outcome, 'ok');
    assert.equal((await rows(c))[0]?.state, 'confirmed');
  });
});
