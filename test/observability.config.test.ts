import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config/config.js';

/** PATRON_METRICS* and PATRON_SOLVENCY* / PATRON_ALERT_WEBHOOK_* as loadConfig reads them. */
const base = { PATRON_DATA_DIR: '/nonexistent-patron-test', PATRON_DEV_CHAIN: 'false' };
const problems = (env: Record<string, string>) => {
  try {
    loadConfig({ ...base, ...env });
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return [...err.problems];
  }
};

test('metrics: off by default; on needs a port or a token; the token is checked', () => {
  assert.deepEqual(loadConfig(base).metrics, { enabled: false });
  assert.deepEqual(problems({ PATRON_METRICS: 'on' }), [
    'PATRON_METRICS=on needs PATRON_METRICS_PORT (a separate listener) or PATRON_METRICS_TOKEN (on the main port)',
  ]);
  assert.match(problems({ PATRON_METRICS: 'on', PATRON_METRICS_TOKEN: 'short' })[0] ?? '', /at least 16/);
  assert.match(problems({ PATRON_METRICS: 'maybe' })[0] ?? '', /PATRON_METRICS must be on or off/);
  const token = 'x'.repeat(20);
  assert.deepEqual(loadConfig({ ...base, PATRON_METRICS: 'on', PATRON_METRICS_TOKEN: token }).metrics, {
    enabled: true,
    port: undefined,
    host: '127.0.0.1',
    token,
  });
  assert.deepEqual(loadConfig({ ...base, PATRON_METRICS: 'on', PATRON_METRICS_PORT: '9464' }).metrics, {
    enabled: true,
    port: 9464,
    host: '127.0.0.1',
    token: undefined,
  });
});

test('solvency: defaults, margin, floors per chain, the alert secret', () => {
  const d = loadConfig(base).solvency;
  assert.equal(d.enabled, true);
  assert.equal(d.intervalMs, 15_000);
  assert.equal(d.marginBps, 15_000n);
  assert.equal(d.floorWei, 10n ** 17n);
  assert.equal(d.alert, undefined);
  const s = loadConfig({
    ...base,
    PATRON_SOLVENCY: 'false',
    PATRON_SOLVENCY_MARGIN: '1.25',
    PATRON_SOLVENCY_FLOOR_WEI: '5,8453:7',
    PATRON_ALERT_WEBHOOK_URL: 'https://ops.example.com/alerts',
    PATRON_ALERT_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
  }).solvency;
  assert.equal(s.enabled, false);
  assert.equal(s.marginBps, 12_500n);
  assert.equal(s.floorWei, 5n);
  assert.deepEqual([...s.floorWeiByChain], [[8453, 7n]]);
  assert.equal(s.alert?.url, 'https://ops.example.com/alerts');
  assert.match(problems({ PATRON_SOLVENCY_MARGIN: '0.9' })[0] ?? '', /PATRON_SOLVENCY_MARGIN/);
  assert.match(problems({ PATRON_SOLVENCY_FLOOR_WEI: '8453:abc' })[0] ?? '', /PATRON_SOLVENCY_FLOOR_WEI/);
  assert.match(problems({ PATRON_ALERT_WEBHOOK_URL: 'https://ops.example.com/a' })[0] ?? '', /SECRET is required/);
  assert.match(problems({ PATRON_ALERT_WEBHOOK_SECRET: 'nope' })[0] ?? '', /whsec_/);
});
