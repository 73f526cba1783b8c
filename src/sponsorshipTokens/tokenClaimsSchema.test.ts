import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jwtClaimsSchema, readCommonJwtClaims } from './tokenClaimsSchema.js';

const base = { sub: 'user-1', jti: 'j-1', exp: 1_800_000_000 };
const lower = `0x${'ab'.repeat(20)}`;

/** Payloads the fast reader must read exactly as the schema does, or hand to the schema (undefined). */
const payloads: Record<string, unknown>[] = [
  base,
  { ...base, nbf: 1_799_999_000, iat: 1_799_999_000 },
  { ...base, sender: lower, addr: lower.toUpperCase().replace('0X', '0x') },
  { ...base, extra: { nested: true } },
  { ...base, sub: '' },
  { ...base, sub: 'x'.repeat(256) },
  { ...base, sub: 'x'.repeat(257) },
  { ...base, jti: 7 },
  { ...base, exp: 1.5 },
  { ...base, exp: 2 ** 60 },
  { ...base, exp: '1800000000' },
  { ...base, nbf: 1.5 },
  { ...base, iat: null },
  { ...base, sender: '0x1234' },
  { ...base, sender: `${lower}00` },
  { ...base, addr: 42 },
  { ...base, maxCostWei: '1000' },
  { ...base, contracts: [lower] },
  { sub: 'user-1', exp: 1_800_000_000 },
];

test('the common claims read without zod are what the schema reads, and anything else goes to the schema', () => {
  let fast = 0;
  for (const p of payloads) {
    const quick = readCommonJwtClaims(p);
    const schema = jwtClaimsSchema.safeParse(p);
    if (quick === undefined) continue;
    fast++;
    assert.ok(schema.success, `the fast reader accepted what the schema refuses: ${JSON.stringify(p)}`);
    assert.deepEqual(
      Object.fromEntries(Object.entries(quick).filter(([, v]) => v !== undefined)),
      Object.fromEntries(Object.entries(schema.data).filter(([, v]) => v !== undefined)),
    );
  }
  // The common shapes take the fast path (the first four, and a sub of the longest length), nothing refused does.
  assert.equal(fast, 5);
  assert.equal(readCommonJwtClaims({ ...base, maxCostWei: '1' }), undefined);
});
