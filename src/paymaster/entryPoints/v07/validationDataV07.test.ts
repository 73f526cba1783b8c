import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callGasUsed } from './gasEstimatorV07.js';
import { parseValidationData, type ValidationData, validationFailure, validityWindow } from './validationDataV07.js';

/** validAfter ‖ validUntil ‖ aggregator, packed as accounts and paymasters return it. */
function pack(aggregator: bigint, validUntil: bigint, validAfter: bigint): bigint {
  return (validAfter << 208n) | (validUntil << 160n) | aggregator;
}

const FLAG = 1n << 47n;
const block = { timestamp: 1_000n, number: 50n };
const ok: ValidationData = parseValidationData(0n);

describe('validation data (v0.7-v0.9)', () => {
  it('parses the three fields, validUntil 0 meaning no end', () => {
    assert.deepEqual(parseValidationData(pack(1n, 0n, 0n)), {
      aggregator: 1n,
      validAfter: 0n,
      validUntil: (1n << 48n) - 1n,
    });
    assert.deepEqual(parseValidationData(pack(0n, 2_000n, 500n)), {
      aggregator: 0n,
      validAfter: 500n,
      validUntil: 2_000n,
    });
  });

  it('judges a time window by each version: v0.7 admits validAfter itself, v0.8+ does not', () => {
    const startsNow = parseValidationData(pack(0n, 2_000n, 1_000n));
    assert.equal(validityWindow('0.7', startsNow, block), 'inside');
    assert.equal(validityWindow('0.8', startsNow, block), 'outside-time');
    assert.equal(validityWindow('0.9', startsNow, block), 'outside-time');
    assert.equal(validityWindow('0.8', parseValidationData(pack(0n, 999n, 0n)), block), 'outside-time');
    assert.equal(validityWindow('0.8', parseValidationData(pack(0n, 1_000n, 0n)), block), 'inside');
  });

  it('judges a v0.9 block-number window (bit 47 on both bounds), and only on v0.9', () => {
    const blocks = parseValidationData(pack(0n, FLAG | 60n, FLAG | 40n));
    assert.equal(validityWindow('0.9', blocks, block), 'inside');
    assert.equal(validityWindow('0.9', blocks, { ...block, number: 61n }), 'outside-blocks');
    assert.equal(validityWindow('0.9', blocks, { ...block, number: 40n }), 'outside-blocks');
    // Before v0.9 the same bits are a far-future timestamp window: not yet due.
    assert.equal(validityWindow('0.8', blocks, block), 'outside-time');
    // One bound flagged and the other not is a timestamp window on v0.9 too.
    assert.equal(validityWindow('0.9', parseValidationData(pack(0n, FLAG | 60n, 0n)), block), 'inside');
  });

  it("names the failure handleOps would revert with, in the EntryPoint's order", () => {
    const args = { version: '0.9' as const, block, ignoreSignatureFailure: false };
    const sigFail = parseValidationData(1n);
    assert.equal(validationFailure({ ...args, account: sigFail, paymaster: ok }), 'AA24 signature error');
    assert.equal(validationFailure({ ...args, account: ok, paymaster: sigFail }), 'AA34 signature error');
    assert.match(
      validationFailure({ ...args, account: parseValidationData(0xabcn), paymaster: ok }) ?? '',
      /^AA24 .*aggregator/,
    );
    const expired = parseValidationData(pack(0n, 10n, 0n));
    assert.equal(validationFailure({ ...args, account: expired, paymaster: ok }), 'AA22 expired or not due');
    assert.equal(validationFailure({ ...args, account: ok, paymaster: expired }), 'AA32 paymaster expired or not due');
    const pastBlocks = parseValidationData(pack(0n, FLAG | 10n, FLAG | 1n));
    assert.equal(validationFailure({ ...args, account: pastBlocks, paymaster: ok }), 'AA27 outside valid block range');
    assert.equal(
      validationFailure({ ...args, account: ok, paymaster: pastBlocks }),
      'AA37 paymaster inval block range',
    );
    assert.equal(validationFailure({ ...args, account: ok, paymaster: ok }), undefined);
  });

  it('estimation tolerates a signature failure but never a window', () => {
    const args = { version: '0.7' as const, block, ignoreSignatureFailure: true };
    const sigFail = parseValidationData(1n);
    assert.equal(validationFailure({ ...args, account: sigFail, paymaster: sigFail }), undefined);
    const expiredSigFail = parseValidationData(pack(1n, 10n, 0n));
    assert.equal(validationFailure({ ...args, account: expiredSigFail, paymaster: ok }), 'AA22 expired or not due');
  });
});

describe('callGasUsed (the unused-gas penalty solved out)', () => {
  it('inverts a 10 % penalty on the simulation limit: difference = call + (limit − call) / 10 − limit / 10', () => {
    for (const call of [1n, 9n, 21_000n, 123_457n, 2_500_000n]) {
      // The probe pays limit/10 for an unused limit, the measured op (limit − call)/10, both floored.
      const limit = 10_000_000n;
      const difference = call + (limit - call) / 10n - limit / 10n;
      const solved = callGasUsed(difference);
      assert.ok(solved >= call && solved <= call + 3n, `call ${call}: solved ${solved}`);
    }
    assert.equal(callGasUsed(-5n), 0n);
  });
});
