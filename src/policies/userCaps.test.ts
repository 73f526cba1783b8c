import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Address } from 'viem';
import { jwtClaimsSchema } from '../sponsorshipTokens/tokenClaimsSchema.js';
import { capCharges, capLedgerKey, checkPolicyRules, type SponsorshipFacts } from './policyRules.js';
import { CAP_RESETS, CAP_UNITS, type Policy, policyRulesSchema } from './policySchema.js';
import { MAX_USER_ID_LENGTH, userScopeKey } from './userScopeKey.js';

// Caps with scope `user` (issue 23): one end user, the sponsorship token's `sub`, across all of their wallets.

const SENDER: Address = '0x5555555555555555555555555555555555555555';
const OTHER: Address = '0x6666666666666666666666666666666666666666';
const NOW = Date.parse('2026-11-25T10:30:00Z');
const facts = (over: Partial<SponsorshipFacts> = {}): SponsorshipFacts => ({
  chainId: 8453,
  sender: SENDER,
  deploysAccount: false,
  callData: '0x',
  maxFeePerGas: 2_000_000_000n,
  worstCaseWei: 10n ** 15n,
  nowMs: NOW,
  nativeUsd: { microUsd: 3_000_000_000n, ageMs: 0 },
  user: 'alice',
  ...over,
});
const policy = (rules: unknown): Policy => ({
  id: '00000000-0000-4000-8000-000000000001',
  name: 'per person',
  active: true,
  rules: policyRulesSchema.parse(rules),
});
const keysOf = (p: Policy, f: SponsorshipFacts): string[] => {
  const r = capCharges({ policy: p, facts: f, maxPriceAgeMs: 60_000 });
  assert.ok('charges' in r, JSON.stringify('denial' in r ? r.denial : undefined));
  return r.charges.map((c) => c.key);
};

describe('the user scope in the rules schema', () => {
  test('a user cap in every unit and every cycle is accepted, beside sender and dApp caps of the same kind', () => {
    const caps = CAP_UNITS.flatMap((unit) =>
      CAP_RESETS.map((resets) => ({ scope: 'user', unit, limit: unit === 'usd' ? '1.5' : '10', resets })),
    );
    const parsed = policyRulesSchema.parse({
      caps: [...caps, { scope: 'sender', unit: 'ops', limit: '1' }, { scope: 'dapp', unit: 'ops', limit: '1' }],
    });
    assert.equal(caps.length, 15);
    assert.equal(parsed.caps?.filter((c) => c.scope === 'user').length, 15);
    assert.deepEqual(parsed.caps?.[0], { scope: 'user', unit: 'wei', resets: 'never', limit: 10n });
    assert.deepEqual(parsed.caps?.[5], { scope: 'user', unit: 'usd', resets: 'never', limit: 1_500_000n });
  });

  test('two user caps of one unit and cycle are refused, naming the duplicate', () => {
    const r = policyRulesSchema.safeParse({
      caps: [
        { scope: 'user', unit: 'usd', limit: '5', resets: 'daily' },
        { scope: 'user', unit: 'usd', limit: '50', resets: 'monthly' },
        { scope: 'user', unit: 'usd', limit: '7', resets: 'daily' },
      ],
    });
    assert.equal(r.success, false);
    assert.deepEqual(
      r.error?.issues.map((i) => [i.path.join('.'), i.message]),
      [['caps.2', 'duplicates caps.0 (same scope, unit and resets): keep one limit']],
    );
  });
});

describe('userRequired: a user cap and no user', () => {
  const p = policy({ caps: [{ scope: 'user', unit: 'ops', limit: '3', resets: 'daily' }] });

  test('the rules deny a request without a user (no token), or with an empty one, naming the rule and the fix', () => {
    for (const user of [undefined, '']) {
      const denial = checkPolicyRules(p, facts({ user }));
      assert.equal(denial?.rule, 'userRequired');
      assert.equal(denial?.policyId, p.id);
      assert.match(denial?.message ?? '', /caps each end user.*no sponsorship token.*must send a sponsorship token/);
      // The cap charges refuse too: a caller that skipped the rules still cannot reserve without a user.
      const r = capCharges({ policy: p, facts: facts({ user }), maxPriceAgeMs: 60_000 });
      assert.ok('denial' in r && r.denial.rule === 'userRequired');
    }
    assert.equal(checkPolicyRules(p, facts()), undefined, 'with a user it passes');
  });

  test('a policy without a user cap needs no user; a blocked sender without a user is told about the token first', () => {
    const plain = policy({ caps: [{ scope: 'sender', unit: 'ops', limit: '3' }] });
    assert.equal(checkPolicyRules(plain, facts({ user: undefined })), undefined);
    assert.ok('charges' in capCharges({ policy: plain, facts: facts({ user: undefined }), maxPriceAgeMs: 60_000 }));
    const blocked = policy({ senders: { block: [SENDER] }, caps: [{ scope: 'user', unit: 'ops', limit: '3' }] });
    assert.equal(checkPolicyRules(blocked, facts({ user: undefined }))?.rule, 'userRequired');
    assert.equal(checkPolicyRules(blocked, facts())?.rule, 'senderBlocked');
  });
});

