import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encodeFunctionData, type Hex } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import {
  buildDeployingOp,
  type PatronFixture,
  signAccount,
  simpleAccountAbi,
  submitHandleOps,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp, type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { type Tenant, type TestContext, WEBHOOK_PATH, webhookHeaders } from './helpers/testContext.js';
import { answer, type Receiver, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The paymaster JSON-RPC endpoint end to end through the app (inject), on the in-process chain: every signed
 * `paymasterAndData` is submitted with `handleOps` and must be accepted by the real EntryPoint v0.6.
 */
let app: RpcFixture;
let fx: PatronFixture;
let ctx: TestContext;
let tenant: Tenant;
let snapshot: Hex;

before(async () => {
  app = await startRpcFixture();
  ({ fx, ctx, tenant } = app);
  snapshot = (await fx.chain.request({ method: 'evm_snapshot' })) as Hex;
});
after(() => app.close());

const rpc = (method: string, params: unknown[], apiKey = tenant.apiKey, chainId = fx.chain.chainId) =>
  app.rpc(method, params, { apiKey, chainId });

const wire = biconomyWireOp;

/** Submits the op with handleOps; returns the UserOperationEvent and the paymaster's deposit change. */
async function submit(op: UserOperationV06) {
  const signed = await signAccount(fx, op);
  const before = await fx.client.readContract({
    address: fx.entryPoint,
    abi: entryPoint06Abi,
    functionName: 'balanceOf',
    args: [fx.paymaster],
  });
  const { receipt, events } = await submitHandleOps(fx, [signed]);
  assert.equal(receipt.status, 'success');
  const [event] = events;
  assert.ok(event, 'UserOperationEvent emitted');
  const after = await fx.client.readContract({
    address: fx.entryPoint,
    abi: entryPoint06Abi,
    functionName: 'balanceOf',
    args: [fx.paymaster],
  });
  return { event: event.args, depositDelta: before - after };
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

describe('sponsored mode through the paymaster URL', () => {
  test('pm_sponsorUserOperation with calculateGasLimits: limits computed by simulation, handleOps succeeds, deposit pays exactly', async () => {
    await fx.chain.request({ method: 'evm_revert', params: [snapshot] });
    snapshot = (await fx.chain.request({ method: 'evm_snapshot' })) as Hex;
    const op = await buildDeployingOp(fx, 1n);
    const { status, body } = await rpc('pm_sponsorUserOperation', [
      wire(op, false),
      { mode: 'SPONSORED', calculateGasLimits: true },
    ]);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.id, 42);
    const r = body.result ?? {};
    assert.equal(r.mode, 'SPONSORED');
    assert.equal(r.MODE, 'SPONSORED');
    assert.equal(typeof r.preVerificationGas, 'string');
    assert.match(String(r.preVerificationGas), /^\d+$/);
    assert.equal(typeof r.verificationGasLimit, 'number');
    assert.equal(typeof r.callGasLimit, 'number');
    assert.equal((r.paymasterAndData as string).length, 2 + 98 * 2);
    const { event, depositDelta } = await submit(applyResult(op, r));
    assert.equal(event.success, true);
    assert.equal(event.paymaster.toLowerCase(), fx.paymaster.toLowerCase());
    assert.equal(depositDelta, event.actualGasCost);
    // The estimate is tight enough to matter: the verification limit is within 2× of what was used.
    assert.ok(BigInt(r.verificationGasLimit as number) < 1_000_000n);
  });

  test('pm_getFeeQuoteOrData with calculateGasLimits false keeps the caller’s limits and still validates on chain', async () => {
    const op = await buildDeployingOp(fx, 2n);
    const { status, body } = await rpc('pm_getFeeQuoteOrData', [
      wire(op),
      { mode: 'SPONSORED', calculateGasLimits: false, sponsorshipInfo: { webhookData: {} } },
    ]);
    assert.equal(status, 200, JSON.stringify(body));
    const r = body.result ?? {};
    assert.equal(r.callGasLimit, Number(op.callGasLimit));
    assert.equal(r.verificationGasLimit, Number(op.verificationGasLimit));
    assert.equal(r.preVerificationGas, op.preVerificationGas.toString());
    const { event } = await submit(applyResult(op, r));
    assert.equal(event.success, true);
  });

  test('calculateGasLimits false with a missing limit is -32602 naming the field', async () => {
    const op = await buildDeployingOp(fx, 3n);
    const { callGasLimit: _drop, ...partial } = wire(op);
    const { status, body } = await rpc('pm_getFeeQuoteOrData', [
      partial,
      { mode: 'SPONSORED', calculateGasLimits: false },
    ]);
    assert.equal(status, 400);
    assert.equal(body.error?.code, -32602);
    assert.equal(
      body.error?.message,
      'Invalid params: params[0].callGasLimit: required when calculateGasLimits is false',
    );
  });

  test('an op whose call reverts is refused with -32020 and the revert reason, nothing signed', async () => {
    const op = await buildDeployingOp(fx, 4n);
    // SimpleAccount.execute → the EntryPoint with an unknown selector: the account's call reverts.
    const reverting = {
      ...op,
      callData: encodeFunctionData({
        abi: simpleAccountAbi,
        functionName: 'execute',
        args: [fx.entryPoint, 0n, '0xdeadbeef'],
      }),
    };
    const { status, body } = await rpc('pm_sponsorUserOperation', [
      wire(reverting, false),
      { mode: 'SPONSORED', calculateGasLimits: true },
    ]);
    assert.equal(status, 400, JSON.stringify(body));
    assert.equal(body.error?.code, -32020);
    assert.match(body.error?.data?.reason ?? '', /execution reverted/);
  });

  test('an op whose account validation fails names the EntryPoint reason (AA…)', async () => {
    const op = await buildDeployingOp(fx, 5n);
    const { status, body } = await rpc('pm_sponsorUserOperation', [
      { ...wire(op, false), initCode: `${fx.entryPoint}deadbeef` },
      { mode: 'SPONSORED', calculateGasLimits: true },
    ]);
    assert.equal(status, 400, JSON.stringify(body));
    assert.equal(body.error?.code, -32020);
    assert.match(body.error?.message ?? '', /^Simulation failed: AA\d\d /);
  });
});

describe('the dApp’s webhook decides (spec §6)', () => {
  let receiver: Receiver;
  let webhookId: string;
  before(async () => {
    receiver = await startReceiver((req, res) => {
      const data = (JSON.parse(req.body || '{}') as { data?: { num?: number } }).data ?? {};
      answer({ arePoliciesVerified: typeof data.num === 'number' && data.num % 2 === 0 })(req, res);
    });
    const res = await ctx.app.inject({
      method: 'POST',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(tenant),
      payload: { webhookUrl: receiver.url('/verify'), requestType: 'POST' },
    });
    webhookId = res.json().data.webhookId;
  });
  after(async () => {
    await ctx.app.inject({
      method: 'DELETE',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(tenant),
      payload: { webhookId },
    });
    await receiver.close();
  });

  test('num: 2 is sponsored and executes; num: 3 is denied with -32010 before anything is signed', async () => {
    const op = await buildDeployingOp(fx, 6n);
    const yes = await rpc('pm_getFeeQuoteOrData', [
      wire(op),
      { mode: 'SPONSORED', sponsorshipInfo: { webhookData: { num: 2 } } },
    ]);
    assert.equal(yes.status, 200, JSON.stringify(yes.body));
    assert.equal((await submit(applyResult(op, yes.body.result ?? {}))).event.success, true);
    assert.deepEqual(JSON.parse(receiver.requests.at(-1)?.body ?? '{}'), { data: { num: 2 } });

    const no = await rpc('pm_getFeeQuoteOrData', [
      wire(await buildDeployingOp(fx, 7n)),
      { mode: 'SPONSORED', sponsorshipInfo: { webhookData: { num: 3 } } },
    ]);
    assert.equal(no.status, 400);
    assert.equal(no.body.error?.code, -32010);
    assert.equal(no.body.error?.message, "Sponsorship denied: the dApp's webhook did not approve this user operation");
    assert.equal(no.body.result, undefined);
  });

  /** The body with `"DEEP"` replaced by an object nested `levels` deep (JSON.stringify itself would overflow). */
  async function rawRpc(method: string, params: unknown[], deep: string) {
    const payload = JSON.stringify({ jsonrpc: '2.0', id: 42, method, params }).replace('"DEEP"', deep);
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/api/v1/${fx.chain.chainId}/${tenant.apiKey}`,
      headers: { 'content-type': 'application/json' },
      payload,
    });
    return { status: res.statusCode, body: res.json() as { error?: { code: number; message: string } } };
  }
  /** `{"num":2,"a":{"a":…{}}}`: `levels` objects deep, `num` where the receiver reads it. */
  const nested = (levels: number) => `{"num":2,"a":${'{"a":'.repeat(levels - 2)}{}${'}'.repeat(levels - 1)}`;

  test('webhookData nested 5,000 levels: -32602 naming the field and the bound, in every place it can come, the webhook never called', async () => {
    const op = wire(await buildDeployingOp(fx, 11n));
    const chainHex = `0x${fx.chain.chainId.toString(16)}`;
    const cases: [string, unknown[], string][] = [
      [
        'pm_getFeeQuoteOrData',
        [op, { mode: 'SPONSORED', sponsorshipInfo: { webhookData: 'DEEP' } }],
        'params[1].sponsorshipInfo.webhookData',
      ],
      ['pm_getFeeQuoteOrData', [op, { mode: 'SPONSORED', webhookData: 'DEEP' }], 'params[1].webhookData'],
      [
        'pm_sponsorUserOperation',
        [op, { mode: 'SPONSORED', sponsorshipInfo: { webhookData: 'DEEP' } }],
        'params[1].sponsorshipInfo.webhookData',
      ],
      ['pm_getPaymasterStubData', [op, fx.entryPoint, chainHex, { webhookData: 'DEEP' }], 'params[3].webhookData'],
      [
        'pm_getPaymasterData',
        [op, fx.entryPoint, chainHex, { sponsorshipInfo: { webhookData: 'DEEP' } }],
        'params[3].sponsorshipInfo.webhookData',
      ],
    ];
    const before = receiver.requests.length;
    for (const [method, params, where] of cases) {
      const r = await rawRpc(method, params, nested(5000));
      assert.equal(r.status, 400, `${method} ${where}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error?.code, -32602);
      assert.equal(r.body.error?.message, `Invalid params: ${where}: must nest at most 32 levels`);
    }
    assert.equal(receiver.requests.length, before, 'the webhook was not called');
  });

  test('webhookData at the bounds: 32 levels pass to the webhook; 33 levels and more than 16 KiB are refused', async () => {
    const op = wire(await buildDeployingOp(fx, 12n));
    const at = await rawRpc('pm_getFeeQuoteOrData', [op, { mode: 'SPONSORED', webhookData: 'DEEP' }], nested(32));
    assert.equal(at.status, 200, JSON.stringify(at.body));
    const over = await rawRpc('pm_getFeeQuoteOrData', [op, { mode: 'SPONSORED', webhookData: 'DEEP' }], nested(33));
    assert.equal(over.body.error?.message, 'Invalid params: params[1].webhookData: must nest at most 32 levels');
    const big = await rpc('pm_getFeeQuoteOrData', [
      op,
      { mode: 'SPONSORED', webhookData: { num: 2, pad: 'x'.repeat(16_384) } },
    ]);
    assert.equal(big.status, 400);
    assert.equal(big.body.error?.code, -32602);
    assert.match(
      big.body.error?.message ?? '',
      /^Invalid params: params\[1\]\.webhookData: must be at most 16384 bytes as JSON \(it is 16\d{3}\)$/,
    );
  });

  test('leaving webhookData out does not bypass the webhook (it gets {})', async () => {
    const before = receiver.requests.length;
    const r = await rpc('pm_getFeeQuoteOrData', [wire(await buildDeployingOp(fx, 8n)), { mode: 'SPONSORED' }]);
    assert.equal(r.body.error?.code, -32010);
    assert.equal(receiver.requests.length, before + 1);
    assert.deepEqual(JSON.parse(receiver.requests.at(-1)?.body ?? ''), { data: {} });
  });

  test('an inactive webhook is not called', async () => {
    await ctx.app.inject({
      method: 'PATCH',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(tenant),
      payload: { webhookId, active: false },
    });
    const before = receiver.requests.length;
    const r = await rpc('pm_getFeeQuoteOrData', [
      wire(await buildDeployingOp(fx, 9n)),
      { mode: 'SPONSORED', webhookData: { num: 3 } },
    ]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(receiver.requests.length, before);
    await ctx.app.inject({
      method: 'PATCH',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(tenant),
      payload: { webhookId, active: true },
    });
  });
});

describe('ERC-7677 on the v0.6 endpoint', () => {
  test('stub has the final length; getPaymasterData over the final gas validates on chain', async () => {
    const op = await buildDeployingOp(fx, 10n);
    const chainHex = `0x${fx.chain.chainId.toString(16)}`;
    const stub = await rpc('pm_getPaymasterStubData', [wire(op), fx.entryPoint, chainHex, { mode: 'SPONSORED' }]);
    assert.equal(stub.status, 200, JSON.stringify(stub.body));
    assert.equal(String(stub.body.result?.paymasterAndData).length, 2 + 98 * 2);
    assert.equal(stub.body.result?.isFinal, false);
    const data = await rpc('pm_getPaymasterData', [wire(op), fx.entryPoint, chainHex]);
    assert.equal(data.status, 200, JSON.stringify(data.body));
    const { event } = await submit({ ...op, paymasterAndData: data.body.result?.paymasterAndData as Hex });
    assert.equal(event.success, true);
  });

  test('another EntryPoint or chain id is refused', async () => {
    const op = await buildDeployingOp(fx, 11n);
    // The dev chain has a paymaster for EntryPoints v0.6 to v0.9; an address that is none of them is refused.
    const other = await rpc('pm_getPaymasterData', [
      wire(op),
      '0x000000000000000000000000000000000000dEaD',
      '0x7a69',
      {},
    ]);
    assert.equal(other.body.error?.code, -32602);
    assert.match(
      other.body.error?.message ?? '',
      /EntryPoint 0x000000000000000000000000000000000000dEaD is not served here/,
    );
    const chain = await rpc('pm_getPaymasterData', [wire(op), fx.entryPoint, '0x1', {}]);
    assert.equal(chain.body.error?.code, -32002);
  });
});

describe('errors on the paymaster URL', () => {
  test('an unknown API key is 401 / -32001; a chain the dApp does not serve is -32002', async () => {
    const op = wire(await buildDeployingOp(fx, 12n));
    const bad = await rpc('pm_getFeeQuoteOrData', [op, { mode: 'SPONSORED' }], `pk.${'x'.repeat(33)}`);
    assert.equal(bad.status, 401);
    assert.deepEqual(bad.body, {
      jsonrpc: '2.0',
      id: 42,
      error: { code: -32001, message: 'Invalid API key: check the paymaster URL' },
    });
    const chain = await rpc('pm_getFeeQuoteOrData', [op, { mode: 'SPONSORED' }], tenant.apiKey, 1);
    assert.equal(chain.status, 400);
    assert.equal(chain.body.error?.message, 'This dApp does not serve chain 1');
  });

  test("Pimlico's dialect (the EntryPoint as params[1]) is served: hex limits and paymasterAndData that validate on chain", async () => {
    const op = await buildDeployingOp(fx, 13n);
    const r = await rpc('pm_sponsorUserOperation', [
      wire(op),
      fx.entryPoint,
      { validForSeconds: 120, unknownField: true },
    ]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const result = r.body.result as Record<string, string>;
    assert.deepEqual(Object.keys(result).sort(), [
      'callGasLimit',
      'paymasterAndData',
      'preVerificationGas',
      'verificationGasLimit',
    ]);
    for (const k of ['callGasLimit', 'preVerificationGas', 'verificationGasLimit']) {
      assert.match(String(result[k]), /^0x[0-9a-f]+$/, k);
    }
    const { event } = await submit({
      ...op,
      paymasterAndData: result.paymasterAndData as Hex,
      callGasLimit: BigInt(String(result.callGasLimit)),
      verificationGasLimit: BigInt(String(result.verificationGasLimit)),
      preVerificationGas: BigInt(String(result.preVerificationGas)),
    });
    assert.equal(event.success, true);
    const other = await rpc('pm_sponsorUserOperation', [wire(op), '0x000000000000000000000000000000000000dEaD']);
    assert.equal(other.body.error?.code, -32602);
    assert.match(other.body.error?.message ?? '', /is not served here/);
    const bad = await rpc('pm_sponsorUserOperation', [wire(op), fx.entryPoint, { validForSeconds: -1 }]);
    assert.equal(bad.body.error?.code, -32602);
  });

  test('mode ERC20 on a chain without fee tokens configured is -32030, named', async () => {
    const r = await rpc('pm_getFeeQuoteOrData', [
      wire(await buildDeployingOp(fx, 14n)),
      { mode: 'ERC20', tokenInfo: { tokenList: [] } },
    ]);
    assert.equal(r.body.error?.code, -32030);
    assert.equal(r.body.error?.message, 'ERC20 mode: chain 31337 has no fee tokens configured');
  });

  test('a malformed body is -32700 in the JSON-RPC shape, never the REST envelope', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/api/v1/31337/${tenant.apiKey}`,
      headers: { 'content-type': 'application/json' },
      payload: '{nope',
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error: the body is not valid JSON' },
    });
  });
});
