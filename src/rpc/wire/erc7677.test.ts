import assert from 'node:assert/strict';
import { test } from 'node:test';
import { erc7677Params, erc7677ParamsFast } from './erc7677.js';

test('ERC-7677 params: the fast parser returns what the schema does, or defers', () => {
  const op = {
    sender: `0x${'ab'.repeat(20)}`,
    nonce: '0x1',
    factory: `0x${'cd'.repeat(20)}`,
    factoryData: '0x1234',
    callData: '0xb61d27f6',
    callGasLimit: '0x0',
    verificationGasLimit: '0x0',
    preVerificationGas: '0x0',
    maxFeePerGas: '0x3b9aca00',
    maxPriorityFeePerGas: '0x3b9aca00',
    paymaster: `0x${'ef'.repeat(20)}`,
    paymasterData: '0x00',
    signature: '0xff',
  };
  const ep = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';
  const cases: unknown[] = [
    [op, ep, '0x7a69', {}],
    [op, ep, '0x7a69'],
    [op, ep, '0x7a69', null],
    [op, ep, '0x7a69', { mode: 'SPONSORED', calculateGasLimits: true, sponsorshipInfo: { webhookData: { n: 1 } } }],
    [op, ep.toLowerCase(), 31337, { mode: 'ERC20', tokenInfo: { feeTokenAddress: ep } }],
    [op, 'nope', '0x7a69', {}],
    [op, ep, '-1', {}],
    [op, ep, '0x7a69', { mode: 'WHATEVER' }],
    [op, ep, '0x7a69', {}, 5],
    [{ ...op, sender: 1 }, ep, '0x7a69', {}],
    [
      { ...op, eip7702Auth: { address: ep, chainId: '0x1', nonce: '0x0', r: '0x1', s: '0x2', yParity: '0x0' } },
      ep,
      '0x1',
    ],
  ];
  let fast = 0;
  for (const params of cases) {
    const quick = erc7677ParamsFast(params);
    const schema = erc7677Params.safeParse(params);
    if (quick === undefined) continue;
    fast++;
    assert.ok(schema.success, `the fast parser accepted what the schema refuses: ${JSON.stringify(params)}`);
    assert.deepStrictEqual(quick, schema.data);
  }
  assert.equal(fast, 5, 'the five well-formed common shapes take the fast path');
});

test("ERC-7677 params: v0.9's opt-ins go to the schema; only a finalize keeps the op's paymaster fields", () => {
  const op = {
    sender: `0x${'ab'.repeat(20)}`,
    nonce: '0x1',
    callData: '0xb61d27f6',
    callGasLimit: '0x10',
    verificationGasLimit: '0x20',
    preVerificationGas: '0x30',
    maxFeePerGas: '0x3b9aca00',
    maxPriorityFeePerGas: '0x3b9aca00',
    paymaster: `0x${'ef'.repeat(20)}`,
    paymasterData: '0x00',
    paymasterVerificationGasLimit: '0x9c40',
    paymasterPostOpGasLimit: '0x0',
    signature: '0xff',
  };
  const ep = '0x433709009B8330FDa32311DF1C2AFA402eD8D009';
  for (const context of [{ signingPhase: 'commit' }, { validityUnit: 'blocks' }, { signingPhase: 'finalize' }]) {
    assert.equal(erc7677ParamsFast([op, ep, '0x7a69', context]), undefined, JSON.stringify(context));
  }
  const commit = erc7677Params.parse([op, ep, '0x7a69', { signingPhase: 'commit', validityUnit: 'blocks' }]);
  assert.equal(commit[3]?.signingPhase, 'commit');
  assert.equal(commit[3]?.validityUnit, 'blocks');
  assert.equal(commit[0].committed, undefined, 'a commit ignores paymaster fields, as every other call does');
  const finalize = erc7677Params.parse([op, ep, '0x7a69', { signingPhase: 'finalize' }]);
  assert.equal(finalize[0].committed?.paymaster?.toLowerCase(), op.paymaster);
  assert.deepEqual(finalize[0].committed, {
    paymaster: finalize[0].committed?.paymaster,
    paymasterData: '0x00',
    paymasterVerificationGasLimit: 40_000n,
    paymasterPostOpGasLimit: 0n,
  });
  const plain = erc7677Params.parse([op, ep, '0x7a69', {}]);
  assert.deepStrictEqual(erc7677ParamsFast([op, ep, '0x7a69', {}]), plain);
  for (const bad of [{ signingPhase: 'sign' }, { validityUnit: 'slots' }]) {
    const r = erc7677Params.safeParse([op, ep, '0x7a69', bad]);
    assert.equal(r.success, false, JSON.stringify(bad));
  }
});

test('ERC-7677 params: Pimlico’s { token } context is the ERC20 mode in that token, in both parsers; with SPONSORED refused', () => {
  const op = {
    sender: `0x${'ab'.repeat(20)}`,
    nonce: '0x1',
    callData: '0xb61d27f6',
    maxFeePerGas: '0x3b9aca00',
    maxPriorityFeePerGas: '0x3b9aca00',
  };
  const ep = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';
  const usdc = `0x${'cd'.repeat(20)}`;
  for (const context of [{ token: usdc }, { token: usdc, mode: 'ERC20' }, { token: usdc, mode: 'erc20' }]) {
    const params = [op, ep, '0x7a69', context];
    const quick = erc7677ParamsFast(params);
    const schema = erc7677Params.safeParse(params);
    assert.ok(quick !== undefined && schema.success, JSON.stringify(context));
    assert.deepStrictEqual(quick, schema.data);
    const mode = quick[3];
    assert.equal(mode?.mode, 'ERC20');
    assert.equal(mode?.token?.toLowerCase(), usdc);
  }
  for (const mode of ['SPONSORED', 'sponsorship']) {
    const params = [op, ep, '0x7a69', { token: usdc, mode }];
    assert.equal(erc7677ParamsFast(params), undefined, 'the fast parser leaves the refusal to the schema');
    const schema = erc7677Params.safeParse(params);
    assert.equal(schema.success, false);
    assert.ok(schema.error?.issues.some((i) => JSON.stringify(i).includes('cannot go with mode')));
  }
  assert.equal(erc7677ParamsFast([op, ep, '0x7a69', { token: 'usdc' }]), undefined);
  assert.equal(erc7677Params.safeParse([op, ep, '0x7a69', { token: 'usdc' }]).success, false);
});