describe('user cap keys', () => {
  const p = policy({
    caps: [
      { scope: 'user', unit: 'wei', limit: '1000', resets: 'daily' },
      { scope: 'sender', unit: 'wei', limit: '1000', resets: 'daily' },
      { scope: 'dapp', unit: 'wei', limit: '1000', resets: 'daily' },
    ],
  });

  test('one user through two senders shares the row; two users do not; none equals a sender or dApp key', () => {
    const [userA, senderA, dapp] = keysOf(p, facts());
    const [userB, senderB] = keysOf(p, facts({ sender: OTHER }));
    assert.equal(userA, userB, 'one person, two wallets: one row');
    assert.notEqual(senderA, senderB);
    const [otherUser] = keysOf(p, facts({ user: 'bob' }));
    assert.notEqual(otherUser, userA);
    assert.equal(new Set([userA, senderA, dapp, otherUser]).size, 4);
    assert.equal(userA, `${p.id}|user|wei|daily|alice|${Date.parse('2026-11-25T00:00:00Z')}`);
  });

  test('a user id holding the separator or the escape cannot forge another key', () => {
    const day = Date.parse('2026-11-25T00:00:00Z');
    const cap = { scope: 'user', unit: 'wei', resets: 'daily' } as const;
    const senderKey = capLedgerKey({
      policyId: p.id,
      cap: { ...cap, scope: 'sender' },
      scopeKey: SENDER,
      windowStart: day,
    });
    // An id built to read as the rest of a sender's key, or of another window, or of an escaped id.
    const forged = [
      `x|sender|wei|daily|${SENDER}`,
      `alice|${day}`,
      'alice~007c',
      'alice|',
      'alice~',
      '~007c',
      '|',
      'ALICE',
      'alice ',
      'a\u00e9',
      'a\ud800',
      'a\ufffd',
      'a\u{1f600}',
      'dapp',
    ];
    const keys = ['alice', ...forged].map((user) => {
      const [k] = keysOf(policy({ caps: [{ ...cap, limit: '1' }] }), facts({ user }));
      assert.ok(k !== undefined);
      assert.equal(k.split('|').length, 6, `${JSON.stringify(user)}: the key keeps its six parts`);
      return k;
    });
    assert.equal(new Set(keys).size, keys.length, 'every id its own key');
    assert.ok(!keys.includes(senderKey));
    assert.equal(userScopeKey('did:privy:abc-1_2.3+x@y'), 'did:privy:abc-1_2.3+x@y', 'common ids stay readable');
    assert.equal(userScopeKey('a|b~c d'), 'a~007cb~007ec~0020d');
  });

  test('the length is bounded by the verifiers’ sub bound; a longer id is never keyed', () => {
    assert.equal(MAX_USER_ID_LENGTH, 256);
    const claims = { jti: 'j', exp: 1 };
    assert.ok(jwtClaimsSchema.safeParse({ ...claims, sub: 'x'.repeat(MAX_USER_ID_LENGTH) }).success);
    assert.ok(!jwtClaimsSchema.safeParse({ ...claims, sub: 'x'.repeat(MAX_USER_ID_LENGTH + 1) }).success);
    // The longest id escapes to at most 5 characters each: the key stays well under an index entry's bound.
    assert.equal(userScopeKey('|'.repeat(MAX_USER_ID_LENGTH)).length, 5 * MAX_USER_ID_LENGTH);
    assert.throws(() => userScopeKey('x'.repeat(MAX_USER_ID_LENGTH + 1)), /1 to 256 characters, got 257/);
    assert.throws(() => userScopeKey(''), /1 to 256 characters, got 0/);
  });
});
