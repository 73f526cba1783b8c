import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stakeState } from './paymasterStatus.js';

test('stakeState: staked, unstaked, unlocking until withdrawTime, withdrawable from it', () => {
  const at = (staked: boolean, stakeWei: bigint, withdrawTime: number) =>
    stakeState({ staked, stakeWei, withdrawTime, nowSec: 1_000 });
  assert.equal(at(true, 10n ** 18n, 0), 'staked');
  assert.equal(at(false, 0n, 0), 'unstaked');
  // withdrawStake leaves stake 0 and withdrawTime 0; a stake never locked has withdrawTime 0 too.
  assert.equal(at(false, 0n, 900), 'unstaked');
  assert.equal(at(false, 10n ** 18n, 1_001), 'unlocking');
  assert.equal(at(false, 10n ** 18n, 1_000), 'withdrawable', 'the EntryPoint allows withdrawStake at withdrawTime');
  assert.equal(at(false, 10n ** 18n, 999), 'withdrawable');
});
