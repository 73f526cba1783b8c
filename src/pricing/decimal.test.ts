import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decimalToFixed, fixedToDecimal, numberToE18 } from './decimal.js';

describe('decimalToFixed', () => {
  test('plain decimals convert exactly', () => {
    assert.equal(decimalToFixed('1.00', 18), 10n ** 18n);
    assert.equal(decimalToFixed('0.9998', 18), 999_800_000_000_000_000n);
    assert.equal(decimalToFixed('3000', 18), 3000n * 10n ** 18n);
    assert.equal(decimalToFixed('.5', 2), 50n);
    assert.equal(decimalToFixed('5.', 2), 500n);
  });

  test('exponent forms convert exactly', () => {
    assert.equal(decimalToFixed('1e-7', 18), 10n ** 11n);
    assert.equal(decimalToFixed('1.5e-8', 18), 15n * 10n ** 9n);
    assert.equal(decimalToFixed('2.5E+3', 18), 2500n * 10n ** 18n);
    assert.equal(decimalToFixed('1e21', 0), 10n ** 21n);
  });

  test('digits past the scale are truncated toward zero', () => {
    assert.equal(decimalToFixed('0.0000000000000000019', 18), 1n);
    assert.equal(decimalToFixed('1e-19', 18), 0n);
  });

  test('anything else is refused', () => {
    for (const bad of ['', '.', '-1', '1,5', 'abc', '1e', '0x10', '1e99999', 'NaN', 'Infinity']) {
      assert.equal(decimalToFixed(bad, 18), undefined, bad);
    }
  });
});

describe('fixedToDecimal and numberToE18', () => {
  test('canonical text has no exponent and no trailing zeros', () => {
    assert.equal(fixedToDecimal(10n * 10n ** 18n, 18), '10');
    assert.equal(fixedToDecimal(5n * 10n ** 17n, 18), '0.5');
    assert.equal(fixedToDecimal(0n, 18), '0');
    assert.equal(fixedToDecimal(1n, 18), '0.000000000000000001');
  });

  test('a JSON number converts from its shortest decimal text, not its binary value', () => {
    assert.equal(numberToE18(0.9998), 999_800_000_000_000_000n);
    assert.equal(numberToE18(0.1), 10n ** 17n);
    assert.equal(numberToE18(1e-7), 10n ** 11n);
    assert.equal(numberToE18(3456.78), 3_456_780_000_000_000_000_000n);
    assert.equal(numberToE18(-1), undefined);
    assert.equal(numberToE18(Number.NaN), undefined);
    assert.equal(numberToE18(Number.POSITIVE_INFINITY), undefined);
  });
});
