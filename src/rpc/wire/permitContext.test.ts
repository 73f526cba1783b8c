import assert from 'node:assert/strict';
import { test } from 'node:test';
import { concat, type Hex, maxUint256, serializeErc6492Signature } from 'viem';
import { erc7677Params, erc7677ParamsFast } from './erc7677.js';
import { permitContextSchema, permitTypedDataField } from './permitContext.js';

const signature: Hex = `0x${'11'.repeat(64)}1b`;

test('the context’s permit: value as decimal or hex, the signature as sent, or its ERC-6492 inner signature', () => {
  assert.deepEqual(permitContextSchema.parse({ value: '3423342', signature }), { value: 3_423_342n, signature });
  assert.deepEqual(permitContextSchema.parse({ value: '0x343c6e', signature }), { value: 3_423_342n, signature });
  // What viem's smart accounts sign while undeployed: abi.encode(factory, factoryData, signature) ‖ the magic.
  const wrapped = serializeErc6492Signature({
    address: `0x${'ab'.repeat(20)}`,
    data: `0x${'cd'.repeat(600)}`,
    signature,
  });
  assert.deepEqual(permitContextSchema.parse({ value: 1, signature: wrapped }), { value: 1n, signature });
  // A wrapper around a 2,048-byte signature is within the wire bound and its inner signature within the contract's.
  const long: Hex = `0x${'22'.repeat(2048)}`;
  const wrappedLong = serializeErc6492Signature({ address: `0x${'ab'.repeat(20)}`, data: '0x', signature: long });
  assert.equal(permitContextSchema.parse({ value: 1, signature: wrappedLong }).signature, long);
});

test('the context’s permit refuses what the paymaster could not carry, naming the field', () => {
  const cases: Array<[unknown, RegExp]> = [
    [{ value: '1' }, /signature/],
    [{ signature }, /value/],
    [{ value: '-1', signature }, /must be a hex or decimal quantity/],
    [{ value: (maxUint256 + 1n).toString(), signature }, /must be a hex or decimal quantity/],
    [{ value: '1', signature: '0x123' }, /0x-prefixed hex/],
    [{ value: '1', signature: `0x${'33'.repeat(2049)}` }, /at most 2048 bytes/],
    [{ value: '1', signature: `0x${'33'.repeat(8193)}` }, /at most 8192 bytes/],
    // The magic suffix on something that is no abi.encode(address, bytes, bytes).
    [
      { value: '1', signature: concat(['0x1234', `0x${'6492'.repeat(16)}`]) },
      /ERC-6492 signature that does not decode/,
    ],
    ['0xabcd', /must be an object \{ value, signature \}/],
  ];
  for (const [permit, message] of cases) {
    const r = permitContextSchema.safeParse(permit);
    assert.equal(r.success, false, JSON.stringify(permit).slice(0, 80));
    assert.match(r.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') ?? '', message);
  }
});

test('ERC-7677 params carry the permit through the schema (the fast parser defers), and only with a token', () => {
  const op = {
    sender: `0x${'ab'.repeat(20)}`,
    nonce: '0x1',
    callData: '0x',
    maxFeePerGas: '0x3b9aca00',
    maxPriorityFeePerGas: '0x3b9aca00',
    signature: '0x',
  };
  const ep = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';
  const token = `0x${'cd'.repeat(20)}`;
  const params = [op, ep, '0x7a69', { token, permit: { value: '5', signature } }];
  assert.equal(erc7677ParamsFast(params), undefined, 'a context with a permit goes to the schema');
  const parsed = erc7677Params.parse(params);
  assert.deepEqual(parsed[3] && 'permit' in parsed[3] ? parsed[3].permit : undefined, { value: 5n, signature });
  const sponsored = erc7677Params.safeParse([op, ep, '0x7a69', { permit: { value: '5', signature } }]);
  assert.equal(sponsored.success, false);
  assert.deepEqual(sponsored.error?.issues[0]?.path, [3, 'permit']);
  assert.match(sponsored.error?.issues[0]?.message ?? '', /is a permit to pay gas in a token/);
  const malformed = erc7677Params.safeParse([op, ep, '0x7a69', { token, permit: { value: 'x', signature } }]);
  assert.deepEqual(malformed.error?.issues[0]?.path, [3, 'permit', 'value']);
  // mode "ERC20" with tokenInfo also pays in a token.
  const erc20 = erc7677Params.parse([
    op,
    ep,
    '0x7a69',
    { mode: 'erc20', tokenInfo: { feeTokenAddress: token }, permit: { value: '5', signature } },
  ]);
  assert.equal(erc20[3]?.mode, 'ERC20');
});

test('permitTypedData: EIP-712 as eth_signTypedData_v4 takes it, uint256 values as decimal strings', () => {
  const typed = permitTypedDataField({
    token: `0x${'cd'.repeat(20)}`,
    name: 'USD Coin',
    version: '2',
    chainId: 8453,
    owner: `0x${'ab'.repeat(20)}`,
    spender: `0x${'ef'.repeat(20)}`,
    value: 3_423_342n,
    nonce: 7n,
    deadline: maxUint256,
  });
  assert.deepEqual(typed.domain, {
    name: 'USD Coin',
    version: '2',
    chainId: 8453,
    verifyingContract: `0x${'cd'.repeat(20)}`,
  });
  assert.equal(typed.primaryType, 'Permit');
  assert.deepEqual(typed.message, {
    owner: `0x${'ab'.repeat(20)}`,
    spender: `0x${'ef'.repeat(20)}`,
    value: '3423342',
    nonce: '7',
    deadline: maxUint256.toString(),
  });
  assert.deepEqual(
    typed.types.Permit.map((f) => `${f.type} ${f.name}`),
    ['address owner', 'address spender', 'uint256 value', 'uint256 nonce', 'uint256 deadline'],
  );
  assert.doesNotThrow(() => JSON.stringify(typed));
});
