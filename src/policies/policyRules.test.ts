import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Address, encodeFunctionData, erc20Abi, parseAbi } from 'viem';
import { capCharges, checkPolicyRules, formatAmount, type SponsorshipFacts, selectPolicies } from './policyRules.js';
import { type Policy, policyRulesSchema } from './policySchema.js';

const SENDER: Address = '0x5555555555555555555555555555555555555555';
const OTHER: Address = '0x6666666666666666666666666666666666666666';
const TOKEN: Address = '0x1111111111111111111111111111111111111111';
const simpleAccount = parseAbi([
  'function execute(address dest, uint256 value, bytes func)',
  'function executeBatch(address[] dest, bytes[] func)',
]);
const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [OTHER, 1n] });
const approve = encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [OTHER, 1n] });
const execute = (to: Address, data: `0x${string}`) =>
  encodeFunctionData({ abi: simpleAccount, functionName: 'execute', args: [to, 0n, data] });

const NOW = Date.parse('2026-11-25T10:30:00Z');
const facts = (over: Partial<SponsorshipFacts> = {}): SponsorshipFacts => ({
  chainId: 8453,
  sender: SENDER,
  deploysAccount: false,
  callData: execute(TOKEN, transfer),
  maxFeePerGas: 2_000_000_000n,
  worstCaseWei: 10n ** 15n, // 0.001 ETH
  nowMs: NOW,
  nativeUsd: { microUsd: 3_000_000_000n, ageMs: 1_000 }, // 3000 USD
  account: { known: true, kind: 'simpleAccountV06' },
  ...over,
});
let n = 0;
const policy = (rules: unknown, over: Partial<Policy> = {}): Policy => ({
  id: `p${++n}`,
  name: `policy ${n}`,
  active: true,
  rules: policyRulesSchema.parse(rules),
  ...over,
});

describe('selectPolicies: all that apply must pass; none applying denies', () => {
  test('no policies: nothing to check (the signing bounds still apply)', () => {
    assert.deepEqual(selectPolicies({ policies: [], facts: facts() }), { policies: [] });
  });
  test('inactive, not yet started, ended, other chain: not applying; if none applies, denied', () => {
    const nowS = NOW / 1000;
    const off = [
      policy({}, { active: false }),
      policy({ startsAt: nowS + 1 }),
      policy({ endsAt: nowS }),
      policy({ chainIds: [1] }),
    ];
    const r = selectPolicies({ policies: off, facts: facts() });
    assert.ok('denial' in r);
    assert.equal(r.denial.rule, 'noPolicyApplies');
    const on = policy({ startsAt: nowS, endsAt: nowS + 1, chainIds: [8453] });
    assert.deepEqual(selectPolicies({ policies: [...off, on], facts: facts() }), { policies: [on] });
  });
  test('a named policy must exist and apply, and never skips the others that apply', () => {
    const a = policy({});
    const b = policy({ chainIds: [1] });
    const c = policy({ senders: { block: [SENDER] } });
    assert.deepEqual(selectPolicies({ policies: [a, b, c], facts: facts(), requestedId: a.id }), { policies: [a, c] });
    const unknown = selectPolicies({ policies: [a], facts: facts(), requestedId: 'nope' });
    assert.ok('denial' in unknown && unknown.denial.rule === 'policyNotFound');
    const elsewhere = selectPolicies({ policies: [a, b], facts: facts(), requestedId: b.id });
    assert.ok('denial' in elsewhere && elsewhere.denial.rule === 'noPolicyApplies');
    assert.equal('denial' in elsewhere && elsewhere.denial.policyId, b.id);
  });
});

