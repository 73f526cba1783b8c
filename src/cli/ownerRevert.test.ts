import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeErrorResult, parseAbi } from 'viem';
import { decodeOwnerRevert } from './ownerRevert.js';

const owner = '0x1111111111111111111111111111111111111111';
const key = '0x2222222222222222222222222222222222222222';
const abi = parseAbi([
  'error OwnableUnauthorizedAccount(address account)',
  'error Error(string)',
  'error InsufficientDeposit(uint256 currentDeposit, uint256 withdrawAmount)',
]);

test('the 0x118cdaa7 of the issue (OwnableUnauthorizedAccount) names the key and the owner', () => {
  const data = encodeErrorResult({ abi, errorName: 'OwnableUnauthorizedAccount', args: [key] });
  assert.equal(data.slice(0, 10), '0x118cdaa7');
  assert.equal(decodeOwnerRevert({ data, owner }), `the key ${key} is not the paymaster's owner (owner is ${owner})`);
});

test("the EntryPoint's reasons: v0.6/v0.7 strings with what to do, v0.8+ custom errors in ETH", () => {
  const reason = encodeErrorResult({ abi, errorName: 'Error', args: ['must call unlockStake() first'] });
  assert.equal(
    decodeOwnerRevert({ data: reason, owner }),
    'the EntryPoint refused: "must call unlockStake() first" (run `patron paymaster unlock-stake` first, then wait the unstake delay)',
  );
  const custom = encodeErrorResult({ abi, errorName: 'InsufficientDeposit', args: [10n ** 18n, 2n * 10n ** 18n] });
  assert.equal(decodeOwnerRevert({ data: custom, owner }), 'the deposit is 1 ETH, less than the 2 ETH asked');
});

test('data no known error matches is shown as it is', () => {
  assert.equal(
    decodeOwnerRevert({ data: '0xdeadbeef', owner }),
    'it reverted with data no known error matches: 0xdeadbeef',
  );
});
