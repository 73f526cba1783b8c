import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alertShape } from './alertShape.js';

test('an MEE gas tank alert has a subject (one copy across instances, one PagerDuty incident) and a tank label', () => {
  const tank = '0x00000000000000000000000000000000000000AB';
  const shape = alertShape({ type: 'mee.tank.low', data: { chainId: 8453, tank, summary: 'Gas tank low' } });
  assert.equal(shape.subject, `mee.tank:8453:${tank.toLowerCase()}`);
  assert.deepEqual(shape.about, { chain_id: '8453', tank: tank.toLowerCase() });
  assert.equal(shape.alertname, 'PatronMeeTankLow');
  assert.equal(shape.severity, 'warning');
  assert.equal(shape.summary, 'Gas tank low');
  // Its silent clear resolves the same subject.
  const ok = alertShape({ type: 'mee.tank.ok', data: { chainId: 8453, tank } });
  assert.equal(ok.subject, shape.subject);
  assert.equal(ok.resolves, true);
  // A paymaster's alerts are as before.
  const pm = alertShape({ type: 'paymaster.solvency.low', data: { chainId: 1, paymaster: tank } });
  assert.equal(pm.subject, `paymaster.solvency:1:${tank.toLowerCase()}`);
});
