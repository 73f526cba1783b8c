import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeFunctionData, erc20Abi, maxUint256, parseAbi } from 'viem';
import { approvalsAsEstimated } from './approvalAmounts.js';

const paymaster = '0x1111111111111111111111111111111111111111';
const other = '0x3333333333333333333333333333333333333333';
const token = '0x2222222222222222222222222222222222222222';
const account = parseAbi(['function executeBatch(address[] dest, bytes[] func)']);
const approve = (spender: `0x${string}`, amount: bigint) =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] });
const batch = (calls: readonly `0x${string}`[]) =>
  encodeFunctionData({
    abi: account,
    functionName: 'executeBatch',
    args: [calls.map((): `0x${string}` => token), [...calls]],
  });

test('the op as permissionless had it estimated: its approval of the paymaster at the largest amount', () => {
  const sent = batch([approve(paymaster, 2_393_483n), '0x1234']);
  const estimated = batch([approve(paymaster, maxUint256), '0x1234']);
  assert.equal(approvalsAsEstimated({ callData: sent, spender: paymaster }), estimated);
  assert.equal(
    approvalsAsEstimated({
      callData: sent.toUpperCase().replace('0X', '0x') as `0x${string}`,
      spender: paymaster,
    }).toLowerCase(),
    estimated,
  );
});

test('another spender’s approval and an op without approval are priced as they are', () => {
  const foreign = batch([approve(other, 5n)]);
  assert.equal(approvalsAsEstimated({ callData: foreign, spender: paymaster }), foreign);
  assert.equal(approvalsAsEstimated({ callData: '0x', spender: paymaster }), '0x');
});

test('only the first approval is priced at the largest amount: more approvals buy no unburnt calldata gas', () => {
  const stuffed = batch([approve(paymaster, 0n), approve(paymaster, 0n), approve(paymaster, 0n)]);
  assert.equal(
    approvalsAsEstimated({ callData: stuffed, spender: paymaster }),
    batch([approve(paymaster, maxUint256), approve(paymaster, 0n), approve(paymaster, 0n)]),
  );
});
