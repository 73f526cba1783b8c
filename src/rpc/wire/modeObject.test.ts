import assert from 'node:assert/strict';
import { test } from 'node:test';
import { modeObjectSchema } from './modeObject.js';

test('mode objects: SPONSORSHIP means SPONSORED, case-insensitive, webhookData from either place, defaults', () => {
  assert.equal(modeObjectSchema.parse({ mode: 'sponsorship' }).mode, 'SPONSORED');
  assert.equal(modeObjectSchema.parse({}).mode, undefined);
  assert.deepEqual(modeObjectSchema.parse({}).webhookData, {});
  assert.deepEqual(modeObjectSchema.parse({ sponsorshipInfo: { webhookData: { num: 2 } } }).webhookData, { num: 2 });
  assert.deepEqual(modeObjectSchema.parse({ webhookData: { num: 4 } }).webhookData, { num: 4 });
  const tolerant = modeObjectSchema.parse({
    mode: 'SPONSORED',
    tokenInfo: {},
    expiryDuration: 6000,
    sponsorshipInfo: { smartAccountInfo: { name: 'BICONOMY', version: '2.0.0' } },
  });
  assert.equal(tolerant.expiryDuration, 6000);
  assert.equal(modeObjectSchema.safeParse({ mode: 'FREE' }).success, false);
  assert.equal(modeObjectSchema.safeParse({ webhookData: [1] }).success, false);
  assert.equal(modeObjectSchema.safeParse({ expiryDuration: -5 }).success, false);
});
