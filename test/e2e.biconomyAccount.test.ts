import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as accountSdk from '@biconomy/account';
import * as sponsoredCases from './helpers/biconomySponsoredCases.js';
import { accountSdkError, DENIAL_MESSAGE, useSdkE2e } from './helpers/sdkE2e.js';

/**
 * `@biconomy/account` 4.x, its paymaster half (`createPaymaster({ paymasterUrl })`, the object the smart
 * account's `buildUserOp` calls), unmodified, against Patron listening on 127.0.0.1; every `paymasterAndData`
 * it hands back is run through `handleOps` on the in-process EntryPoint v0.6.
 *
 * The paymaster code is a copy of `@biconomy/paymaster` 4.x (see e2e.biconomyPaymaster.test.ts for the wire
 * quirks: hex nonce/fees and decimal limits, `tokenInfo: {}`, `sponsorshipInfo.smartAccountInfo` always sent,
 * webhookData in `sponsorshipInfo.webhookData`, lower-case `result.mode` checked by getPaymasterFeeQuotesOrData,
 * error bodies read only on a non-2xx status, hence Patron's HTTP 400). What differs, and what this file
 * accommodates:
 * - Packaging: 4.6.3 imports `tslib` at run time without declaring it (dist/_esm/account/utils/EthersSigner.js),
 *   so `import '@biconomy/account'` fails with ERR_MODULE_NOT_FOUND unless the app has tslib; it is a dev
 *   dependency here for that reason. Its subpath exports (`@biconomy/account/paymaster`) point at paths
 *   without `dist/` and do not resolve: only the root import works.
 * - Typings: dist/_types/index.d.ts re-exports extensionless paths (`export * from "./account"`), which
 *   resolve to nothing under `moduleResolution: NodeNext`, so every named import is TS2305 although it exists
 *   at run time. The slice used here is typed by hand below, and the first test checks it at run time.
 * - The smart account (not `createPaymaster`) takes the chain id from the paymaster URL with
 *   `/\/api\/v\d+\/(\d+)\//` and compares it with the signer's chain: Patron's URL yields 31337.
 * - On a non-2xx answer it builds the error with `getAAError`, which first downloads Biconomy's error
 *   catalogue (raw.githubusercontent.com/bcnmy/aa-errors/.../errors.json) with the global `fetch`. Offline,
 *   that download fails and the SDK throws `TypeError: fetch failed`, losing the paymaster's message (a test
 *   below pins this). This machine has no network, so the catalogue URL is answered here with an empty list;
 *   every other request goes out untouched. The message then reads
 *   "Unknown Error\n520\n<docs url>\n\n\"Error coming from Paymaster: <our message>\"" (the reason is JSON-quoted
 *   and the HTTP status is not passed on: 520 is its "unknown"); the JSON-RPC code is dropped.
 */
type SponsoredMode = 'SPONSORED';
/** Its paymaster's slice: the same two methods as @biconomy/paymaster's, typed once in the shared cases. */
type AccountSdkPaymaster = sponsoredCases.BiconomySponsoredPaymaster<SponsoredMode>;
interface AccountSdk {
  createPaymaster(config: { paymasterUrl: string; strictMode?: boolean }): Promise<AccountSdkPaymaster>;
  extractChainIdFromPaymasterUrl(url: string): number;
  readonly PaymasterMode: { readonly SPONSORED: SponsoredMode };
}
const { createPaymaster, extractChainIdFromPaymasterUrl, PaymasterMode } = accountSdk as unknown as AccountSdk;

const e2e = useSdkE2e({ errorCatalogue: true });

/** The shared SPONSORED checks (helpers/biconomySponsoredCases.ts) run against this SDK. */
const sdk: sponsoredCases.BiconomySdk<SponsoredMode> = {
  e2e,
  paymaster: (paymasterUrl) => createPaymaster({ paymasterUrl }),
  sponsored: PaymasterMode.SPONSORED,
  sdkError: accountSdkError,
  get catalogue() {
    return e2e.catalogue;
  },
};

describe('@biconomy/account 4.x createPaymaster, SPONSORED, no webhook', () => {
  test('the exports have the shape typed here; the SDK reads chain 31337 out of Patron’s paymaster URL', async () => {
    assert.equal(PaymasterMode.SPONSORED, 'SPONSORED');
    const pm = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.open) });
    assert.equal(typeof pm.getPaymasterFeeQuotesOrData, 'function');
    assert.equal(typeof pm.getPaymasterAndData, 'function');
    assert.equal(extractChainIdFromPaymasterUrl(e2e.paymasterUrl(e2e.open)), 31337);
    assert.equal(e2e.fx.chain.chainId, 31337);
  });

  sponsoredCases.sponsoredWithoutWebhookTests(sdk);
});

describe('@biconomy/account 4.x createPaymaster with the dApp’s webhook', () => {
  sponsoredCases.sponsoredWithWebhookTests(sdk);

  test('SDK limitation: without access to its error catalogue the SDK throws "fetch failed" and our reason is lost', async () => {
    const pm = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.denying) });
    e2e.catalogue.offline = true;
    try {
      await assert.rejects(
        pm.getPaymasterAndData(sponsoredCases.biconomyPartialOp(await e2e.nextOp()), { mode: PaymasterMode.SPONSORED }),
        (err: unknown) => err instanceof TypeError && err.message === 'fetch failed',
      );
    } finally {
      e2e.catalogue.offline = false;
    }
    // Patron did answer with the reason; only this SDK's error path dropped it.
    assert.equal(e2e.lastCall().status, 400);
    assert.deepEqual((e2e.lastCall().response as { error?: unknown }).error, {
      code: -32010,
      message: DENIAL_MESSAGE,
    });
  });
});
