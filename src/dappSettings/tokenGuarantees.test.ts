import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CAP_REQUIRED,
  NO_TOKEN_GUARANTEES,
  tokenGuaranteesColumn,
  tokenGuaranteesSchema,
  tokenGuaranteesToColumn,
} from './tokenGuarantees.js';

const problem = (input: unknown): string => {
  const r = tokenGuaranteesSchema.safeParse(input);
  assert.equal(r.success, false, `expected ${JSON.stringify(input)} to be refused`);
  return r.error?.issues[0]?.message ?? '';
};

const CAP = { limitWei: '50000000000000000', resets: 'daily' } as const;

describe('token guarantees: the owner’s document', () => {
  test('off by default: the column’s default and an empty document mean off, with no cap', () => {
    assert.deepEqual(tokenGuaranteesColumn('{}'), { enabled: false });
    assert.equal(tokenGuaranteesColumn('{}'), NO_TOKEN_GUARANTEES);
    assert.equal(Object.isFrozen(NO_TOKEN_GUARANTEES), true);
  });

  test('enabled with a cap in every window a policy cap knows', () => {
    for (const resets of ['hourly', 'daily', 'weekly', 'monthly', 'never'] as const) {
      const doc = { enabled: true, cap: { limitWei: '1', resets } };
      assert.deepEqual(tokenGuaranteesSchema.parse(doc), doc);
    }
  });

  test('enabling without a cap is refused, saying a cap is required and what to send', () => {
    assert.equal(problem({ enabled: true }), CAP_REQUIRED);
    assert.match(CAP_REQUIRED, /requires a cap \(no unbounded guarantee\)/);
  });

  test('a cap that is not a positive wei amount, an unknown window or key, a missing enabled: each named', () => {
    assert.match(problem({ enabled: true, cap: { ...CAP, limitWei: '0' } }), /^limitWei must be a positive whole/);
    assert.match(problem({ enabled: true, cap: { ...CAP, limitWei: '0.5' } }), /^limitWei must be a positive whole/);
    assert.match(problem({ enabled: true, cap: { ...CAP, limitWei: 5 } }), /^limitWei must be a decimal string/);
    assert.match(problem({ enabled: true, cap: { ...CAP, limitWei: `1${'0'.repeat(78)}` } }), /^limitWei/);
    assert.equal(
      problem({ enabled: true, cap: { ...CAP, resets: 'yearly' } }),
      'resets must be one of hourly, daily, weekly, monthly, never',
    );
    assert.match(problem({ enabled: true, cap: { ...CAP, unit: 'usd' } }), /^unit is not a known key here/);
    assert.match(problem({ enabled: true, cap: CAP, max: '1' }), /^max is not a known key here/);
    assert.equal(problem({ cap: CAP }), 'enabled must be true or false');
    assert.equal(problem({ enabled: 'yes' }), 'enabled must be true or false');
    assert.match(problem([]), /^token guarantees must be an object/);
  });

  test('off with a cap keeps the cap (turned on again, it applies as it was); off without one is stored as the default', () => {
    const kept = { enabled: false, cap: CAP };
    assert.deepEqual(tokenGuaranteesColumn(tokenGuaranteesToColumn(tokenGuaranteesSchema.parse(kept))), kept);
    assert.equal(tokenGuaranteesToColumn({ enabled: false }), '{}');
    const on = { enabled: true, cap: CAP };
    assert.deepEqual(tokenGuaranteesColumn(tokenGuaranteesToColumn(on)), on);
  });
});
