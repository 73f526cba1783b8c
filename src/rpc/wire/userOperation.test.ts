import assert from 'node:assert/strict';
import { test } from 'node:test';
import { partialUserOperationSchema } from './userOperation.js';

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
