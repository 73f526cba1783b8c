import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as accountSdk from '@biconomy/account';
import { decodePaymasterAndData, type UserOperationV06 } from '../src/paymaster/patronPaymasterV06.js';
import {
  accountSdkError,
  applySdkFields,
  assertSponsoredOnChain,
  DENIAL_MESSAGE,
  hex,
  lastSent,
  type RecordedCall,
  recordPaymasterFetches,
  type SdkE2e,
  type SdkSponsoredFields,
  startSdkE2e,
  stubErrorCatalogue,
  webhookBodies,
} from './helpers/sdkE2e.js';

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
interface PartialUserOp {
  readonly sender: string;
  readonly nonce: string;
  readonly initCode: string;
  readonly callData: string;
  readonly maxFeePerGas: string;
  readonly maxPriorityFeePerGas: string;
  readonly callGasLimit?: bigint;
  readonly verificationGasLimit?: bigint;
  readonly preVerificationGas?: bigint;
  readonly paymasterAndData: string;
  readonly signature: string;
}
interface PaymasterDto {
  readonly mode: SponsoredMode;
  readonly calculateGasLimits?: boolean;
  readonly expiryDuration?: number;
  readonly webhookData?: Record<string, unknown>;
}
interface AccountSdkPaymaster {
  getPaymasterFeeQuotesOrData(
    userOp: PartialUserOp,
    dto: PaymasterDto,
  ): Promise<SdkSponsoredFields & { feeQuotes?: unknown }>;
  getPaymasterAndData(userOp: PartialUserOp, dto: PaymasterDto): Promise<SdkSponsoredFields>;
}
interface AccountSdk {
  createPaymaster(config: { paymasterUrl: string; strictMode?: boolean }): Promise<AccountSdkPaymaster>;
  extractChainIdFromPaymasterUrl(url: string): number;
  readonly PaymasterMode: { readonly SPONSORED: SponsoredMode };
}
const { createPaymaster, extractChainIdFromPaymasterUrl, PaymasterMode } = accountSdk as unknown as AccountSdk;

let e2e: SdkE2e;
let wire: { calls: RecordedCall[]; restore(): void };
let catalogue: ReturnType<typeof stubErrorCatalogue>;

before(async () => {
  e2e = await startSdkE2e();
  catalogue = stubErrorCatalogue();
  wire = recordPaymasterFetches(e2e.base);
});
after(async () => {
  wire.restore();
  catalogue.restore();
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

describe('@biconomy/account 4.x createPaymaster, SPONSORED, no webhook', () => {
  test('the exports have the shape typed here; the SDK reads chain 31337 out of Patron’s paymaster URL', async () => {
    assert.equal(PaymasterMode.SPONSORED, 'SPONSORED');
    const pm = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.open) });
    assert.equal(typeof pm.getPaymasterFeeQuotesOrData, 'function');
    assert.equal(typeof pm.getPaymasterAndData, 'function');
    assert.equal(extractChainIdFromPaymasterUrl(e2e.paymasterUrl(e2e.open)), 31337);
    assert.equal(e2e.fx.chain.chainId, 31337);
  });

  test('getPaymasterFeeQuotesOrData with calculateGasLimits: Patron computes the limits; handleOps succeeds and our deposit pays', async () => {
    const pm = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.open) });
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
    const pm = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.open) });
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
    const pm = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.open) });
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
});

describe('@biconomy/account 4.x createPaymaster with the dApp’s webhook', () => {
  test('a webhook answering {"arePoliciesVerified": false}: both methods throw with our message, nothing is signed', async () => {
    const pm = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.denying) });
    for (const method of ['getPaymasterFeeQuotesOrData', 'getPaymasterAndData'] as const) {
      const op = await e2e.nextOp();
      const seen = e2e.receiver.requests.length;
      const catalogueFetches = catalogue.fetches();
      const dto = { mode: PaymasterMode.SPONSORED, calculateGasLimits: true, webhookData: { num: 2 } };
      const call =
        method === 'getPaymasterAndData'
          ? pm.getPaymasterAndData(partialOp(op), dto)
          : pm.getPaymasterFeeQuotesOrData(partialOp(op), dto);
      await assert.rejects(call, (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.equal(err.message, accountSdkError(DENIAL_MESSAGE));
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
      // The SDK went for its error catalogue to word the error (an empty catalogue is not cached: every time).
      assert.equal(catalogue.fetches(), catalogueFetches + 1, method);
    }
  });

  test('the even-number webhook: num 2 is sponsored and executes, num 3 is refused (webhookData via sponsorshipInfo)', async () => {
    const pm = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.even) });
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

      await assert.rejects(run(await e2e.nextOp(), 3), { message: accountSdkError(DENIAL_MESSAGE) });
      assert.equal(lastCall().status, 400);
      assert.deepEqual(
        webhookBodies(e2e.receiver, '/even', seen),
        [{ data: { num: 2 } }, { data: { num: 3 } }],
        method,
      );
    }
  });

  test('SDK limitation: without access to its error catalogue the SDK throws "fetch failed" and our reason is lost', async () => {
    const pm = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.denying) });
    catalogue.offline = true;
    try {
      await assert.rejects(
        pm.getPaymasterAndData(partialOp(await e2e.nextOp()), { mode: PaymasterMode.SPONSORED }),
        (err: unknown) => err instanceof TypeError && err.message === 'fetch failed',
      );
    } finally {
      catalogue.offline = false;
    }
    // Patron did answer with the reason; only this SDK's error path dropped it.
    assert.equal(lastCall().status, 400);
    assert.deepEqual((lastCall().response as { error?: unknown }).error, { code: -32010, message: DENIAL_MESSAGE });
  });
});
