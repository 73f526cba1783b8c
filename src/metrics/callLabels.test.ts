import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CallerNotAllowedError, TokenPaymentError } from '../errors/PatronError.js';
import { guaranteeCapRefused, guaranteeRefused } from '../paymaster/token/guaranteeTerms.js';
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

test("a token op refused by the dApp's guarantees is a denial with its rule; the account's own shortfall stays an error", () => {
  const paymaster = '0x1111111111111111111111111111111111111111';
  const labelsOf = (err: Error) =>
    callLabels({
      at: 0,
      method: 'pm_getPaymasterData',
      accountId: 'a',
      dappId: 'd',
      chainId: 31337,
      facts: [{ kind: 'op', mode: 'ERC20', sender: paymaster }],
      latencyMs: 1,
      error: toRpcError(err).error,
    });
  for (const rule of ['guaranteeOff', 'guaranteeKeyFamily'] as const) {
    const { error, http } = toRpcError(guaranteeRefused({ symbol: 'USDC', paymaster, rule }));
    assert.deepEqual([error.code, http, error.data], [-32021, 400, { rule, paymaster }]);
    assert.deepEqual(labelsOf(guaranteeRefused({ symbol: 'USDC', paymaster, rule })), {
      method: 'pm_getPaymasterData',
      mode: 'ERC20',
      outcome: 'denied',
      rule,
    });
  }
  const cap = guaranteeCapRefused({
    symbol: 'USDC',
    paymaster,
    charge: { amount: 5n, limit: 10n, window: { start: 0, end: 86_400_000 } },
    resets: 'daily',
    used: 3n,
    reserved: 4n,
  });
  assert.equal(cap.message.includes('cap of 10 wei (daily, until 1970-01-02T00:00:00.000Z) has 3 wei left'), true);
  assert.deepEqual(toRpcError(cap).error.data, {
    rule: 'guaranteeCap',
    unit: 'wei',
    value: '5',
    limit: '10',
    used: '3',
    reserved: '4',
    resetsAt: 86_400,
    paymaster,
  });
  assert.equal(labelsOf(cap).rule, 'guaranteeCap');
  assert.deepEqual(labelsOf(new TokenPaymentError('The account holds 0 base units of USDC')), {
    method: 'pm_getPaymasterData',
    mode: 'ERC20',
    outcome: 'error',
    rule: 'none',
  });
});
