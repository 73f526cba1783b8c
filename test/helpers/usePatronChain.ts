import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach } from 'node:test';
import type { Hex } from 'viem';
import { latestTimestamp, type PatronFixture, startPatronFixture } from './patronPaymasterV06.js';

/** The validity window the paymaster signs: `validUntil`/`validAfter` in chain seconds. */
export interface ValidityWindow {
  validUntil: number;
  validAfter: number;
}

export interface PatronChain {
  /** The suite's chain (startPatronFixture), started once. */
  readonly fx: PatronFixture;
  /** Reset before each test to [now − 60 s, now + 1 h] of the chain's clock; a test may replace it. */
  window: ValidityWindow;
}

/**
 * Registers, in the calling `describe`, what every PatronPaymaster contract suite does around its tests: one
 * chain for the suite (then the suite's own `setUp`), an EVM snapshot before each test and a revert after it,
 * so each test starts from the same state, and a fresh validity window. The returned object reads the started
 * chain from inside tests.
 */
export function usePatronChain(options: { setUp?(fx: PatronFixture): Promise<void> } = {}): PatronChain {
  let fx: PatronFixture | undefined;
  let snapshot: Hex | undefined;
  let window: ValidityWindow | undefined;
  const started = (): PatronFixture => {
    assert.ok(fx, 'the chain is used before its `before` hook ran');
    return fx;
  };
  before(async () => {
    fx = await startPatronFixture();
    await options.setUp?.(fx);
  });
  after(async () => {
    await fx?.close();
  });
  beforeEach(async () => {
    snapshot = await started().client.snapshot();
    const now = await latestTimestamp(started());
    window = { validUntil: now + 3600, validAfter: now - 60 };
  });
  afterEach(async () => {
    assert.ok(snapshot, 'a snapshot was taken before the test');
    await started().client.revert({ id: snapshot });
  });
  return {
    get fx() {
      return started();
    },
    get window() {
      assert.ok(window, 'the window is set before each test');
      return window;
    },
    set window(w) {
      window = w;
    },
  };
}
