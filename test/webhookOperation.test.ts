import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Hex, pad, toHex } from 'viem';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { worstCaseCostV06 } from '../src/paymaster/entryPoints/v06/prefundV06.js';
import { worstCaseCostV07 } from '../src/paymaster/entryPoints/v07/chargesV07.js';
import { decodePaymasterAndDataV07 } from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { checkSponsorshipWebhooks } from '../src/webhooks/webhookCheck.js';
import { INCLUDE_OPERATION_GET_MESSAGE } from '../src/webhooks/webhookService.js';
import { buildDeployingOp, type PatronFixture, signAccount, submitHandleOps } from './helpers/patronPaymasterV06.js';
import { biconomyWireOp, type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { hexWire, newSimpleAccountOp } from './helpers/rpcV07.js';
import { createTenant, type Tenant, type TestContext, WEBHOOK_PATH, webhookHeaders } from './helpers/testContext.js';
import { answer, type Receiver, signedWith, startReceiver } from './helpers/webhookReceiver.js';

/**
 * includeOperation (docs/guides/webhooks.md, "Webhooks"): a webhook with it sees the op it approves, with the final gas limits
 * the answer returns, beside the spec's `data`; without it the body stays exactly `{"data": ...}`. End to end:
 * the app through inject, a real receiver on 127.0.0.1, every signed op submitted to the in-process EntryPoint.
 */
let app: RpcFixture;
let fx: PatronFixture;
let ctx: TestContext;
let receiver: Receiver;
let salt = 100n;

before(async () => {
  app = await startRpcFixture();
  ({ fx, ctx } = app);
  receiver = await startReceiver(answer({ arePoliciesVerified: true }));
});
after(async () => {
  await receiver.close();
  await app.close();
});

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** The spec's webhook API (webhookParameters). */
async function spec(t: Tenant, method: Method, payload: unknown) {
  const res = await ctx.app.inject({
    method,
    url: WEBHOOK_PATH,
    headers: webhookHeaders(t),
    payload: payload as object,
  });
  return { status: res.statusCode, body: res.json() as { message: string; data?: Record<string, unknown> } };
}

/** The admin API (the dashboard's), with the account's auth token. */
async function admin(t: Tenant, method: Method, url: string, body?: unknown) {
  const res = await ctx.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${t.authToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return { status: res.statusCode, body: res.json() as { message: string; data?: unknown } };
}
const hooksOf = (t: Tenant) => `/api/admin/dapps/${t.dappId}/webhooks`;

/** A tenant with one POST webhook on the receiver; returns its secret. */
async function tenantWithWebhook(includeOperation: boolean | undefined) {
  const t = await createTenant(ctx.deps);
  const r = await spec(t, 'POST', {
    webhookUrl: receiver.url(`/${t.dappId}`),
    requestType: 'POST',
    ...(includeOperation === undefined ? {} : { includeOperation }),
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return { t, secret: String(r.body.data?.signingSecret), webhookId: String(r.body.data?.webhookId) };
}

const callsTo = (t: Tenant) => receiver.requests.filter((r) => r.url === `/${t.dappId}`);

/** Submits the op with handleOps: the signed paymasterAndData must be accepted by the real EntryPoint v0.6. */
async function submit(op: UserOperationV06) {
  const { receipt, events } = await submitHandleOps(fx, [await signAccount(fx, op)]);
  assert.equal(receipt.status, 'success');
  assert.equal(events[0]?.args.success, true);
}

function applyResult(op: UserOperationV06, r: Record<string, unknown>): UserOperationV06 {
  return {
    ...op,
    paymasterAndData: r.paymasterAndData as Hex,
    callGasLimit: BigInt(r.callGasLimit as number),
    verificationGasLimit: BigInt(r.verificationGasLimit as number),
    preVerificationGas: BigInt(r.preVerificationGas as string),
  };
}

async function sponsor(t: Tenant, op: UserOperationV06, calculateGasLimits: boolean) {
  const { status, body } = await app.rpc(
    'pm_sponsorUserOperation',
    [biconomyWireOp(op, !calculateGasLimits), { mode: 'SPONSORED', calculateGasLimits, webhookData: { num: 2 } }],
    { apiKey: t.apiKey },
  );
  return { status, body };
}

const hex = (n: bigint) => `0x${n.toString(16)}`;

describe('the body a webhook receives', () => {
  test('option off: exactly {"data": webhookData}, signed, as before', async () => {
    const { t, secret } = await tenantWithWebhook(undefined);
    const op = await buildDeployingOp(fx, salt++);
    const { status, body } = await sponsor(t, op, false);
    assert.equal(status, 200, JSON.stringify(body));
    const [call] = callsTo(t);
    assert.equal(call?.body, '{"data":{"num":2}}');
    assert.equal(signedWith(secret, call), true);
    await submit(applyResult(op, body.result ?? {}));
  });

  for (const calculateGasLimits of [false, true]) {
    test(`option on, calculateGasLimits ${calculateGasLimits}: the op with the answer's final limits, signed; the op executes`, async () => {
      const { t, secret } = await tenantWithWebhook(true);
      const policy = await ctx.deps.policies.create({ dappId: t.dappId, name: 'all', rules: {} });
      const op = await buildDeployingOp(fx, salt++);
      const { status, body } = await sponsor(t, op, calculateGasLimits);
      assert.equal(status, 200, JSON.stringify(body));
      const final = applyResult(op, body.result ?? {});
      const [call] = callsTo(t);
      assert.equal(signedWith(secret, call), true, 'Standard Webhooks signature over the whole body');
      // `data` first and unchanged, so a receiver reading body.data works as before.
      assert.ok(call?.body.startsWith('{"data":{"num":2},"operation":{'), call?.body);
      const sent = JSON.parse(call?.body ?? '{}') as Record<string, unknown>;
      assert.deepEqual(Object.keys(sent), ['data', 'operation']);
      const operation = sent.operation as Record<string, unknown>;
      const validUntil = operation.validUntil as number;
      const validAfter = operation.validAfter as number;
      assert.deepEqual(operation, {
        mode: 'SPONSORED',
        userOperation: {
          sender: op.sender,
          nonce: hex(op.nonce),
          // Bytes as the service parsed them: lower-case hex.
          initCode: op.initCode.toLowerCase(),
          callData: op.callData.toLowerCase(),
          callGasLimit: hex(final.callGasLimit),
          verificationGasLimit: hex(final.verificationGasLimit),
          preVerificationGas: hex(final.preVerificationGas),
          maxFeePerGas: hex(op.maxFeePerGas),
          maxPriorityFeePerGas: hex(op.maxPriorityFeePerGas),
          signature: '0x',
        },
        chainId: fx.chain.chainId,
        entryPoint: fx.entryPoint,
        paymaster: fx.paymaster,
        dappId: t.dappId,
        policyIds: [policy.id],
        worstCaseCostWei: worstCaseCostV06(final, op.maxFeePerGas).toString(),
        validUntil,
        validAfter,
      });
      // The window sent is the one signed: paymasterAndData = paymaster | mode | validUntil | validAfter | sig.
      assert.equal(BigInt(`0x${final.paymasterAndData.slice(2 + 42, 2 + 54)}`), BigInt(validUntil));
      assert.equal(BigInt(`0x${final.paymasterAndData.slice(2 + 54, 2 + 66)}`), BigInt(validAfter));
      if (!calculateGasLimits) assert.equal(final.callGasLimit, op.callGasLimit, "the caller's limits are kept");
      await submit(final);
    });
  }

  test('option on, no policy: policyIds is []', async () => {
    const { t } = await tenantWithWebhook(true);
    const { status, body } = await sponsor(t, await buildDeployingOp(fx, salt++), false);
    assert.equal(status, 200, JSON.stringify(body));
    const sent = JSON.parse(callsTo(t)[0]?.body ?? '{}') as { operation: { policyIds: unknown } };
    assert.deepEqual(sent.operation.policyIds, []);
  });

  test('option on: the gas bounds are checked before the call (an op out of bounds never reaches the webhook)', async () => {
    const { t } = await tenantWithWebhook(true);
    const op = { ...(await buildDeployingOp(fx, salt++)), callGasLimit: 20_000_000n };
    const { status, body } = await sponsor(t, op, false);
    assert.equal(status, 400, JSON.stringify(body));
    assert.match(body.error?.message ?? '', /callGasLimit/);
    assert.equal(callsTo(t).length, 0);
  });

  test('option off: the order is unchanged (the webhook is asked before the gas bounds)', async () => {
    const { t } = await tenantWithWebhook(false);
    const op = { ...(await buildDeployingOp(fx, salt++)), callGasLimit: 20_000_000n };
    const { status, body } = await sponsor(t, op, false);
    assert.equal(status, 400, JSON.stringify(body));
    assert.match(body.error?.message ?? '', /callGasLimit/);
    assert.equal(callsTo(t).length, 1);
  });

  test('a dApp with one webhook on and one off: each gets its own body', async () => {
    const { t } = await tenantWithWebhook(true);
    const other = receiver.url(`/${t.dappId}-plain`);
    assert.equal((await spec(t, 'POST', { webhookUrl: other, requestType: 'POST' })).status, 200);
    const { status } = await sponsor(t, await buildDeployingOp(fx, salt++), false);
    assert.equal(status, 200);
    const plain = receiver.requests.filter((r) => r.url === `/${t.dappId}-plain`);
    assert.equal(plain[0]?.body, '{"data":{"num":2}}');
    assert.ok('operation' in (JSON.parse(callsTo(t)[0]?.body ?? '{}') as object));
  });
});

describe('v0.7+: the webhook is shown what the signature binds', () => {
  /** An ERC-7677 data call for a fresh SimpleAccount v0.7 op; the webhook's `operation` and the answer. */
  async function dataCall(t: Tenant, gas: Record<string, bigint>, context: Record<string, unknown>) {
    const { op } = await newSimpleAccountOp(fx, '0.7', [
      { to: '0x00000000000000000000000000000000c0c0c0c0', data: '0x' },
    ]);
    const { status, body } = await app.rpc(
      'pm_getPaymasterData',
      [
        hexWire({ ...op, ...gas }),
        fx.entryPoints['0.7'],
        toHex(fx.chain.chainId),
        { ...context, webhookData: { num: 2 } },
      ],
      { apiKey: t.apiKey },
    );
    assert.equal(status, 200, JSON.stringify(body));
    const sent = JSON.parse(callsTo(t).at(-1)?.body ?? '{}') as { operation: Record<string, unknown> };
    const result = body.result ?? {};
    // paymasterAndData as the EntryPoint packs it: paymaster ‖ the two uint128 limits ‖ paymasterData.
    const limit = (k: string) => pad(toHex(BigInt(String(result[k]))), { size: 16 }).slice(2);
    const signed = decodePaymasterAndDataV07(
      `${result.paymaster as Hex}${limit('paymasterVerificationGasLimit')}${limit('paymasterPostOpGasLimit')}${(result.paymasterData as Hex).slice(2)}` as Hex,
    );
    return { op, sent: sent.operation, result, signed };
  }

  test('limits left out (calculateGasLimits): the caps the signature binds, the paymaster gas limits, the worst case at the caps', async () => {
    const { t } = await tenantWithWebhook(true);
    const { op, sent, result, signed } = await dataCall(t, {}, { calculateGasLimits: true });
    const u = sent.userOperation as Record<string, string>;
    // The limits shown are the answer's; the caps are what the signature binds, beside them.
    assert.equal(u.callGasLimit, result.callGasLimit);
    assert.equal(u.preVerificationGas, result.preVerificationGas);
    assert.deepEqual(sent.gasCaps, {
      maxCallGasLimit: toHex(signed.caps.maxCallGasLimit),
      maxVerificationGasLimit: toHex(signed.caps.maxVerificationGasLimit),
      maxPreVerificationGas: toHex(signed.caps.maxPreVerificationGas),
    });
    assert.ok(signed.caps.maxCallGasLimit > BigInt(u.callGasLimit ?? '0'), 'caps above the limits (headroom)');
    assert.equal(u.paymasterVerificationGasLimit, toHex(signed.paymasterVerificationGasLimit));
    assert.equal(u.paymasterPostOpGasLimit, toHex(signed.paymasterPostOpGasLimit));
    const atCaps = worstCaseCostV07(
      {
        ...signed.caps,
        paymasterVerificationGasLimit: signed.paymasterVerificationGasLimit,
        paymasterPostOpGasLimit: signed.paymasterPostOpGasLimit,
      },
      op.maxFeePerGas,
    );
    assert.equal(sent.worstCaseCostWei, atCaps.toString());
    assert.equal(sent.entryPointVersion, '0.7');
  });

  test('limits given: exact binding, no gasCaps (the limits shown are the caps)', async () => {
    const { t } = await tenantWithWebhook(true);
    const gas = { callGasLimit: 60_000n, verificationGasLimit: 300_000n, preVerificationGas: 55_000n };
    const { sent, signed } = await dataCall(t, gas, {});
    assert.equal('gasCaps' in sent, false);
    assert.equal(signed.caps.maxCallGasLimit, gas.callGasLimit);
    assert.equal((sent.userOperation as Record<string, string>).callGasLimit, toHex(gas.callGasLimit));
  });
});

describe('failing closed', () => {
  test('a check that cannot give the operation rejects before calling a webhook that wants it', async () => {
    const { t } = await tenantWithWebhook(true);
    await assert.rejects(
      checkSponsorshipWebhooks({ webhooks: ctx.deps.webhooks, caller: ctx.deps.webhookCaller, dappId: t.dappId }),
      /wants the operation/,
    );
    assert.equal(callsTo(t).length, 0);
  });

  test("the dashboard's test call sends data only, signed", async () => {
    const { t, secret, webhookId } = await tenantWithWebhook(true);
    const r = await admin(t, 'POST', `${hooksOf(t)}/${webhookId}/test`, { webhookData: { num: 4 } });
    assert.equal((r.body.data as { verified: boolean }).verified, true);
    assert.equal(callsTo(t)[0]?.body, '{"data":{"num":4}}');
    assert.equal(signedWith(secret, callsTo(t)[0]), true);
  });
});

describe('GET webhooks cannot have the option (their signature does not cover the query string)', () => {
  test("the spec's Create refuses it with 400; without it a GET webhook is created as before", async () => {
    const t = await createTenant(ctx.deps);
    const refused = await spec(t, 'POST', {
      webhookUrl: receiver.url('/g'),
      requestType: 'GET',
      includeOperation: true,
    });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, { statusCode: 400, message: INCLUDE_OPERATION_GET_MESSAGE });
    const off = await spec(t, 'POST', { webhookUrl: receiver.url('/g'), requestType: 'GET', includeOperation: false });
    assert.equal(off.status, 200);
    assert.equal('includeOperation' in (off.body.data ?? {}), false);
  });

  test('the admin API refuses it at creation and by update', async () => {
    const t = await createTenant(ctx.deps);
    const url = receiver.url('/g');
    const create = await admin(t, 'POST', hooksOf(t), { webhookUrl: url, requestType: 'GET', includeOperation: true });
    assert.equal(create.status, 400);
    assert.equal(create.body.message, INCLUDE_OPERATION_GET_MESSAGE);
    const made = await admin(t, 'POST', hooksOf(t), { webhookUrl: url, requestType: 'GET' });
    const id = (made.body.data as { webhookId: string }).webhookId;
    const update = await admin(t, 'PATCH', `${hooksOf(t)}/${id}`, { includeOperation: true });
    assert.equal(update.status, 400);
    assert.equal(update.body.message, INCLUDE_OPERATION_GET_MESSAGE);
    // Turning it off is always allowed (a no-op here).
    assert.equal((await admin(t, 'PATCH', `${hooksOf(t)}/${id}`, { includeOperation: false })).status, 200);
  });
});

describe('the option through the APIs', () => {
  test('admin API: create with it, list shows it, update it off and on, with active in the same call', async () => {
    const t = await createTenant(ctx.deps);
    const made = await admin(t, 'POST', hooksOf(t), {
      webhookUrl: receiver.url('/a'),
      requestType: 'POST',
      includeOperation: true,
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const created = made.body.data as { webhookId: string; includeOperation?: boolean };
    assert.equal(created.includeOperation, true);
    const listed = async () => ((await admin(t, 'GET', hooksOf(t))).body.data as { includeOperation?: boolean }[])[0];
    assert.equal((await listed())?.includeOperation, true);

    const off = await admin(t, 'PATCH', `${hooksOf(t)}/${created.webhookId}`, { includeOperation: false });
    assert.equal(off.status, 200);
    // Off is shown as absent: the view of a webhook without the option keeps its earlier shape.
    assert.equal('includeOperation' in (off.body.data as object), false);
    assert.equal('includeOperation' in ((await listed()) ?? {}), false);

    const both = await admin(t, 'PATCH', `${hooksOf(t)}/${created.webhookId}`, {
      includeOperation: true,
      active: false,
    });
    assert.deepEqual(
      [
        (both.body.data as { active: boolean }).active,
        (both.body.data as { includeOperation?: boolean }).includeOperation,
      ],
      [false, true],
    );
  });

  test('admin API: an empty update or a non-boolean is 400 naming the fields', async () => {
    const { t, webhookId } = await tenantWithWebhook(false);
    const empty = await admin(t, 'PATCH', `${hooksOf(t)}/${webhookId}`, {});
    assert.deepEqual([empty.status, empty.body.message], [400, 'Give at least one of active, includeOperation']);
    const bad = await admin(t, 'PATCH', `${hooksOf(t)}/${webhookId}`, { includeOperation: 'yes' });
    assert.deepEqual([bad.status, bad.body.message], [400, 'includeOperation must be a boolean value']);
  });

  test('another account cannot change it: 404, the webhook unchanged', async () => {
    const { t, webhookId } = await tenantWithWebhook(false);
    const intruder = await createTenant(ctx.deps);
    // The victim's dApp in the path: the role check finds no membership of the intruder's there (routeRoles.ts), the
    // same 404 as a dApp that does not exist.
    const r = await admin(intruder, 'PATCH', `${hooksOf(t)}/${webhookId}`, { includeOperation: true });
    assert.deepEqual([r.status, r.body.message], [404, 'dApp not found']);
    // Their own dApp in the path with the victim's webhook id: the same 404.
    const own = await admin(intruder, 'PATCH', `${hooksOf(intruder)}/${webhookId}`, { includeOperation: true });
    assert.deepEqual([own.status, own.body.message], [404, 'Webhook not found']);
    const [hook] = (await admin(t, 'GET', hooksOf(t))).body.data as { includeOperation?: boolean }[];
    assert.equal(hook?.includeOperation, undefined);
  });

  test("spec API: Create takes it, Get shows it only when on; the answers without it are the spec's shape", async () => {
    const { t, webhookId } = await tenantWithWebhook(true);
    const plain = await spec(t, 'POST', { webhookUrl: receiver.url('/p'), requestType: 'POST' });
    const list = await ctx.app.inject({ method: 'GET', url: WEBHOOK_PATH, headers: webhookHeaders(t) });
    const rows = list.json().data as Record<string, unknown>[];
    assert.deepEqual(
      rows.find((w) => w.webhookId === webhookId),
      {
        webhookId,
        webhookUrl: receiver.url(`/${t.dappId}`),
        requestType: 'POST',
        active: true,
        includeOperation: true,
      },
    );
    assert.deepEqual(Object.keys(rows.find((w) => w.webhookId === plain.body.data?.webhookId) ?? {}), [
      'webhookId',
      'webhookUrl',
      'requestType',
      'active',
    ]);
    const bad = await spec(t, 'POST', { webhookUrl: receiver.url('/q'), requestType: 'POST', includeOperation: 1 });
    assert.deepEqual(bad.body, { statusCode: 400, message: 'includeOperation must be a boolean value' });
  });
});
