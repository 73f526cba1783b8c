import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from './config.js';
import { lowWaterFor } from './solvencySettings.js';

const problemsOf = (env: Record<string, string>): readonly string[] => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

test('low-water mark: 3 × the floor by default, per chain like the floor, the hold time', () => {
  const d = loadConfig({}).solvency;
  assert.equal(lowWaterFor(d, 1), 3n * 10n ** 17n);
  assert.equal(d.alertHoldMs, 300_000);
  const s = loadConfig({
    PATRON_SOLVENCY_FLOOR_WEI: '100,8453:10',
    PATRON_SOLVENCY_LOW_WATER_WEI: '1:5000,10:200',
    PATRON_SOLVENCY_ALERT_HOLD_SECONDS: '0',
  }).solvency;
  assert.equal(lowWaterFor(s, 1), 5000n, 'its own entry');
  assert.equal(lowWaterFor(s, 10), 200n);
  assert.equal(lowWaterFor(s, 8453), 30n, '3 × its own floor');
  assert.equal(lowWaterFor(s, 137), 300n, '3 × the global floor');
  assert.equal(s.alertHoldMs, 0);
  assert.equal(
    lowWaterFor(loadConfig({ PATRON_SOLVENCY_LOW_WATER_WEI: (10n ** 18n).toString() }).solvency, 5),
    10n ** 18n,
  );
});

test('a low-water mark not above its floor is refused, naming both', () => {
  assert.deepEqual(problemsOf({ PATRON_SOLVENCY_FLOOR_WEI: '100', PATRON_SOLVENCY_LOW_WATER_WEI: '100' }), [
    'PATRON_SOLVENCY_LOW_WATER_WEI for every other chain (100 wei) must be above PATRON_SOLVENCY_FLOOR_WEI for every other chain (100 wei): the low-water warning has to come before signing stops',
  ]);
  // A chain's own floor above the global low-water mark: that chain is named.
  assert.deepEqual(problemsOf({ PATRON_SOLVENCY_FLOOR_WEI: '100,8453:900', PATRON_SOLVENCY_LOW_WATER_WEI: '500' }), [
    'PATRON_SOLVENCY_LOW_WATER_WEI for chain 8453 (500 wei) must be above PATRON_SOLVENCY_FLOOR_WEI for chain 8453 (900 wei): the low-water warning has to come before signing stops',
  ]);
  assert.equal(problemsOf({ PATRON_SOLVENCY_FLOOR_WEI: '1:50', PATRON_SOLVENCY_LOW_WATER_WEI: '1:40' }).length, 1);
  assert.match(
    problemsOf({ PATRON_SOLVENCY_LOW_WATER_WEI: '1:x' })[0] ?? '',
    /PATRON_SOLVENCY_LOW_WATER_WEI must be wei/,
  );
});

test('the alert URL: parsed at start, private hosts allowed, credentials refused', () => {
  const secret = `whsec_${Buffer.alloc(24, 1).toString('base64')}`;
  const at = (url: string) => loadConfig({ PATRON_ALERT_WEBHOOK_URL: url, PATRON_ALERT_WEBHOOK_SECRET: secret });
  assert.equal(at('http://10.1.2.3:9093/api/v2/alerts').solvency.alert?.url, 'http://10.1.2.3:9093/api/v2/alerts');
  for (const bad of ['http://', 'ftp://10.1.2.3/', 'http://user:pw@10.1.2.3/', 'http//10.1.2.3']) {
    assert.throws(
      () => at(bad),
      /PATRON_ALERT_WEBHOOK_URL must be an absolute http or https URL without credentials/,
      bad,
    );
  }
});