describe('checkPolicyRules', () => {
  test('a policy without rules admits the request', () => {
    assert.equal(checkPolicyRules(policy({}), facts()), undefined);
  });
  test('senders: block list first, then the allowlist', () => {
    assert.equal(checkPolicyRules(policy({ senders: { block: [SENDER] } }), facts())?.rule, 'senderBlocked');
    assert.equal(checkPolicyRules(policy({ senders: { allow: [OTHER] } }), facts())?.rule, 'senderNotAllowed');
    assert.equal(checkPolicyRules(policy({ senders: { allow: [SENDER.toLowerCase()] } }), facts()), undefined);
    const both = policy({ senders: { allow: [SENDER], block: [SENDER] } });
    assert.equal(checkPolicyRules(both, facts())?.rule, 'senderBlocked');
  });
  test('deployment and the gas-price ceiling', () => {
    const noDeploy = policy({ sponsorDeployment: false });
    assert.equal(checkPolicyRules(noDeploy, facts({ deploysAccount: true }))?.rule, 'deploymentNotSponsored');
    assert.equal(checkPolicyRules(noDeploy, facts()), undefined);
    const ceiling = policy({ maxFeePerGas: '1000000000' });
    const d = checkPolicyRules(ceiling, facts());
    assert.deepEqual([d?.rule, d?.value, d?.limit], ['maxFeePerGas', '2000000000', '1000000000']);
    assert.equal(checkPolicyRules(ceiling, facts({ maxFeePerGas: 1_000_000_000n })), undefined);
  });
  test('contracts and methods, every call of a batch; an undecodable call fails closed naming the selector', () => {
    const p = policy({ contracts: [{ address: TOKEN, selectors: ['0xa9059cbb'] }] });
    assert.equal(checkPolicyRules(p, facts()), undefined);
    const m = checkPolicyRules(p, facts({ callData: execute(TOKEN, approve) }));
    assert.deepEqual([m?.rule, m?.selector, m?.contract], ['methodNotAllowed', '0x095ea7b3', TOKEN]);
    const c = checkPolicyRules(p, facts({ callData: execute(OTHER, transfer) }));
    assert.deepEqual([c?.rule, c?.contract], ['contractNotAllowed', OTHER]);
    const batch = encodeFunctionData({
      abi: simpleAccount,
      functionName: 'executeBatch',
      args: [
        [TOKEN, TOKEN],
        [transfer, approve],
      ],
    });
    assert.equal(checkPolicyRules(p, facts({ callData: batch }))?.rule, 'methodNotAllowed');
    const u = checkPolicyRules(p, facts({ callData: transfer }));
    assert.deepEqual([u?.rule, u?.selector], ['undecodableCall', '0xa9059cbb']);
    // A plain transfer to an allowed contract whose methods are listed: no method, not allowed.
    assert.equal(checkPolicyRules(p, facts({ callData: execute(TOKEN, '0x') }))?.rule, 'methodNotAllowed');
    // Any method on a contract listed without selectors.
    assert.equal(
      checkPolicyRules(policy({ contracts: [{ address: TOKEN }] }), facts({ callData: execute(TOKEN, approve) })),
      undefined,
    );
  });
  test('a contract allowlist matches only a sender whose account Patron knows, decoded as that kind', () => {
    const p = policy({ contracts: [{ address: TOKEN, selectors: ['0xa9059cbb'] }] });
    const codeHash = '0xaaa52c8cc8a0e3fd27ce756cc6b4e70c51423e9b597b11f32d3e49f8b1fc890d';
    const unknown = checkPolicyRules(
      p,
      facts({ account: { known: false, found: { reason: 'account code Patron does not know', codeHash } } }),
    );
    assert.deepEqual(
      [unknown?.rule, unknown?.sender, unknown?.codeHash, unknown?.policyId],
      ['unknownAccount', SENDER, codeHash, p.id],
    );
    assert.match(unknown?.message ?? '', /account code Patron does not know/);
    // Not looked up at all (no resolver): unknown too, fail closed.
    const { account: _, ...noAccount } = facts();
    assert.equal(checkPolicyRules(p, noAccount)?.rule, 'unknownAccount');
    // A policy without an allowlist does not care what the sender is.
    assert.equal(checkPolicyRules(policy({}), noAccount), undefined);
    // The same execute() from a Safe is not a Safe method: the kind chooses the decoder.
    const safe = checkPolicyRules(p, facts({ account: { known: true, kind: 'safe4337' } }));
    assert.deepEqual([safe?.rule, safe?.selector], ['undecodableCall', '0xb61d27f6']);
    assert.match(safe?.message ?? '', /not a method a safe4337 account executes/);
  });
});

