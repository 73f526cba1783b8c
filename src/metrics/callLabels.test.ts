import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CallerNotAllowedError } from '../errors/PatronError.js';
import { toRpcError } from '../rpc/rpcErrors.js';
import { callLabels } from './callLabels.js';

test("a refusal by the key's caller restrictions is a denial labelled with its rule", () => {
  for (const rule of ['origin', 'ip', 'method'] as const) {
    const { error, http } = toRpcError(new CallerNotAllowedError({ rule, family: 'sponsorship' }));
    assert.equal(http, 403);
    const labels = callLabels({
      at: 0,
      method: 'pm_sponsorUserOperation',
      accountId: 'a',
      dappId: 'd',
      chainId: 31337,
      facts: [],
      latencyMs: 1,
      error,
    });
    assert.deepEqual(labels, { method: 'pm_sponsorUserOperation', mode: 'none', outcome: 'denied', rule });
  }
});
