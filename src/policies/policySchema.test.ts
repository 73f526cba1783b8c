import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { policyRulesSchema, usdToMicros } from './policySchema.js';

const issues = (input: unknown) => {
  const r = policyRulesSchema.safeParse(input);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('policyRulesSchema', () => {
  test('every rule, parsed to typed values (checksummed addresses, lower-case selectors, bigints)', () => {
    const r = policyRulesSchema.parse({
      startsAt: 100,
      endsAt: 200,
      chainIds: [8453],
      senders: { allow: ['0xabcdefabcdefabcdefabcdefabcdefabcdefabcd'] },
      contracts: [{ address: '0x1111111111111111111111111111111111111111', selectors: ['0xA9059CBB'] }],
      sponsorDeployment: false,
      maxFeePerGas: '30000000000',
      caps: [
        { scope: 'dapp', unit: 'usd', limit: '100.5', resets: 'daily' },
        { scope: 'sender', unit: 'ops', limit: '10' },
        { scope: 'op', unit: 'wei', limit: '1000000000000000' },
      ],
    });
    assert.equal(r.senders?.allow?.[0], '0xABcdEFABcdEFabcdEfAbCdefabcdeFABcDEFabCD');
    assert.deepEqual(r.contracts?.[0]?.selectors, ['0xa9059cbb']);
    assert.equal(r.maxFeePerGas, 30_000_000_000n);
    assert.deepEqual(r.caps, [
      { scope: 'dapp', unit: 'usd', resets: 'daily', limit: 100_500_000n },
      { scope: 'sender', unit: 'ops', resets: 'never', limit: 10n },
      { scope: 'op', unit: 'wei', resets: 'never', limit: 10n ** 15n },
    ]);
    assert.deepEqual(policyRulesSchema.parse({}), {});
  });

  test('bad values are refused, each naming its place', () => {
    assert.deepEqual(issues({ caps: [{ scope: 'dapp', unit: 'usd', limit: '1.1234567' }] }), [
      'caps.0.limit: expected USD as a decimal string with at most 6 decimals',
    ]);
    assert.deepEqual(issues({ caps: [{ scope: 'dapp', unit: 'wei', limit: '-1' }] }), [
      'caps.0.limit: expected a non-negative integer as a decimal string',
    ]);
    assert.deepEqual(issues({ caps: [{ scope: 'op', unit: 'ops', limit: '1' }] }), [
      'caps.0.unit: a per-op cap is in wei or usd (one op is one op)',
    ]);
    assert.deepEqual(issues({ caps: [{ scope: 'op', unit: 'wei', limit: '1', resets: 'daily' }] }), [
      'caps.0.resets: a per-op cap does not reset',
    ]);
    assert.deepEqual(issues({ startsAt: 5, endsAt: 5 }), ['endsAt: startsAt must be before endsAt']);
    assert.deepEqual(issues({ contracts: [{ address: '0x12' }] }), [
      'contracts.0.address: expected a 20-byte 0x address',
    ]);
    assert.deepEqual(issues({ surprise: true }).length, 1);
  });

  test('usdToMicros is exact', () => {
    assert.equal(usdToMicros('0'), 0n);
    assert.equal(usdToMicros('1.5'), 1_500_000n);
    assert.equal(usdToMicros('999999999999.999999'), 999_999_999_999_999_999n);
  });
});

test('two caps of one scope, unit and cycle are refused, naming the duplicate', () => {
  const r = policyRulesSchema.safeParse({
    caps: [
      { scope: 'dapp', unit: 'wei', limit: '10', resets: 'daily' },
      { scope: 'dapp', unit: 'wei', limit: '20', resets: 'weekly' },
      { scope: 'dapp', unit: 'wei', limit: '30', resets: 'daily' },
    ],
  });
  assert.equal(r.success, false);
  assert.deepEqual(
    r.error?.issues.map((i) => [i.path.join('.'), i.message]),
    [['caps.2', 'duplicates caps.0 (same scope, unit and resets): keep one limit']],
  );
});