describe('capCharges', () => {
  test('dApp and sender caps in wei, usd and ops, each in its window and keyed by scope', () => {
    const p = policy({
      caps: [
        { scope: 'dapp', unit: 'wei', limit: '1000000000000000000', resets: 'daily' },
        { scope: 'sender', unit: 'usd', limit: '5', resets: 'monthly' },
        { scope: 'sender', unit: 'ops', limit: '3' },
      ],
    });
    const r = capCharges({ policy: p, facts: facts(), maxPriceAgeMs: 60_000 });
    assert.ok('charges' in r);
    assert.deepEqual(
      r.charges.map((c) => [c.scope, c.unit, c.amount, c.limit, c.window.start, c.window.end]),
      [
        ['dapp', 'wei', 10n ** 15n, 10n ** 18n, Date.parse('2026-11-25T00:00:00Z'), Date.parse('2026-11-26T00:00:00Z')],
        [
          'sender',
          'usd',
          3_000_000n,
          5_000_000n,
          Date.parse('2026-11-01T00:00:00Z'),
          Date.parse('2026-12-01T00:00:00Z'),
        ],
        ['sender', 'ops', 1n, 3n, 0, undefined],
      ],
    );
    const keys = r.charges.map((c) => c.key);
    assert.equal(new Set(keys).size, 3);
    assert.ok(keys[1]?.includes(SENDER) && !keys[0]?.includes(SENDER));
    // Another sender counts apart; the dApp-wide row is shared.
    const other = capCharges({ policy: p, facts: facts({ sender: OTHER }), maxPriceAgeMs: 60_000 });
    assert.ok('charges' in other);
    assert.equal(other.charges[0]?.key, keys[0]);
    assert.notEqual(other.charges[1]?.key, keys[1]);
  });
  test('usd rounds up; a per-op cap denies above it without any ledger', () => {
    const p = policy({ caps: [{ scope: 'op', unit: 'usd', limit: '2.999999' }] });
    const r = capCharges({ policy: p, facts: facts(), maxPriceAgeMs: 60_000 });
    assert.ok('denial' in r);
    assert.deepEqual(
      [r.denial.rule, r.denial.scope, r.denial.value, r.denial.limit],
      ['cap', 'op', '3000000', '2999999'],
    );
    assert.match(r.denial.message, /3\.000000 USD is above policy .* per-op cap of 2\.999999 USD/);
    const tiny = capCharges({ policy: p, facts: facts({ worstCaseWei: 1n }), maxPriceAgeMs: 60_000 });
    assert.deepEqual(tiny, { charges: [] }, '1 wei rounds up to 1 micro-USD, within the cap');
  });
  test('a USD cap without a fresh price denies; wei and ops caps need none', () => {
    const usd = policy({ caps: [{ scope: 'dapp', unit: 'usd', limit: '100' }] });
    const stale = capCharges({
      policy: usd,
      facts: facts({ nativeUsd: { microUsd: 1n, ageMs: 61_000 } }),
      maxPriceAgeMs: 60_000,
    });
    assert.ok('denial' in stale && stale.denial.rule === 'priceUnavailable');
    const none = capCharges({ policy: usd, facts: facts({ nativeUsd: undefined }), maxPriceAgeMs: 60_000 });
    assert.ok('denial' in none && none.denial.rule === 'priceUnavailable');
    const ops = policy({ caps: [{ scope: 'dapp', unit: 'ops', limit: '1' }] });
    assert.ok('charges' in capCharges({ policy: ops, facts: facts({ nativeUsd: undefined }), maxPriceAgeMs: 60_000 }));
  });
  test('formatAmount', () => {
    assert.equal(formatAmount(1_500_000n, 'usd'), '1.500000 USD');
    assert.equal(formatAmount(5n, 'usd'), '0.000005 USD');
    assert.equal(formatAmount(1n, 'ops'), '1 op');
    assert.equal(formatAmount(7n, 'wei'), '7 wei');
  });
});
