import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodePaymasterAndData,
  type UserOperationV06,
} from '../../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import {
  applySdkFields,
  assertSponsoredOnChain,
  DENIAL_MESSAGE,
  type ErrorCatalogueStub,
  hex,
  type SdkE2eSuite,
  type SdkSponsoredFields,
  webhookBodies,
} from './sdkE2e.js';

/**
 * The SPONSORED-mode checks that hold for both Biconomy v0.6 SDKs: `@biconomy/paymaster` 4.x and the copy of it
 * inside `@biconomy/account` 4.x (`createPaymaster`). They send the same wire format, so each e2e file runs
 * these against its own client and keeps only what differs (how the client is made, how it words an error,
 * the account SDK's error-catalogue download).
 */
export const SMART_ACCOUNT_INFO = { name: 'BICONOMY', version: '2.0.0' };

/** The partial op as `@biconomy/account`'s `buildUserOp` hands it to the paymaster: hex nonce/fees, no limits. */
export function biconomyPartialOp(op: UserOperationV06) {
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

/** The partial op both SDKs take: biconomyPartialOp's fields, plus the gas limits as bigints when the caller has them. */
export type BiconomyPartialOp = ReturnType<typeof biconomyPartialOp> & {
  readonly callGasLimit?: bigint;
  readonly verificationGasLimit?: bigint;
  readonly preVerificationGas?: bigint;
};
interface SponsoredDto<Mode> {
  readonly mode: Mode;
  readonly calculateGasLimits?: boolean;
  readonly expiryDuration?: number;
  readonly webhookData?: Record<string, unknown>;
}
/** The two methods both SDKs share; `Mode` is the SDK's own `PaymasterMode.SPONSORED` type. */
export interface BiconomySponsoredPaymaster<Mode> {
  getPaymasterFeeQuotesOrData(
    userOp: BiconomyPartialOp,
    dto: SponsoredDto<Mode>,
  ): Promise<SdkSponsoredFields & { feeQuotes?: unknown }>;
  getPaymasterAndData(userOp: BiconomyPartialOp, dto: SponsoredDto<Mode>): Promise<SdkSponsoredFields>;
}

export interface BiconomySdk<Mode> {
  readonly e2e: SdkE2eSuite;
  /** The SDK's paymaster object for a paymaster URL. */
  paymaster(paymasterUrl: string): BiconomySponsoredPaymaster<Mode> | Promise<BiconomySponsoredPaymaster<Mode>>;
  /** The SDK's `PaymasterMode.SPONSORED`. */
  readonly sponsored: Mode;
  /** The message the SDK throws for a paymaster's JSON-RPC error message. */
  sdkError(message: string): string;
  /** `@biconomy/account` downloads its error catalogue once per refusal; checked when given. */
  readonly catalogue?: ErrorCatalogueStub;
}

const METHODS = ['getPaymasterFeeQuotesOrData', 'getPaymasterAndData'] as const;

/** Declares, in the calling `describe`, the SPONSORED tests without a webhook that both SDKs pass. */
export function sponsoredWithoutWebhookTests<Mode>(sdk: BiconomySdk<Mode>): void {
  test('getPaymasterFeeQuotesOrData with calculateGasLimits: Patron computes the limits; handleOps succeeds and our deposit pays', () =>
    feeQuotesWithComputedLimits(sdk));

  test('getPaymasterAndData (pm_sponsorUserOperation) with calculateGasLimits: handleOps succeeds', () =>
    sponsorUserOperationWithComputedLimits(sdk));

  test('calculateGasLimits false: the caller’s limits come back unchanged (both methods) and the signature covers them', () =>
    callerLimitsKept(sdk));
}

/** Declares, in the calling `describe`, the tests with the dApp's webhook that both SDKs pass. */
export function sponsoredWithWebhookTests<Mode>(sdk: BiconomySdk<Mode>): void {
  test('a webhook answering {"arePoliciesVerified": false}: both methods throw with our message, nothing is signed', () =>
    denyingWebhookRefuses(sdk));

  test('the even-number webhook: num 2 is sponsored and executes, num 3 is refused (webhookData via sponsorshipInfo)', () =>
    evenWebhookDecides(sdk));
}

async function feeQuotesWithComputedLimits<Mode>(sdk: BiconomySdk<Mode>): Promise<void> {
  const { e2e } = sdk;
  const pm = await sdk.paymaster(e2e.paymasterUrl(e2e.open));
  const op = await e2e.nextOp();
  const r = await pm.getPaymasterFeeQuotesOrData(biconomyPartialOp(op), {
    mode: sdk.sponsored,
    calculateGasLimits: true,
  });

  const sent = e2e.lastCall();
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
}

async function sponsorUserOperationWithComputedLimits<Mode>(sdk: BiconomySdk<Mode>): Promise<void> {
  const { e2e } = sdk;
  const pm = await sdk.paymaster(e2e.paymasterUrl(e2e.open));
  const op = await e2e.nextOp();
  const r = await pm.getPaymasterAndData(biconomyPartialOp(op), { mode: sdk.sponsored, calculateGasLimits: true });

  const sent = e2e.lastCall();
  assert.equal(sent.method, 'pm_sponsorUserOperation');
  assert.deepEqual(sent.params[1], {
    mode: 'SPONSORED',
    calculateGasLimits: true,
    sponsorshipInfo: { smartAccountInfo: SMART_ACCOUNT_INFO },
  });
  await assertSponsoredOnChain(e2e.fx, applySdkFields(op, r));
}

async function callerLimitsKept<Mode>(sdk: BiconomySdk<Mode>): Promise<void> {
  const { e2e } = sdk;
  const pm = await sdk.paymaster(e2e.paymasterUrl(e2e.open));
  for (const method of METHODS) {
    const op = await e2e.nextOp();
    // Limits as bigints: the SDK turns them into decimal strings on the wire.
    const withLimits = {
      ...biconomyPartialOp(op),
      callGasLimit: op.callGasLimit,
      verificationGasLimit: op.verificationGasLimit,
      preVerificationGas: op.preVerificationGas,
    };
    const dto = { mode: sdk.sponsored, calculateGasLimits: false, expiryDuration: 600 };
    const r =
      method === 'getPaymasterAndData'
        ? await pm.getPaymasterAndData(withLimits, dto)
        : await pm.getPaymasterFeeQuotesOrData(withLimits, dto);

    const { userOp, params } = e2e.lastCall();
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
}

async function denyingWebhookRefuses<Mode>(sdk: BiconomySdk<Mode>): Promise<void> {
  const { e2e } = sdk;
  const pm = await sdk.paymaster(e2e.paymasterUrl(e2e.denying));
  for (const method of METHODS) {
    const op = await e2e.nextOp();
    const seen = e2e.receiver.requests.length;
    const catalogueFetches = sdk.catalogue?.fetches();
    const dto = { mode: sdk.sponsored, calculateGasLimits: true, webhookData: { num: 2 } };
    const call =
      method === 'getPaymasterAndData'
        ? pm.getPaymasterAndData(biconomyPartialOp(op), dto)
        : pm.getPaymasterFeeQuotesOrData(biconomyPartialOp(op), dto);
    await assert.rejects(call, (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.equal(err.message, sdk.sdkError(DENIAL_MESSAGE));
      return true;
    });
    const sent = e2e.lastCall();
    assert.equal(sent.status, 400, method);
    assert.deepEqual(sent.response, {
      jsonrpc: '2.0',
      id: sent.id,
      error: { code: -32010, message: DENIAL_MESSAGE },
    });
    assert.deepEqual(webhookBodies(e2e.receiver, '/deny', seen), [{ data: { num: 2 } }], method);
    if (sdk.catalogue && catalogueFetches !== undefined) {
      // The SDK went for its error catalogue to word the error (an empty catalogue is not cached: every time).
      assert.equal(sdk.catalogue.fetches(), catalogueFetches + 1, method);
    }
  }
}

async function evenWebhookDecides<Mode>(sdk: BiconomySdk<Mode>): Promise<void> {
  const { e2e } = sdk;
  const pm = await sdk.paymaster(e2e.paymasterUrl(e2e.even));
  for (const method of METHODS) {
    const run = (op: UserOperationV06, num: number) => {
      const dto = { mode: sdk.sponsored, calculateGasLimits: true, webhookData: { num } };
      return method === 'getPaymasterAndData'
        ? pm.getPaymasterAndData(biconomyPartialOp(op), dto)
        : pm.getPaymasterFeeQuotesOrData(biconomyPartialOp(op), dto);
    };
    const seen = e2e.receiver.requests.length;
    const yes = await e2e.nextOp();
    const r = await run(yes, 2);
    assert.deepEqual(
      (e2e.lastCall().params[1] as { sponsorshipInfo?: unknown }).sponsorshipInfo,
      { webhookData: { num: 2 }, smartAccountInfo: SMART_ACCOUNT_INFO },
      method,
    );
    await assertSponsoredOnChain(e2e.fx, applySdkFields(yes, r));

    await assert.rejects(run(await e2e.nextOp(), 3), { message: sdk.sdkError(DENIAL_MESSAGE) });
    assert.equal(e2e.lastCall().status, 400);
    assert.deepEqual(webhookBodies(e2e.receiver, '/even', seen), [{ data: { num: 2 } }, { data: { num: 3 } }], method);
  }
}
