import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeFunctionData, erc20Abi, parseAbi } from 'viem';
import { approvalInCallData } from './callDataApproval.js';

const paymaster = '0x1111111111111111111111111111111111111111';
const token = '0x2222222222222222222222222222222222222222';
const account = parseAbi([
  'function execute(address dest, uint256 value, bytes func)',
  'function executeBatch(address[] dest, bytes[] func)',
  'function executeBatch_y6U(address[] dest, uint256[] value, bytes[] func)',
]);
const approve = (spender: `0x${string}`, amount: bigint) =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] });

test('finds approve(paymaster, amount) inside every account encoding, the largest when several', () => {
  const single = encodeFunctionData({
    abi: account,
    functionName: 'execute',
    args: [token, 0n, approve(paymaster, 5n)],
  });
  assert.equal(approvalInCallData(single, paymaster), 5n);
  const batch = encodeFunctionData({
    abi: account,
    functionName: 'executeBatch',
    args: [
      [token, token, token],
      [approve(paymaster, 7n), '0x1234', approve(paymaster, 9n)],
    ],
  });
  assert.equal(approvalInCallData(batch, paymaster), 9n);
  const biconomy = encodeFunctionData({
    abi: account,
    functionName: 'executeBatch_y6U',
    args: [[token], [0n], [approve(paymaster, 2n ** 255n)]],
  });
  assert.equal(approvalInCallData(biconomy, paymaster.toUpperCase().replace('0X', '0x') as `0x${string}`), 2n ** 255n);
});

test('ignores approvals of another spender, and bytes that are not at an ABI word boundary', () => {
  const other = encodeFunctionData({
    abi: account,
    functionName: 'execute',
    args: [token, 0n, approve('0x3333333333333333333333333333333333333333', 5n)],
  });
  assert.equal(approvalInCallData(other, paymaster), undefined);
  // The same bytes shifted by one: a selector inside another word's data is not a call.
  const shifted = encodeFunctionData({
    abi: account,
    functionName: 'execute',
    args: [token, 0n, `0x00${approve(paymaster, 5n).slice(2)}`],
  });
  assert.equal(approvalInCallData(shifted, paymaster), undefined);
  assert.equal(approvalInCallData('0x', paymaster), undefined);
});
