import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alertUrls, checkAlertDestination } from '../solvency/alertDestination.js';
import { ConfigError, loadConfig } from './config.js';

const problemsOf = (env: Record<string, string>): readonly string[] => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

const SLACK = 'https://hooks.slack.com/services/T0/B0/sEcReTpAtH';
const KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';

test('alert destinations: none by default; each alone; PagerDuty at its own endpoint unless told', () => {
  assert.deepEqual(loadConfig({}).alerts, { alertmanager: undefined, slack: undefined, pagerDuty: undefined });
  const c = loadConfig({
    PATRON_ALERTMANAGER_URL: 'http://10.1.2.3:9093/',
    PATRON_ALERT_SLACK_WEBHOOK_URL: SLACK,
    PATRON_ALERT_PAGERDUTY_ROUTING_KEY: KEY,
  });
  assert.deepEqual(c.alerts, {
    alertmanager: { url: 'http://10.1.2.3:9093' },
    slack: { url: SLACK },
    pagerDuty: { routingKey: KEY, url: 'https://events.pagerduty.com/v2/enqueue' },
  });
  assert.deepEqual(
    alertUrls(c).map((u) => u.setting),
    ['PATRON_ALERTMANAGER_URL', 'PATRON_ALERT_SLACK_WEBHOOK_URL', 'PATRON_ALERT_PAGERDUTY_URL'],
  );
  const eu = loadConfig({
    PATRON_ALERT_PAGERDUTY_ROUTING_KEY: KEY,
    PATRON_ALERT_PAGERDUTY_URL: 'https://events.eu.pagerduty.com/v2/enqueue',
  });
  assert.equal(eu.alerts.pagerDuty?.url, 'https://events.eu.pagerduty.com/v2/enqueue');
});

test('refused settings name the setting, never a secret value', () => {
  const problems = problemsOf({
    PATRON_ALERTMANAGER_URL: 'alertmanager:9093',
    PATRON_ALERT_SLACK_WEBHOOK_URL: 'https://user:sEcReT@hooks.slack.com/services/x',
    PATRON_ALERT_PAGERDUTY_ROUTING_KEY: 'sEcReT key',
  });
  assert.deepEqual(problems, [
    'PATRON_ALERTMANAGER_URL must be an absolute http or https URL without credentials',
    'PATRON_ALERT_SLACK_WEBHOOK_URL must be an absolute http or https URL without credentials',
    'PATRON_ALERT_PAGERDUTY_ROUTING_KEY must be an Events API v2 integration key (32 letters and digits)',
  ]);
  assert.deepEqual(problemsOf({ PATRON_ALERT_PAGERDUTY_URL: 'https://events.eu.pagerduty.com/v2/enqueue' }), [
    'PATRON_ALERT_PAGERDUTY_URL needs PATRON_ALERT_PAGERDUTY_ROUTING_KEY (the events are routed by it)',
  ]);
});

test("each URL's start-up check names its setting and the host alone", async () => {
  const refused = await checkAlertDestination({
    url: 'https://hooks.slack.invalid/services/T0/B0/sEcReTpAtH',
    setting: 'PATRON_ALERT_SLACK_WEBHOOK_URL',
    resolve: async (host) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    },
  });
  assert.deepEqual(refused, {
    ok: false,
    problem:
      'PATRON_ALERT_SLACK_WEBHOOK_URL: its host hooks.slack.invalid does not resolve (getaddrinfo ENOTFOUND hooks.slack.invalid); fix the URL or the DNS, or unset it to send no alerts',
  });
});
