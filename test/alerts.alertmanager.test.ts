import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AlertFanOut } from '../src/solvency/alerts/alertFanOut.js';
import { buildAlertSender } from '../src/solvency/alerts/buildAlertSender.js';
import { type Alertmanager, type GettableAlert, startAlertmanager } from './helpers/alertmanager.js';
import { testConfig } from './helpers/testContext.js';

/**
 * The operator alerts into the REAL Alertmanager (Debian's 0.25, started here on 127.0.0.1), read back through its own
 * `GET /api/v2/alerts`: what it stores is what its routes and receivers would see. Patron's signed webhook body, which
 * the docs used to point at Alertmanager, is refused by it (the 400).
 */
const PAYMASTER = '0x00000000000000000000000000000000000A11CE';
const silent = { info() {}, warn() {} };

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const end = Date.now() + 5000;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('operator alerts to Alertmanager', () => {
  let am: Alertmanager;
  let sender: AlertFanOut;
  before(async () => {
    am = await startAlertmanager();
    const base = testConfig();
    const built = buildAlertSender({
      config: {
        ...base,
        publicUrl: 'https://patron.example.com',
        alerts: { alertmanager: { url: am.url }, slack: undefined, pagerDuty: undefined },
      },
      claims: undefined,
      logger: silent,
      now: Date.now,
      retry: { retries: 0 },
    });
    assert.ok(built !== undefined);
    sender = built;
  });
  after(async () => {
    sender?.close();
    await am?.close();
  });

  const mine = (alerts: GettableAlert[], alertname: string) => alerts.filter((a) => a.labels.alertname === alertname);

  test("Patron's signed webhook body is not Alertmanager's: it answers 400", async () => {
    const res = await fetch(`${am.url}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'paymaster.solvency.halted', timestamp: new Date().toISOString(), data: {} }),
    });
    assert.equal(res.status, 400);
    assert.match(await res.text(), /PostableAlerts/);
  });

  test('halted fires with labels and annotations; recovered ends it (no longer active)', async () => {
    const data = {
      chainId: 8453,
      paymaster: PAYMASTER,
      depositWei: '500000000000000000',
      requiredWei: '1000000000000000000',
      reason: 'below the floor',
    };
    assert.equal(await sender.send({ type: 'paymaster.solvency.halted', data }), true);
    const [halted] = await until(
      async () => mine(await am.alerts(), 'PatronPaymasterSolvencyHalted'),
      (a) => a.length === 1 && a[0]?.status.state === 'active',
      'the halted alert, active',
    );
    assert.deepEqual(halted?.labels, {
      alertname: 'PatronPaymasterSolvencyHalted',
      severity: 'critical',
      service: 'patron',
      chain_id: '8453',
      paymaster: PAYMASTER.toLowerCase(),
    });
    assert.equal(
      halted?.annotations.summary,
      `Signing halted for paymaster ${PAYMASTER.toLowerCase()} on chain 8453: deposit 0.5 ETH does not cover 1 ETH required`,
    );
    assert.match(halted?.annotations.description ?? '', /^chainId: 8453\npaymaster: 0x0+A11CE\ndepositWei: 5/m);
    assert.equal(halted?.generatorURL, 'https://patron.example.com/dashboard/');
    // Posted once: it holds a day unless resolved, not Alertmanager's 5-minute resolve_timeout.
    assert.ok(Date.parse(halted?.endsAt ?? '') - Date.now() > 23 * 3600 * 1000);

    assert.equal(await sender.send({ type: 'paymaster.solvency.recovered', data: { ...data, depositWei: '9' } }), true);
    await until(
      async () => mine(await am.alerts(), 'PatronPaymasterSolvencyHalted'),
      (a) => a.length === 0,
      'the halted alert resolved',
    );
    assert.deepEqual(
      sender.deliveries().filter((d) => d.destination === 'alertmanager'),
      [
        { destination: 'alertmanager', outcome: 'delivered', count: 2 },
        { destination: 'alertmanager', outcome: 'retried', count: 0 },
        { destination: 'alertmanager', outcome: 'failed', count: 0 },
      ],
    );
  });

  test('any type renders: alertname from the type, severity from the table, data.severity, or warning', async () => {
    const about = { chainId: 10, paymaster: PAYMASTER };
    await sender.send({ type: 'paymaster.deposit.topped_up', data: { ...about, amountWei: '1' } });
    await sender.send({ type: 'paymaster.deposit.topup_failed', data: { ...about, reason: 'keeper has no funds' } });
    await sender.send({ type: 'paymaster.deposit.keeper_stalled', data: { ...about, severity: 'error' } });
    await sender.send({ type: 'patron.config.reloaded', data: { summary: 'configuration reloaded' } });
    const alerts = await until(
      () => am.alerts(),
      (a) => a.filter((x) => x.status.state === 'active').length >= 4,
      'the four alerts',
    );
    const by = (name: string) => mine(alerts, name)[0];
    assert.equal(by('PatronPaymasterDepositToppedUp')?.labels.severity, 'info');
    assert.equal(by('PatronPaymasterDepositTopupFailed')?.labels.severity, 'warning');
    assert.equal(
      by('PatronPaymasterDepositTopupFailed')?.annotations.summary,
      `paymaster.deposit.topup_failed: paymaster ${PAYMASTER.toLowerCase()} on chain 10`,
    );
    assert.equal(by('PatronPaymasterDepositKeeperStalled')?.labels.severity, 'error');
    assert.deepEqual(by('PatronPatronConfigReloaded')?.labels, {
      alertname: 'PatronPatronConfigReloaded',
      severity: 'warning',
      service: 'patron',
    });
    assert.equal(by('PatronPatronConfigReloaded')?.annotations.summary, 'configuration reloaded');
  });

  test('a low warning that re-armed without news (silent ok) ends the alert in Alertmanager', async () => {
    const data = { chainId: 1, paymaster: PAYMASTER, headroomWei: '1', lowWaterWei: '3' };
    await sender.send({ type: 'paymaster.solvency.low', data });
    await until(
      async () => mine(await am.alerts(), 'PatronPaymasterSolvencyLow'),
      (a) => a.some((x) => x.labels.chain_id === '1' && x.labels.severity === 'warning'),
      'the low alert',
    );
    await sender.send({ type: 'paymaster.solvency.ok', data, silent: true });
    await until(
      async () => mine(await am.alerts(), 'PatronPaymasterSolvencyLow').filter((x) => x.labels.chain_id === '1'),
      (a) => a.length === 0,
      'the low alert ended',
    );
  });
});
