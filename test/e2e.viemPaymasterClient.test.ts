import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BaseError, type Hex, http, InvalidParamsRpcError, RpcRequestError } from 'viem';
import { createPaymasterClient } from 'viem/account-abstraction';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import {
  assertSponsoredOnChain,
  DENIAL_MESSAGE,
  SPONSORED_PAYMASTER_AND_DATA_HEX_LENGTH,
  useSdkE2e,
  webhookBodies,
} from './helpers/sdkE2e.js';
import type { Tenant } from './helpers/testContext.js';

/**
 * viem's ERC-7677 `createPaymasterClient` (viem/account-abstraction), unmodified, against Patron listening on
 * 127.0.0.1, for EntryPoint v0.6: `getPaymasterStubData`, then `getPaymasterData` over the final gas values;
 * the `paymasterAndData` it returns is run through `handleOps` on the in-process EntryPoint v0.6.
 *
 * SDK behaviour this relies on (read from node_modules/viem/account-abstraction/actions/paymaster):
 * - params are `[userOp (all quantities hex), entryPointAddress, numberToHex(chainId), context]`; gas limits
 *   the caller left out go as `"0x0"`, a missing context as `null` (JSON of `undefined` in an array). The
 *   v0.6 userOp carries no `signature` and no `paymasterAndData`.
 * - The context is passed through untouched: Patron reads the same mode object as the Biconomy dialect, so
 *   webhook data goes in `context.sponsorshipInfo.webhookData`.
 * - The result is read field by field (`paymasterAndData`, `isFinal`, `sponsor`); anything else is dropped.
 * - Errors: a JSON-RPC error body on a 4xx keeps its class: a known code becomes its typed error
 *   (-32602 → InvalidParamsRpcError), an unknown one (Patron's -32010) stays an `RpcRequestError` with `code`,
 *   `details` = our message and `status` = 400. The http transport retries codes -1/-32005/-32603 and HTTP
 *   403/408/413/429/5xx only, so a refusal (400, -32010) is asked once: the webhook sees one request.
 */
const e2e = useSdkE2e();

const client = (tenant: Tenant) => createPaymasterClient({ transport: http(e2e.paymasterUrl(tenant)) });

/** The viem v0.6 paymaster parameters for an op: its fields as bigints, plus the target and a context. */
function params(op: UserOperationV06, context: unknown, withGas: boolean) {
  return {
    sender: op.sender,
    nonce: op.nonce,
    initCode: op.initCode,
    callData: op.callData,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    ...(withGas
      ? {
          callGasLimit: op.callGasLimit,
          verificationGasLimit: op.verificationGasLimit,
          preVerificationGas: op.preVerificationGas,
        }
      : {}),
    chainId: e2e.fx.chain.chainId,
    entryPointAddress: e2e.fx.entryPoint,
    context,
  };
}

function lastParams(): unknown[] {
  const body = e2e.calls.at(-1)?.body as { params?: unknown[] } | undefined;
  assert.ok(Array.isArray(body?.params), 'viem called the paymaster URL');
  return body.params;
}

/** The `RpcRequestError` (or typed subclass cause) viem threw, found by walking the cause chain. */
function rpcErrorOf(err: unknown): RpcRequestError {
  assert.ok(err instanceof BaseError, `expected a viem error, got ${String(err)}`);
  const found = err.walk((e) => e instanceof RpcRequestError);
  assert.ok(found instanceof RpcRequestError, `no RpcRequestError in ${err.message}`);
  return found;
}

/** Stub, then final data over the op's own gas values (what a wallet does after estimating on the stub). */
async function stubThenData(tenant: Tenant, op: UserOperationV06, context: unknown) {
  const pm = client(tenant);
  const stub = await pm.getPaymasterStubData(params(op, context, false));
  const stubParams = lastParams();
  const data = await pm.getPaymasterData(params(op, context, true));
  return { stub, stubParams, data, dataParams: lastParams() };
}

