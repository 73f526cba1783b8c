import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BLOCK_RANGE_FLAG } from './entryPoints/v07/patronPaymasterV07.js';
import { blockWindow, checkIssuedWindow, isBlockWindow, secondsPerBlock, timeWindow } from './validityWindows.js';

const policy = { defaultExpirySeconds: 300, maxExpirySeconds: 3600, validAfterSkewSeconds: 60 };
const nowMs = 1_800_000_000_000;
const now = nowMs / 1000;

test('a block window never lasts longer in real time than the time policy: counted at the chain’s block-time bound', () => {
  assert.equal(secondsPerBlock({}), 12, 'Ethereum’s slot unless the chain says');
  assert.equal(secondsPerBlock({ maxBlockTimeSeconds: 2 }), 2);
  const at12 = blockWindow({ policy, nowMs, expiryDuration: 300, currentBlock: 1_000, secondsPerBlock: 12 });
  assert.ok(isBlockWindow(at12));
  assert.equal(at12.validUntil, BLOCK_RANGE_FLAG + 1_025, '300 s at 12 s per block: 25 blocks');
  assert.equal(at12.validAfter, BLOCK_RANGE_FLAG + 995, 'the 60 s skew: 5 blocks back');
  assert.equal(at12.expiresAt, now + 300);
  const at2 = blockWindow({ policy, nowMs, expiryDuration: 300, currentBlock: 1_000, secondsPerBlock: 2 });
  assert.equal(at2.validUntil, BLOCK_RANGE_FLAG + 1_150, 'a 2-second chain: 150 blocks, the same 300 s');
  assert.equal(at2.expiresAt, now + 300);
  // Capped by the policy's maximum, at least one block, never before block 1.
  const long = blockWindow({ policy, nowMs, expiryDuration: 1e9, currentBlock: 3, secondsPerBlock: 12 });
  assert.equal(long.validUntil, BLOCK_RANGE_FLAG + 3 + 300);
  assert.equal(long.validAfter, BLOCK_RANGE_FLAG + 1);
  const short = blockWindow({ policy, nowMs, expiryDuration: 5, currentBlock: 10, secondsPerBlock: 12 });
  assert.equal(short.validUntil, BLOCK_RANGE_FLAG + 11);
});

test('an issued block window is checked against the head and the bound: expired, too long, opening later, mixed', () => {
  const w = blockWindow({ policy, nowMs, expiryDuration: 300, currentBlock: 1_000, secondsPerBlock: 2 });
  const ok = checkIssuedWindow({ window: w, policy, nowMs, currentBlock: 1_010, secondsPerBlock: 2 });
  assert.equal(ok.expiresAt, now + 140 * 2, 'its last block at the bound');
  assert.throws(
    () => checkIssuedWindow({ window: w, policy, nowMs, currentBlock: 1_150, secondsPerBlock: 2 }),
    /has expired \(block 1150, now 1150\)/,
  );
  // Issued for a 2-second chain, it is too long for one whose operator bounds blocks at 12 s (3600 s = 300 blocks).
  const far = { validUntil: BLOCK_RANGE_FLAG + 1_400, validAfter: BLOCK_RANGE_FLAG + 999 };
  assert.throws(
    () => checkIssuedWindow({ window: far, policy, nowMs, currentBlock: 1_000, secondsPerBlock: 12 }),
    /lasts more than 300 blocks from now/,
  );
  const later = { validUntil: BLOCK_RANGE_FLAG + 1_100, validAfter: BLOCK_RANGE_FLAG + 1_050 };
  assert.throws(
    () => checkIssuedWindow({ window: later, policy, nowMs, currentBlock: 1_000, secondsPerBlock: 12 }),
    /opens at a future block/,
  );
  const mixed = { validUntil: BLOCK_RANGE_FLAG + 1_100, validAfter: now };
  assert.throws(() => checkIssuedWindow({ window: mixed, policy, nowMs, secondsPerBlock: 12 }), /mixes/);
  const time = timeWindow(policy, { nowMs }, 120);
  assert.deepEqual(checkIssuedWindow({ window: time, policy, nowMs, secondsPerBlock: 12 }), time);
});

test('a time window is set on both clocks: open at the earlier minus the skew, closing the expiry after the later', () => {
  const { validAfter, validUntil, expiresAt } = timeWindow(policy, { nowMs }, 120);
  assert.deepEqual([validAfter, validUntil, expiresAt], [now - 60, now + 120, now + 120], 'the server alone');
  // An idle chain whose last block is an hour old: open in the simulation at that block's time.
  const idle = timeWindow(policy, { nowMs, chainSeconds: now - 3600 }, 120);
  assert.deepEqual([idle.validAfter, idle.validUntil], [now - 3660, now + 120]);
  // A chain two hours ahead of the server: not closed for it.
  const ahead = timeWindow(policy, { nowMs, chainSeconds: now + 7200 }, 120);
  assert.deepEqual([ahead.validAfter, ahead.validUntil, ahead.expiresAt], [now - 60, now + 7320, now + 7320]);
  assert.equal(timeWindow(policy, { nowMs }, 1e9).validUntil, now + 3600, 'capped by the policy');
  // Checked again later (parallel signing's finalize) on the same clocks: the later one says whether it expired.
  assert.deepEqual(
    checkIssuedWindow({ window: ahead, policy, nowMs: nowMs + 100_000, chainSeconds: now + 7300, secondsPerBlock: 12 }),
    ahead,
  );
  assert.throws(
    () => checkIssuedWindow({ window: ahead, policy, nowMs, chainSeconds: now + 7320, secondsPerBlock: 12 }),
    /has expired/,
  );
});
