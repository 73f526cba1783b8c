import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { modeObjectSchema, parseModeObjectFast, parseUserOperationAndModeFast } from './modeObject.js';
import { parsePartialUserOperationFast, partialUserOperationSchema } from './userOperation.js';

const base = {
  sender: '0x1234567890AbcdEF1234567890aBcdef12345678',
  nonce: '0x00',
  initCode: '0x',
  callData: '0xB61D27F6',
  maxFeePerGas: '2000000000',
  maxPriorityFeePerGas: '0x3B9ACA00',
};

test('every quantity encoding real clients send parses to the same bigint', () => {
  for (const nonce of ['0x00', '0x0', '0', 0, '0x']) {
    assert.equal(partialUserOperationSchema.parse({ ...base, nonce }).nonce, 0n, String(nonce));
  }
  for (const gas of ['100000', '0x186a0', 100000]) {
    assert.equal(partialUserOperationSchema.parse({ ...base, callGasLimit: gas }).callGasLimit, 100000n);
  }
  const op = partialUserOperationSchema.parse(base);
  assert.equal(op.maxFeePerGas, 2_000_000_000n);
  assert.equal(op.maxPriorityFeePerGas, 1_000_000_000n);
  assert.equal(op.callData, '0xb61d27f6', 'bytes are lower-cased');
  assert.equal(op.sender, '0x1234567890AbcdEF1234567890aBcdef12345678', 'addresses are checksummed');
  assert.equal(op.signature, '0x');
});

test('absent and zero gas limits both mean "not given" (viem stubs send 0x0)', () => {
  const op = partialUserOperationSchema.parse({ ...base, callGasLimit: '0x0', verificationGasLimit: '0' });
  assert.equal(op.callGasLimit, undefined);
  assert.equal(op.verificationGasLimit, undefined);
  assert.equal(op.preVerificationGas, undefined);
});

test('a v0.7-shaped op (factory + factoryData, no initCode/signature) becomes a v0.6 initCode', () => {
  const { initCode: _omit, ...rest } = base;
  const op = partialUserOperationSchema.parse({
    ...rest,
    factory: '0xAAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaa',
    factoryData: '0x5FBFB9CF',
    paymasterVerificationGasLimit: '0',
  });
  assert.equal(op.initCode, '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa5fbfb9cf');
});

test('a paymasterAndData sent back by the client is ignored', () => {
  const op = partialUserOperationSchema.parse({ ...base, paymasterAndData: '0xdeadbeef' });
  assert.ok(!('paymasterAndData' in op));
});

const bad: [string, Record<string, unknown>, RegExp][] = [
  ['a short address', { sender: '0x1234' }, /20-byte hex address/],
  ['a negative number', { nonce: -1 }, /quantity/],
  ['a fractional number', { nonce: 1.5 }, /quantity/],
  ['a value over uint256', { nonce: `0x1${'0'.repeat(64)}` }, /quantity/],
  ['odd-length hex bytes', { callData: '0xabc' }, /even number of digits/],
  ['non-hex bytes', { callData: 'hello' }, /0x-prefixed hex/],
  ['missing callData', { callData: undefined }, /hex string/],
];
for (const [name, patch, message] of bad) {
  test(`refuses ${name}`, () => {
    const r = partialUserOperationSchema.safeParse({ ...base, ...patch });
    assert.equal(r.success, false);
    assert.match(r.error?.issues[0]?.message ?? '', message);
  });
}