describe('viem createPaymasterClient (ERC-7677), EntryPoint v0.6', () => {
  test('stub then data with context {mode: SPONSORED}: the final paymasterAndData validates and our deposit pays', async () => {
    const op = await e2e.nextOp();
    const { stub, stubParams, data, dataParams } = await stubThenData(e2e.open, op, { mode: 'SPONSORED' });

    assert.deepEqual(stubParams.slice(1), [e2e.fx.entryPoint, '0x7a69', { mode: 'SPONSORED' }]);
    assert.equal((stubParams[0] as { callGasLimit?: unknown }).callGasLimit, '0x0');
    assert.equal(stub.isFinal, false);
    assert.deepEqual(stub.sponsor, { name: 'Patron' });
    assert.equal(stub.paymasterAndData?.length, SPONSORED_PAYMASTER_AND_DATA_HEX_LENGTH);
    assert.equal(stub.paymasterAndData?.slice(0, 42).toLowerCase(), e2e.fx.paymaster.toLowerCase());

    assert.equal((dataParams[0] as { callGasLimit?: unknown }).callGasLimit, `0x${op.callGasLimit.toString(16)}`);
    const paymasterAndData = data.paymasterAndData;
    assert.ok(paymasterAndData !== undefined, 'getPaymasterData returned paymasterAndData');
    assert.equal(paymasterAndData.length, stub.paymasterAndData?.length, 'the stub has the final length');
    assert.notEqual(paymasterAndData, stub.paymasterAndData);
    await assertSponsoredOnChain(e2e.fx, { ...op, paymasterAndData });
  });

  test('no context at all (viem sends null): sponsored like mode SPONSORED', async () => {
    const op = await e2e.nextOp();
    const data = await client(e2e.open).getPaymasterData(params(op, undefined, true));
    assert.equal(lastParams()[3], null);
    const paymasterAndData: Hex | undefined = data.paymasterAndData;
    assert.ok(paymasterAndData !== undefined);
    await assertSponsoredOnChain(e2e.fx, { ...op, paymasterAndData });
  });

  test('getPaymasterData without gas values is InvalidParamsRpcError -32602 naming the field', async () => {
    const op = await e2e.nextOp();
    await assert.rejects(
      client(e2e.open).getPaymasterData(params(op, { mode: 'SPONSORED' }, false)),
      (err: unknown) => {
        assert.ok(err instanceof InvalidParamsRpcError, String(err));
        assert.equal(err.code, -32602);
        const rpc = rpcErrorOf(err);
        assert.equal(rpc.details, 'Invalid params: params[0].callGasLimit: required when calculateGasLimits is false');
        assert.equal(rpc.status, 400);
        return true;
      },
    );
  });
});

describe('viem createPaymasterClient with the dApp’s webhook', () => {
  test('a webhook answering {"arePoliciesVerified": false}: getPaymasterData throws a typed error with our code and message; one webhook call, no retry', async () => {
    const op = await e2e.nextOp();
    const pm = client(e2e.denying);
    const seen = e2e.receiver.requests.length;
    // The stub carries a dummy signature and does not consult the webhook (Patron asks it once, at signing).
    const stub = await pm.getPaymasterStubData(params(op, { mode: 'SPONSORED' }, false));
    assert.equal(stub.isFinal, false);
    assert.equal(e2e.receiver.requests.length, seen);

    const context = { mode: 'SPONSORED', sponsorshipInfo: { webhookData: { num: 2 } } };
    await assert.rejects(pm.getPaymasterData(params(op, context, true)), (err: unknown) => {
      const rpc = rpcErrorOf(err);
      assert.equal(rpc.code, -32010);
      assert.equal(rpc.details, DENIAL_MESSAGE);
      assert.equal(rpc.status, 400);
      assert.ok(err instanceof BaseError && err.message.includes(DENIAL_MESSAGE));
      return true;
    });
    const answered = e2e.calls.at(-1);
    assert.equal(answered?.status, 400);
    assert.equal((answered?.response as { result?: unknown } | undefined)?.result, undefined, 'nothing signed');
    assert.deepEqual(webhookBodies(e2e.receiver, '/deny', seen), [{ data: { num: 2 } }]);
  });

  test('the even-number webhook: context.sponsorshipInfo.webhookData num 2 is sponsored and executes, num 3 is refused (-32010)', async () => {
    const seen = e2e.receiver.requests.length;
    const yes = await e2e.nextOp();
    const two = { mode: 'SPONSORED', sponsorshipInfo: { webhookData: { num: 2 } } };
    const { data, dataParams } = await stubThenData(e2e.even, yes, two);
    assert.deepEqual(dataParams[3], two);
    assert.ok(data.paymasterAndData !== undefined);
    await assertSponsoredOnChain(e2e.fx, { ...yes, paymasterAndData: data.paymasterAndData });

    const three = { mode: 'SPONSORED', sponsorshipInfo: { webhookData: { num: 3 } } };
    await assert.rejects(stubThenData(e2e.even, await e2e.nextOp(), three), (err: unknown) => {
      assert.equal(rpcErrorOf(err).code, -32010);
      return true;
    });
    assert.deepEqual(webhookBodies(e2e.receiver, '/even', seen), [{ data: { num: 2 } }, { data: { num: 3 } }]);
  });
});
