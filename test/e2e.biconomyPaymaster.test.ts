import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BiconomyPaymaster, PaymasterMode } from '@biconomy/paymaster';
import * as sponsoredCases from './helpers/biconomySponsoredCases.js';
import { applySdkFields, assertSponsoredOnChain, useSdkE2e } from './helpers/sdkE2e.js';

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
const e2e = useSdkE2e();

/** The shared SPONSORED checks (helpers/biconomySponsoredCases.ts) run against this SDK. */
const sdk: sponsoredCases.BiconomySdk<PaymasterMode> = {
  e2e,
  paymaster: (paymasterUrl) => new BiconomyPaymaster({ paymasterUrl }),
  sponsored: PaymasterMode.SPONSORED,
  sdkError: (message) => `Error coming from Paymaster: ${message}`,
};

describe('@biconomy/paymaster 4.x, SPONSORED, no webhook', () => {
  sponsoredCases.sponsoredWithoutWebhookTests(sdk);

  test('getPaymasterFeeQuotesOrData without a mode (the SDK then sends none): sponsored, and the SDK accepts the answer', async () => {
    const pm = new BiconomyPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.open) });
    const op = await e2e.nextOp();
    const r = await pm.getPaymasterFeeQuotesOrData(sponsoredCases.biconomyPartialOp(op), { calculateGasLimits: true });
    assert.equal('mode' in (e2e.lastCall().params[1] as object), false);
    await assertSponsoredOnChain(e2e.fx, applySdkFields(op, r));
  });
});

describe('@biconomy/paymaster 4.x with the dApp’s webhook', () => {
  sponsoredCases.sponsoredWithWebhookTests(sdk);
});
