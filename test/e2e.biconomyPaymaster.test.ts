import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BiconomyPaymaster, PaymasterMode } from '@biconomy/paymaster';
import { decodePaymasterAndData, type UserOperationV06 } from '../src/paymaster/patronPaymasterV06.js';
import {
  applySdkFields,
  assertSponsoredOnChain,
  DENIAL_MESSAGE,
  hex,
  lastSent,
  type RecordedCall,
  recordPaymasterFetches,
  type SdkE2e,
  startSdkE2e,
  webhookBodies,
} from './helpers/sdkE2e.js';

/**
 * `@biconomy/paymaster` 4.x (the viem-based v0.6 SDK), unmodified, against Patron listening on 127.0.0.1; every
 * `paymasterAndData` it hands back is run through `handleOps` on the in-process EntryPoint v0.6.
 *
 * SDK behaviour this relies on / accommodates (read from node_modules/@biconomy/paymaster/dist):
 * - It POSTs `{method, params, id: <unix seconds>, jsonrpc}` to the paymaster URL as is, with no header
 *   for the API key. `prepareUserOperation` rewrites nonce and fees as hex and the three gas limits as
 *   *decimal* strings, but only when the value is truthy: a bigint `0n` nonce (every first op) is left as a
 *   bigint and `JSON.stringify` then throws inside the SDK before anything is sent. Callers (and
 *   `@biconomy/account`'s `buildUserOp`, which uses `toHex(nonce)`) pass `"0x0"`, as done here.
 * - `getPaymasterFeeQuotesOrData` always sends a `tokenInfo` (`{}` when no token list is given, a quirk of
 *   `tokenList?.length !== 0 ? tokenList : []`) and `sponsorshipInfo: {smartAccountInfo: {name: "BICONOMY",
 *   version: "2.0.0"}}`, even in SPONSORED mode; `webhookData` goes in `sponsorshipInfo.webhookData`.
 * - It accepts a result only if lower-case `result.mode` is exactly "SPONSORED" (or "ERC20"); otherwise it
 *   throws "Expectation Failed: Invalid mode in Paymaster service response". `getPaymasterAndData` does not
 *   look at `mode`. Both return the four sponsored fields exactly as received (numbers/strings).
 * - It reads an error body only on a non-2xx status (`Error coming from Paymaster: <error.message>`; the
 *   code is dropped); on HTTP 200 with an `error` it throws a generic "Failed to fetch feeQuote or paymaster
 *   data". Patron answers refusals with HTTP 400 so the message surfaces.
 * - With `strictMode: false` (the default) it silently returns `paymasterAndData: "0x"` (the user pays) when
 *   the message contains "Smart contract data not found" or "No policies were set"; Patron's refusals never
 *   say that, so a denial stays a denial.
 */
let e2e: SdkE2e;
let wire: { calls: RecordedCall[]; restore(): void };

before(async () => {
  e2e = await startSdkE2e();
  wire = recordPaymasterFetches(e2e.base);
});
after(async () => {
  wire.restore();
  await e2e.close();
});

/** The partial op as `@biconomy/account`'s `buildUserOp` hands it to the paymaster: hex nonce/fees, no limits. */
function partialOp(op: UserOperationV06) {
  return {
    sender: op.sender,
    nonce: hex(op.nonce),
    initCode: op.initCode,
    callData: op.callData,
    maxFeePerGas: hex(op.maxFeePerGas),
    maxPriorityFeePerGas: hex(op.maxPriorityFeePerGas),
    paymasterAndData: '0x',
    signature: '0x',
  } as const;
}

const lastCall = () => lastSent(wire.calls);

const SMART_ACCOUNT_INFO = { name: 'BICONOMY', version: '2.0.0' };