/** The contract of the hand-written fast parsers (scalars.ts): exactly the schema's value, or defer to it. */
describe('the fast path returns exactly what the schemas return, or defers to them', () => {
  // Values a client could put in any field: valid and invalid, of every JSON type, with the edge cases of each rule.
  const pool: unknown[] = [
    undefined,
    null,
    true,
    0,
    -0,
    1,
    100000,
    -1,
    1.5,
    2 ** 53,
    Number.MAX_SAFE_INTEGER,
    '',
    '0',
    '0x',
    '0x0',
    '0x00',
    ' 0x10 ',
    '0X10',
    '0x186a0',
    '0x186A0',
    '100000',
    '-1',
    '1e3',
    `0x${'f'.repeat(64)}`,
    `0x1${'0'.repeat(64)}`,
    '9'.repeat(78),
    '9'.repeat(79),
    '0xabc',
    '0xB61D27F6',
    '0xzz',
    'hello',
    '0x1234567890AbcdEF1234567890aBcdef12345678',
    '0x1234567890abcdef1234567890abcdef12345678',
    '0x1234567890ABCDEF1234567890ABCDEF12345678',
    '1234567890abcdef1234567890abcdef12345678',
    '0x1234',
    [],
    ['0x00'],
    {},
    { num: 2 },
  ];
  const modePool: unknown[] = [...pool, 'SPONSORED', 'sponsored', ' Sponsorship ', 'ERC20', 'erc20', 'FREE'];
  const recordPool: unknown[] = [
    ...pool,
    { num: 2, nested: { a: [1] } },
    JSON.parse('{"__proto__": {"polluted": true}, "b": 1}'),
    JSON.parse('{"constructor": {"prototype": 1}}'),
    { 2: 'two', 1: 'one', a: 'a' },
  ];
  const opFields = Object.keys({ ...base, callGasLimit: 0, verificationGasLimit: 0, preVerificationGas: 0 }).concat([
    'factory',
    'factoryData',
    'paymasterAndData',
    'signature',
    'extra',
  ]);

  /** A deterministic PRNG (mulberry32), so a failure reproduces. */
  function rng(seed: number) {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

  function agrees(
    schema: { safeParse(v: unknown): { success: boolean; data?: unknown } },
    fast: unknown,
    input: unknown,
  ) {
    const r = schema.safeParse(input);
    if (fast === undefined) return r.success ? 'deferred' : 'refused';
    assert.equal(r.success, true, `fast path accepted what the schema refuses: ${JSON.stringify(input)}`);
    assert.deepStrictEqual(fast, r.data, JSON.stringify(input));
    return 'fast';
  }

  test('user operations: every single-field change, and random combinations', () => {
    const counts = { fast: 0, deferred: 0, refused: 0 };
    const inputs: Record<string, unknown>[] = [];
    for (const field of opFields) for (const value of pool) inputs.push({ ...base, [field]: value });
    const r = rng(7);
    for (let i = 0; i < 3000; i++) {
      const op: Record<string, unknown> = { ...base };
      for (const field of opFields) if (r() < 0.3) op[field] = pick(r, pool);
      inputs.push(op);
    }
    for (const input of inputs)
      counts[agrees(partialUserOperationSchema, parsePartialUserOperationFast(input), input)]++;
    // Most valid inputs take the fast path (else it is dead weight).
    assert.ok(counts.fast > 300 && counts.fast >= 0.9 * (counts.fast + counts.deferred), JSON.stringify(counts));
  });

  test('mode objects: every single-field change, and random combinations', () => {
    const counts = { fast: 0, deferred: 0, refused: 0 };
    const fields: [string, readonly unknown[]][] = [
      ['mode', modePool],
      ['calculateGasLimits', pool],
      ['expiryDuration', pool],
      ['webhookData', recordPool],
      ['sponsorshipInfo', recordPool],
      ['tokenInfo', pool],
    ];
    const inputs: unknown[] = [
      ...pool,
      { sponsorshipInfo: { webhookData: { num: 2 }, smartAccountInfo: { name: 'B' } } },
    ];
    for (const [field, values] of fields)
      for (const value of values) inputs.push({ mode: 'SPONSORED', [field]: value });
    for (const value of recordPool) inputs.push({ sponsorshipInfo: { webhookData: value } });
    const r = rng(11);
    for (let i = 0; i < 2000; i++) {
      const m: Record<string, unknown> = {};
      for (const [field, values] of fields) if (r() < 0.5) m[field] = pick(r, values);
      if (r() < 0.3) m.sponsorshipInfo = { webhookData: pick(r, recordPool), smartAccountInfo: pick(r, pool) };
      inputs.push(m);
    }
    for (const input of inputs) counts[agrees(modeObjectSchema, parseModeObjectFast(input), input)]++;
    assert.ok(counts.fast > 100 && counts.fast >= 0.9 * (counts.fast + counts.deferred), JSON.stringify(counts));
  });

  test('params tuples: only [op, mode] exactly; a __proto__ key of webhookData is dropped as the schema drops it', () => {
    const tuple = z.tuple([partialUserOperationSchema, modeObjectSchema]);
    const mode = JSON.parse('{"mode":"SPONSORED","webhookData":{"__proto__":{"x":1},"num":2}}');
    for (const params of [[base, mode], [base], [base, mode, 1], [base, null], {}, null, [[], mode]]) {
      agrees(tuple, parseUserOperationAndModeFast(params), params);
    }
    const parsed = parseUserOperationAndModeFast([base, mode]);
    assert.deepStrictEqual(parsed?.[1].webhookData, { num: 2 });
    assert.equal(JSON.stringify(parsed?.[1].webhookData), '{"num":2}');
  });
});

describe('EIP-7702 authorizations: refused when the chain would not apply them (as alto refuses them)', () => {
  const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const hex = (v: bigint) => `0x${v.toString(16)}`;
  // viem's stub authorization while it estimates an undeployed EIP-7702 account (prepareUserOperation).
  const viemStub = {
    address: '0xe6Cae83BdE06E4c305530e199D7217f42808555B',
    chainId: 31337,
    nonce: 0,
    r: '0xfffffffffffffffffffffffffffffff000000000000000000000000000000000',
    s: '0x7aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    yParity: 1,
  };
  const parse = (auth: Record<string, unknown>) =>
    partialUserOperationSchema.safeParse({ ...base, factory: '0x7702', eip7702Auth: auth });

  test("viem's stub and a signature at the edges (s = n / 2, r = n − 1, chain id 0) pass", () => {
    assert.equal(parse(viemStub).success, true);
    const edge = {
      ...viemStub,
      chainId: 0,
      r: hex(N - 1n),
      s: hex(N / 2n),
      yParity: '0x0',
      nonce: hex((1n << 64n) - 2n),
    };
    assert.equal(parse(edge).success, true);
  });

  test('each malformed component is refused, naming it', () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ s: hex(N / 2n + 1n) }, 's', /high s is malleable/],
      [{ s: '0x0' }, 's', /from 1 to n \/ 2/],
      [{ r: '0x0' }, 'r', /from 1 to n − 1/],
      [{ r: hex(N) }, 'r', /from 1 to n − 1/],
      [{ yParity: 2 }, 'yParity', /must be 0 or 1/],
      [{ yParity: 27 }, 'yParity', /must be 0 or 1/],
      [{ nonce: hex((1n << 64n) - 1n) }, 'nonce', /below 2\^64 − 1/],
      [{ address: '0x1234' }, 'address', /./],
    ];
    for (const [change, field, message] of cases) {
      const r = parse({ ...viemStub, ...change });
      assert.equal(r.success, false, JSON.stringify(change));
      const issue = r.error?.issues[0];
      assert.deepEqual(issue?.path, ['eip7702Auth', field], JSON.stringify(change));
      assert.match(issue?.message ?? '', message, JSON.stringify(change));
    }
  });
});
