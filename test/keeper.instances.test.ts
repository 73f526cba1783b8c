import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Address, hexToBytes, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import { KEEPER_OFF, type KeeperSettings } from '../src/config/keeperSettings.js';
import {
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  paymasterDeposit,
  startPatronFixture,
  testKey,
} from './helpers/patronPaymasterV06.js';
import { BACKEND, createTestContext, openSecondInstance } from './helpers/testContext.js';

/**
 * Two service instances on one PostgreSQL database, each with the keeper on for the same paymaster: only the one
 * holding the paymaster's lease (keeper:<chain>:<paymaster>) acts, so one top-up is sent, not two.
 */
const E = parseEther('1');
const FUNDER_KEY = testKey('keeper-instances-funder');
const SINK: Address = '0x000000000000000000000000000000000000f00d';
let fx: PatronFixture;
before(async () => {
  if (BACKEND !== 'postgres') return;
  fx = await startPatronFixture();
  await fx.client.setBalance({ address: privateKeyToAccount(FUNDER_KEY).address, value: 100n * E });
});
after(async () => {
  await fx?.close();
});

test('two keepers on one PostgreSQL database: one top-up', {
  skip: BACKEND !== 'postgres' && 'PostgreSQL only',
}, async () => {
  const keeper: KeeperSettings = {
    ...KEEPER_OFF,
    intervalMs: 86_400_000,
    paymasters: [
      {
        chainId: fx.chain.chainId,
        paymaster: fx.paymaster,
        mode: 'send',
        targetWei: 5n * E,
        dailyLimitWei: 100n * E,
        minimumWei: 2n * E,
        floorWei: 0n,
        marginBps: undefined,
        leadTimeSeconds: 0,
      },
    ],
    funder: { kind: 'privateKey', privateKeyHex: FUNDER_KEY },
  };
  const signerKey = hexToBytes(KEYS.signer);
  const one = await createTestContext({ chains: [fixtureChainRuntime(fx)], signerKey, config: { keeper } });
  const two = await openSecondInstance(one, { chains: [fixtureChainRuntime(fx)], signerKey });
  try {
    const hash = await fx.client.writeContract({
      address: fx.paymaster,
      abi: patronPaymasterAbi,
      functionName: 'withdrawTo',
      args: [SINK, (await paymasterDeposit(fx)) - E],
    });
    await fx.client.waitForTransactionReceipt({ hash });
    const rounds = await Promise.all([one.deps.keeper.runOnce(), two.deps.keeper.runOnce()]);
    assert.deepEqual(rounds.map(([r]) => r?.outcome).sort(), ['confirmed', 'standby']);
    assert.equal(await paymasterDeposit(fx), 5n * E);
    assert.equal(await fx.client.getTransactionCount({ address: privateKeyToAccount(FUNDER_KEY).address }), 1);
    const rows = await one.deps.store.depositTopups.list({ limit: 10 });
    assert.deepEqual(
      rows.map((r) => [r.mode, r.state, r.amountWei]),
      [['sent', 'confirmed', 4n * E]],
    );
    // The holder keeps it: the other stands by round after round.
    const [again] = await two.deps.keeper.runOnce();
    const [held] = await one.deps.keeper.runOnce();
    assert.deepEqual([held?.outcome, again?.outcome].sort(), ['ok', 'standby']);
  } finally {
    await two.close();
    await one.close();
  }
});
