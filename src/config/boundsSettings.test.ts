import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dappLimitsSchema, dappLimitsToJson, NO_DAPP_LIMITS } from '../dappSettings/dappLimits.js';
import { createBoundsResolver } from '../paymaster/boundsResolver.js';
import { boundsFromEnv, boundsOverrideSchema, DEFAULT_SIGNING_BOUNDS } from './boundsSettings.js';
import { loadConfig } from './config.js';

describe('signing bounds settings', () => {
  test('the defaults without any variable', () => {
    assert.deepEqual(boundsFromEnv({}), { bounds: DEFAULT_SIGNING_BOUNDS, problems: [] });
    assert.deepEqual(loadConfig({}).paymaster.bounds, DEFAULT_SIGNING_BOUNDS);
  });

  test('each PATRON_BOUND_* variable sets its bound', () => {
    const { bounds, problems } = boundsFromEnv({
      PATRON_BOUND_BASE_FEE_MULTIPLIER: '2.5',
      PATRON_BOUND_TIP_MULTIPLIER: '1.000001',
      PATRON_BOUND_MIN_TIP_CAP_WEI: '0',
      PATRON_BOUND_MAX_CALL_GAS: '2000000',
      PATRON_BOUND_MAX_VERIFICATION_GAS: '700000',
      PATRON_BOUND_MAX_PRE_VERIFICATION_GAS: '300000',
      PATRON_BOUND_MAX_OP_COST_WEI: '1000000000000000000',
      PATRON_BOUND_PRE_VERIFICATION_GAS_MULTIPLIER: '1.25',
      PATRON_BOUND_PRE_VERIFICATION_GAS_SLACK: '0',
      PATRON_BOUND_L1_DATA_GAS_PER_BYTE: '120',
      PATRON_BOUND_MAX_UNUSED_GAS_PENALTY: '250000',
      PATRON_BOUND_HOLD_SHARE_PER_CALLER_PERCENT: '25',
      PATRON_BOUND_HOLD_SHARE_PER_SENDER_PERCENT: '100',
    });
    assert.deepEqual(problems, []);
    assert.deepEqual(bounds, {
      baseFeeMultiplierPpm: 2_500_000n,
      tipMultiplierPpm: 1_000_001n,
      minTipCapWei: 0n,
      maxCallGasLimit: 2_000_000n,
      maxVerificationGasLimit: 700_000n,
      maxPreVerificationGas: 300_000n,
      preVerificationGasMultiplierPpm: 1_250_000n,
      preVerificationGasSlack: 0n,
      l1DataGasPerByte: 120n,
      maxUnusedGasPenalty: 250_000n,
      maxOpCostWei: 10n ** 18n,
      holdSharePerCallerPercent: 25,
      holdSharePerSenderPercent: 100,
    });
  });

  test('bad values are refused at start-up, each naming its variable', () => {
    const bad = {
      PATRON_BOUND_BASE_FEE_MULTIPLIER: '0.5',
      PATRON_BOUND_TIP_MULTIPLIER: 'lots',
      PATRON_BOUND_MAX_CALL_GAS: '0',
      PATRON_BOUND_MAX_OP_COST_WEI: '1e18',
      PATRON_BOUND_HOLD_SHARE_PER_CALLER_PERCENT: '0',
    };
    const { problems } = boundsFromEnv(bad);
    assert.equal(problems.length, 5);
    assert.match(
      problems.join('\n'),
      /PATRON_BOUND_HOLD_SHARE_PER_CALLER_PERCENT: holdSharePerCallerPercent must be a whole percentage from 1 to 100/,
    );
    assert.match(
      problems.join('\n'),
      /PATRON_BOUND_BASE_FEE_MULTIPLIER: baseFeeMultiplier must be a number from 1 to 1000/,
    );
    assert.match(problems.join('\n'), /PATRON_BOUND_TIP_MULTIPLIER: /);
    assert.match(
      problems.join('\n'),
      /PATRON_BOUND_MAX_CALL_GAS: maxCallGasLimit must be a whole number of at least 1/,
    );
    assert.match(problems.join('\n'), /PATRON_BOUND_MAX_OP_COST_WEI: /);
    assert.throws(() => loadConfig(bad), /PATRON_BOUND_MAX_CALL_GAS/);
  });

  test('PATRON_CHAINS[i].bounds overrides per chain; an unknown field is refused', () => {
    const chain = { chainId: 137, rpcUrl: 'https://polygon.example', paymaster: `0x${'11'.repeat(20)}` };
    const config = loadConfig({
      PATRON_CHAINS: JSON.stringify([{ ...chain, bounds: { maxOpCostWei: '2000000000000000000', tipMultiplier: 2 } }]),
    });
    assert.deepEqual(config.paymaster.chains[0]?.bounds, { maxOpCostWei: 2n * 10n ** 18n, tipMultiplier: 2_000_000n });
    assert.throws(
      () => loadConfig({ PATRON_CHAINS: JSON.stringify([{ ...chain, bounds: { maxFee: 1 } }]) }),
      /PATRON_CHAINS\[0\]/,
    );
  });

  test('most specific first: dApp per chain, dApp, chain, deployment', () => {
    const resolve = createBoundsResolver({
      deployment: DEFAULT_SIGNING_BOUNDS,
      chains: new Map([[137, boundsOverrideSchema.parse({ maxOpCostWei: '900', maxCallGasLimit: '800' })]]),
    });
    assert.equal(resolve(NO_DAPP_LIMITS, 1), resolve(NO_DAPP_LIMITS, 1), 'memoised per limits object');
    assert.deepEqual(resolve(NO_DAPP_LIMITS, 1), DEFAULT_SIGNING_BOUNDS);
    assert.equal(resolve(NO_DAPP_LIMITS, 137).maxOpCostWei, 900n);
    const limits = dappLimitsSchema.parse({
      bounds: { maxOpCostWei: '700', maxVerificationGasLimit: 5 },
      chains: { '137': { bounds: { maxOpCostWei: '600' } } },
    });
    const polygon = resolve(limits, 137);
    assert.equal(polygon.maxOpCostWei, 600n);
    assert.equal(polygon.maxVerificationGasLimit, 5n);
    assert.equal(polygon.maxCallGasLimit, 800n);
    assert.equal(resolve(limits, 1).maxOpCostWei, 700n);
    assert.equal(resolve(limits, 1).maxCallGasLimit, DEFAULT_SIGNING_BOUNDS.maxCallGasLimit);
  });

  test('dApp limits: strict schema, canonical JSON round trip', () => {
    assert.equal(dappLimitsSchema.safeParse({ bound: {} }).success, false);
    assert.equal(dappLimitsSchema.safeParse({ chains: { mainnet: {} } }).success, false);
    assert.equal(dappLimitsSchema.safeParse([]).success, false);
    const limits = dappLimitsSchema.parse({
      bounds: { baseFeeMultiplier: 2.25, maxOpCostWei: 5 },
      chains: { '10': {} },
    });
    const json = dappLimitsToJson(limits);
    assert.deepEqual(json, { bounds: { baseFeeMultiplier: '2.25', maxOpCostWei: '5' }, chains: { '10': {} } });
    assert.deepEqual(dappLimitsSchema.parse(json), limits);
  });
});
