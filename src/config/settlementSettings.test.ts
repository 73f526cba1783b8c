import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from './config.js';

test('settlement settings: defaults, values, and a bad value named', () => {
  assert.deepEqual(loadConfig({}).settlement, {
    enabled: true,
    confirmations: 5,
    pollMs: 2000,
    expiryGraceIgnored: false,
    maxBlockRange: 2000,
  });
  const set = loadConfig({
    PATRON_SETTLEMENT: 'false',
    PATRON_SETTLEMENT_CONFIRMATIONS: '0',
    PATRON_SETTLEMENT_POLL_MS: '500',
    PATRON_SETTLEMENT_EXPIRY_GRACE_SECONDS: '60',
    PATRON_SETTLEMENT_MAX_BLOCK_RANGE: '500',
  }).settlement;
  assert.deepEqual(set, {
    enabled: false,
    confirmations: 0,
    pollMs: 500,
    expiryGraceIgnored: true,
    maxBlockRange: 500,
  });
  for (const [name, value] of [
    ['PATRON_SETTLEMENT_CONFIRMATIONS', '-1'],
    ['PATRON_SETTLEMENT_POLL_MS', '10'],
    ['PATRON_SETTLEMENT_MAX_BLOCK_RANGE', '0'],
    ['PATRON_SETTLEMENT', 'maybe'],
  ] as const) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (err) => err instanceof ConfigError && err.problems.some((p) => p.startsWith(name)),
      `${name}=${value}`,
    );
  }
});