describe('@biconomy/paymaster 4.x, SPONSORED, no webhook', () => {
  test('getPaymasterFeeQuotesOrData with calculateGasLimits: Patron computes the limits; handleOps succeeds and our deposit pays', async () => {
    const pm = new BiconomyPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.open) });
    const op = await e2e.nextOp();
    const r = await pm.getPaymasterFeeQuotesOrData(partialOp(op), {
      mode: PaymasterMode.SPONSORED,
      calculateGasLimits: true,
    });

    const sent = lastCall();
    assert.equal(sent.status, 200);
    assert.equal(sent.method, 'pm_getFeeQuoteOrData');
    // id = unix seconds (so two requests in the same second share it); Patron echoes it.
    assert.ok(typeof sent.id === 'number' && Math.abs(sent.id - Date.now() / 1000) < 60);
    assert.equal((sent.response as { id?: unknown }).id, sent.id);
    const [userOp, modeObject] = sent.params;
    assert.equal((userOp as Record<string, unknown>).nonce, '0x0');
    assert.deepEqual(Object.keys(sent.userOp).sort(), [
      'callData',
      'initCode',
      'maxFeePerGas',
      'maxPriorityFeePerGas',
      'nonce',
      'paymasterAndData',
      'sender',
      'signature',
    ]);
    assert.deepEqual(modeObject, {
      mode: 'SPONSORED',
      calculateGasLimits: true,
      // `tokenList?.length !== 0 ? tokenList : []` keeps `undefined` when no list is given: `{}` on the wire.
      tokenInfo: {},
      sponsorshipInfo: { smartAccountInfo: SMART_ACCOUNT_INFO },
    });

    assert.equal(r.feeQuotes, undefined);
    assert.equal(typeof r.callGasLimit, 'number');
    assert.equal(typeof r.verificationGasLimit, 'number');
    assert.match(String(r.preVerificationGas), /^\d+$/);
    const sponsored = applySdkFields(op, r);
    const { actualGasUsed } = await assertSponsoredOnChain(e2e.fx, sponsored);
    // The computed limits cover what the op used, without being absurd.
    assert.ok(sponsored.verificationGasLimit + sponsored.callGasLimit + sponsored.preVerificationGas >= actualGasUsed);
    assert.ok(sponsored.verificationGasLimit < 1_000_000n);
  });

  test('getPaymasterAndData (pm_sponsorUserOperation) with calculateGasLimits: handleOps succeeds', async () => {
    const pm = new BiconomyPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.open) });
    const op = await e2e.nextOp();
    const r = await pm.getPaymasterAndData(partialOp(op), { mode: PaymasterMode.SPONSORED, calculateGasLimits: true });

    const sent = lastCall();
    assert.equal(sent.method, 'pm_sponsorUserOperation');
    assert.deepEqual(sent.params[1], {
      mode: 'SPONSORED',
      calculateGasLimits: true,
      sponsorshipInfo: { smartAccountInfo: SMART_ACCOUNT_INFO },
    });
    await assertSponsoredOnChain(e2e.fx, applySdkFields(op, r));
  });

  test('calculateGasLimits false: the caller’s limits come back unchanged (both methods) and the signature covers them', async () => {
    const pm = new BiconomyPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.open) });
    for (const method of ['getPaymasterFeeQuotesOrData', 'getPaymasterAndData'] as const) {
      const op = await e2e.nextOp();
      // Limits as bigints: the SDK turns them into decimal strings on the wire.
      const withLimits = {
        ...partialOp(op),
        callGasLimit: op.callGasLimit,
        verificationGasLimit: op.verificationGasLimit,
        preVerificationGas: op.preVerificationGas,
      };
      const dto = { mode: PaymasterMode.SPONSORED, calculateGasLimits: false, expiryDuration: 600 };
      const r =
        method === 'getPaymasterAndData'
          ? await pm.getPaymasterAndData(withLimits, dto)
          : await pm.getPaymasterFeeQuotesOrData(withLimits, dto);

      const { userOp, params } = lastCall();
      const modeObject = params[1];
      assert.equal(userOp.callGasLimit, op.callGasLimit.toString(), method);
      assert.equal(userOp.preVerificationGas, op.preVerificationGas.toString(), method);
      assert.equal((modeObject as { expiryDuration?: unknown }).expiryDuration, 600, method);

      const sponsored = applySdkFields(op, r);
      assert.equal(sponsored.callGasLimit, op.callGasLimit, method);
      assert.equal(sponsored.verificationGasLimit, op.verificationGasLimit, method);
      assert.equal(sponsored.preVerificationGas, op.preVerificationGas, method);
      const { validUntil, validAfter } = decodePaymasterAndData(sponsored.paymasterAndData);
      assert.ok(validUntil - Math.floor(Date.now() / 1000) > 500, `${method}: expiryDuration 600 honoured`);
      assert.ok(validAfter < validUntil);
      await assertSponsoredOnChain(e2e.fx, sponsored);
    }
  });

  test('getPaymasterFeeQuotesOrData without a mode (the SDK then sends none): sponsored, and the SDK accepts the answer', async () => {
    const pm = new BiconomyPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.open) });
    const op = await e2e.nextOp();
    const r = await pm.getPaymasterFeeQuotesOrData(partialOp(op), { calculateGasLimits: true });
    assert.equal('mode' in (lastCall().params[1] as object), false);
    await assertSponsoredOnChain(e2e.fx, applySdkFields(op, r));
  });
});

