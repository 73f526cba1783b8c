import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hexToBytes, parseEther } from 'viem';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { SolvencySettings } from '../src/config/solvencySettings.js';
import { createDeps, type Deps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import { openStore, type Store } from '../src/store/store.js';
import { generateSigningSecret } from '../src/webhooks/standardWebhooks.js';
import {
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  paymasterDeposit,
  startPatronFixture,
} from './helpers/patronPaymasterV06.js';
import {
  BACKEND,
  dropTestSchema,
  fakeResolver,
  openTestStore,
  TEST_MASTER_KEY,
  testConfig,
} from './helpers/testContext.js';
import { answer, type Receiver, startReceiver } from './helpers/webhookReceiver.js';

/**
 * One copy of each operator alert across instances (store/db/alertClaims.ts): two service instances on one database
 * (PostgreSQL: one schema, two pools; SQLite: one file, two connections), each running its solvency guard against
 * the same paymaster on the in-process chain, both see each transition; the receivers get exactly one post of it. A
 * flap (halted → recovered → halted) posts every change.
 */
const FLOOR = parseEther('1');
const HOLD_MS = 60_000;

/** Two stores on one database of the configured back end, and what drops it afterwards. */
async function twoStoresOnOneDatabase(): Promise<{ stores: [Store, Store]; drop(): Promise<void> }> {
  if (BACKEND === 'postgres') {
    const first = await openTestStore({ poolSize: 3 });
    if (first.schema === undefined) throw new Error('a PostgreSQL store has a schema');
    const second = await openTestStore({ schema: first.schema, poolSize: 3 });
    return { stores: [first.store, second.store], drop: () => dropTestSchema(first.schema) };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-alert-claims-'));
  const file = path.join(dir, 'patron.sqlite');
  const first = await openStore({ storage: { kind: 'sqlite', file } });
  const second = await openStore({ storage: { kind: 'sqlite', file } });
  return { stores: [first, second], drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

describe(`operator alerts: one copy across instances (${BACKEND})`, () => {
  let fx: PatronFixture;
  let webhook: Receiver;
  let pagerDuty: Receiver;
  before(async () => {
    fx = await startPatronFixture();
    webhook = await startReceiver(answer({ ok: true }));
    pagerDuty = await startReceiver(answer({ status: 'success', message: 'Event processed' }, 202));
  });
  after(async () => {
    await webhook?.close();
    await pagerDuty?.close();
    await fx?.close();
  });

  async function setDeposit(target: bigint): Promise<void> {
    const paymaster = { address: fx.paymaster, abi: patronPaymasterAbi } as const;
    const current = await paymasterDeposit(fx);
    if (current === target) return;
    const hash =
      current > target
        ? await fx.client.writeContract({
            ...paymaster,
            functionName: 'withdrawTo',
            args: ['0x000000000000000000000000000000000000f00d', current - target],
          })
        : await fx.client.writeContract({ ...paymaster, functionName: 'deposit', value: target - current });
    await fx.client.waitForTransactionReceipt({ hash });
  }

  test('both instances see each transition; each is posted once, to every destination, flap included', async () => {
    let now = Date.now();
    await setDeposit(parseEther('10'));
    const solvency: SolvencySettings = {
      ...testConfig().solvency,
      enabled: true,
      intervalMs: 3_600_000,
      floorWei: FLOOR,
      lowWaterWei: parseEther('3'),
      alertHoldMs: HOLD_MS,
      alert: { url: webhook.url('/alerts'), secret: generateSigningSecret() },
    };
    const config = testConfig({
      solvency,
      alerts: {
        alertmanager: undefined,
        slack: undefined,
        pagerDuty: { routingKey: 'R0UT1NGKEY0123456789abcdefABCDEF', url: pagerDuty.url('/v2/enqueue') },
      },
    });
    const { stores, drop } = await twoStoresOnOneDatabase();
    const instances: Deps[] = [];
    try {
      for (const store of stores) {
        instances.push(
          await createDeps(config, createLogger({ level: 'silent' }), {
            store,
            masterKey: TEST_MASTER_KEY,
            signerKey: hexToBytes(KEYS.signer),
            resolver: fakeResolver,
            chains: [fixtureChainRuntime(fx)],
            now: () => now,
          }),
        );
      }
      const types = () =>
        webhook.requests
          .map((r) => JSON.parse(r.body) as { type: string; data: { paymaster: string } })
          .filter((a) => a.data.paymaster === fx.paymaster)
          .map((a) => a.type);
      const pages = () =>
        pagerDuty.requests
          .map((r) => JSON.parse(r.body) as { event_action: string; dedup_key: string })
          .filter((e) => e.dedup_key.endsWith(fx.paymaster.toLowerCase()))
          .map((e) => e.event_action);
      /** Both instances read the deposit, one after the other, and post what they post. */
      const bothCheck = async () => {
        for (const deps of instances) await deps.solvency.checkNow();
        await new Promise((r) => setTimeout(r, 200));
      };

      await bothCheck();
      await setDeposit(parseEther('0.5'));
      now += 15_000;
      await bothCheck();
      assert.deepEqual(
        instances.map((d) => d.solvency.state().find((s) => s.paymaster === fx.paymaster)?.signing),
        [false, false],
        'both instances halted',
      );
      assert.deepEqual(types(), ['paymaster.solvency.halted']);
      assert.deepEqual(pages(), ['trigger']);

      // Back above the low-water mark for the hold time: both recover; one `recovered`.
      await setDeposit(parseEther('10'));
      now += 15_000;
      await bothCheck();
      now += HOLD_MS;
      await bothCheck();
      assert.deepEqual(types(), ['paymaster.solvency.halted', 'paymaster.solvency.recovered']);
      assert.deepEqual(pages(), ['trigger', 'resolve']);

      // Halted again: a new change, posted again, once.
      await setDeposit(parseEther('0.5'));
      now += 15_000;
      await bothCheck();
      assert.deepEqual(types(), [
        'paymaster.solvency.halted',
        'paymaster.solvency.recovered',
        'paymaster.solvency.halted',
      ]);
      assert.deepEqual(pages(), ['trigger', 'resolve', 'trigger']);
    } finally {
      for (const deps of instances) await deps.close();
      await drop();
      await setDeposit(parseEther('10'));
    }
  });

  test('the claim itself: one of two callers moves the row; a new state moves it again; a stale row is taken again', async () => {
    const { stores, drop } = await twoStoresOnOneDatabase();
    try {
      const [a, b] = stores;
      const claim = (s: Store, state: string, now: number) =>
        s.alertClaims.claim({ subject: 'paymaster.solvency:1:0xabc', state, now, staleMs: 1000 });
      const raced = await Promise.all([claim(a, 'halted', 10), claim(b, 'halted', 10)]);
      assert.deepEqual(raced.toSorted(), [false, true]);
      assert.equal(await claim(b, 'halted', 20), false);
      assert.equal(await claim(b, 'recovered', 30), true);
      assert.equal(await claim(a, 'recovered', 40), false);
      assert.equal(await claim(a, 'halted', 50), true);
      // Held a full staleMs: the same state is posted again (an incident whose end nobody saw).
      assert.equal(await claim(b, 'halted', 1050), true);
      assert.equal(await claim(a, 'halted', 1060), false);
      // Another subject is its own.
      assert.equal(
        await a.alertClaims.claim({
          subject: 'paymaster.signer:1:0xabc:0xdef',
          state: 'removed',
          now: 1,
          staleMs: 1000,
        }),
        true,
      );
    } finally {
      for (const s of stores) await s.close();
      await drop();
    }
  });
});