describe('@biconomy/paymaster 4.x with the dApp’s webhook', () => {
  test('a webhook answering {"arePoliciesVerified": false}: both methods throw with our message, nothing is signed', async () => {
    const pm = new BiconomyPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.denying) });
    for (const method of ['getPaymasterFeeQuotesOrData', 'getPaymasterAndData'] as const) {
      const op = await e2e.nextOp();
      const seen = e2e.receiver.requests.length;
      const dto = { mode: PaymasterMode.SPONSORED, calculateGasLimits: true, webhookData: { num: 2 } };
      const call =
        method === 'getPaymasterAndData'
          ? pm.getPaymasterAndData(partialOp(op), dto)
          : pm.getPaymasterFeeQuotesOrData(partialOp(op), dto);
      await assert.rejects(call, (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.equal(err.message, `Error coming from Paymaster: ${DENIAL_MESSAGE}`);
        return true;
      });
      const sent = lastCall();
      assert.equal(sent.status, 400, method);
      assert.deepEqual(sent.response, {
        jsonrpc: '2.0',
        id: sent.id,
        error: { code: -32010, message: DENIAL_MESSAGE },
      });
      assert.deepEqual(webhookBodies(e2e.receiver, '/deny', seen), [{ data: { num: 2 } }], method);
    }
  });

  test('the even-number webhook: num 2 is sponsored and executes, num 3 is refused (webhookData via sponsorshipInfo)', async () => {
    const pm = new BiconomyPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.even) });
    for (const method of ['getPaymasterFeeQuotesOrData', 'getPaymasterAndData'] as const) {
      const run = (op: UserOperationV06, num: number) => {
        const dto = { mode: PaymasterMode.SPONSORED, calculateGasLimits: true, webhookData: { num } };
        return method === 'getPaymasterAndData'
          ? pm.getPaymasterAndData(partialOp(op), dto)
          : pm.getPaymasterFeeQuotesOrData(partialOp(op), dto);
      };
      const seen = e2e.receiver.requests.length;
      const yes = await e2e.nextOp();
      const r = await run(yes, 2);
      assert.deepEqual(
        (lastCall().params[1] as { sponsorshipInfo?: unknown }).sponsorshipInfo,
        { webhookData: { num: 2 }, smartAccountInfo: SMART_ACCOUNT_INFO },
        method,
      );
      await assertSponsoredOnChain(e2e.fx, applySdkFields(yes, r));

      await assert.rejects(run(await e2e.nextOp(), 3), { message: `Error coming from Paymaster: ${DENIAL_MESSAGE}` });
      assert.equal(lastCall().status, 400);
      assert.deepEqual(
        webhookBodies(e2e.receiver, '/even', seen),
        [{ data: { num: 2 } }, { data: { num: 3 } }],
        method,
      );
    }
  });
});
