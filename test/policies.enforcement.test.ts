import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { encodeFunctionData, type Hex, parseAbi } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import {
  buildDeployingOp,
  COUNTER_ADDRESS,
  executeCallData,
  type PatronFixture,
  signAccount,
  simpleAccountAbi,
  submitHandleOps,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp, type RpcAnswer, type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { createTenant, type Tenant, type TestContext, withoutHoldShares } from './helpers/testContext.js';

/**
 * Sponsorship policies enforced through the paymaster URL (inject), on the in-process chain: the denials and
 * their `data`, the caps reserved at signing (exactly N signed under 200 concurrent requests), the dry run,
 * and a signed op that still validates on chain, its reservation keyed by the EntryPoint's own userOpHash.
 */
let app: RpcFixture;
let fx: PatronFixture;
let ctx: TestContext;
let tenant: Tenant;

before(async () => {
  app = await startRpcFixture();
  ({ fx, ctx } = app);
});
after(() => app.close());
// Every test gets its own dApp: policies and ledger counters never leak between tests.
beforeEach(async () => {
  tenant = await createTenant(ctx.deps);
  // One client IP plays every user of these caps: the hold shares are for caps many share (policies.holds).
  await withoutHoldShares(ctx.deps, tenant.dappId);
});

/** The denial's `data` (the answer must be an error carrying it). */
function dataOf(body: RpcAnswer): Record<string, unknown> {
  const data = body.error?.data;
  assert.ok(data !== undefined, JSON.stringify(body));
  return data as Record<string, unknown>;
}

const rpc = (method: string, params: unknown[]) => app.rpc(method, params, { apiKey: tenant.apiKey });
const sponsor = (op: UserOperationV06, mode: Record<string, unknown> = {}) =>
  rpc('pm_sponsorUserOperation', [biconomyWireOp(op), { mode: 'SPONSORED', calculateGasLimits: false, ...mode }]);
const addPolicy = (rules: unknown, name = 'p') => ctx.deps.policies.create({ dappId: tenant.dappId, name, rules });

/** (100,000 + 3 × 600,000 + 50,000) gas × 2 gwei: buildDeployingOp's worst case. */
const WORST_CASE = 1_950_000n * 2_000_000_000n;

describe('policy rules', () => {
  test('a blocked sender is denied with -32012 naming the policy and the rule; the stub refuses it too', async () => {
    const op = await buildDeployingOp(fx, 1n);
    const policy = await addPolicy({ senders: { block: [op.sender] } }, 'no-bots');
    const { status, body } = await sponsor(op);
    assert.equal(status, 400);
    assert.equal(body.error?.code, -32012);
    assert.match(
      body.error?.message ?? '',
      /^Sponsorship denied by policy: Sender 0x[0-9a-fA-F]{40} is blocked by policy no-bots$/,
    );
    assert.deepEqual(body.error?.data, {
      policyId: policy.id,
      policyName: 'no-bots',
      rule: 'senderBlocked',
      value: op.sender,
    });
    const stub = await rpc('pm_getPaymasterStubData', [biconomyWireOp(op), fx.entryPoint, '0x7a69', {}]);
    assert.equal(stub.body.error?.code, -32012);
    const other = await sponsor(await buildDeployingOp(fx, 2n));
    assert.equal(other.status, 200, JSON.stringify(other.body));
  });

  test('a contract allowlist admits the listed call and names the contract or method it refuses', async () => {
    const op = await buildDeployingOp(fx, 3n);
    await addPolicy({ contracts: [{ address: COUNTER_ADDRESS }] }, 'counter-only');
    assert.equal((await sponsor(op)).status, 200);
    const toEntryPoint = {
      ...op,
      callData: encodeFunctionData({ abi: simpleAccountAbi, functionName: 'execute', args: [fx.entryPoint, 0n, '0x'] }),
    };
    const denied = await sponsor(toEntryPoint);
    assert.equal(denied.body.error?.code, -32012);
    assert.equal(dataOf(denied.body).rule, 'contractNotAllowed');
    assert.equal(dataOf(denied.body).contract, fx.entryPoint);
    const unknownLayout = await sponsor({ ...op, callData: '0x12345678' });
    assert.equal(dataOf(unknownLayout.body).rule, 'undecodableCall');
    assert.equal(dataOf(unknownLayout.body).selector, '0x12345678');
  });

  test('a method allowlist checks the selector of the inner call', async () => {
    const op = await buildDeployingOp(fx, 4n);
    const increment = encodeFunctionData({ abi: parseAbi(['function increment()']), functionName: 'increment' });
    await addPolicy({ contracts: [{ address: COUNTER_ADDRESS, selectors: [increment] }] });
    assert.equal((await sponsor({ ...op, callData: executeCallData(increment) })).status, 200);
    const other = await sponsor({ ...op, callData: executeCallData('0xdeadbeef') });
    assert.equal(dataOf(other.body).rule, 'methodNotAllowed');
    assert.equal(dataOf(other.body).selector, '0xdeadbeef');
  });

  test('deployment not sponsored, a gas-price ceiling, a named policy that does not exist', async () => {
    const op = await buildDeployingOp(fx, 5n);
    await addPolicy({ sponsorDeployment: false, maxFeePerGas: '1000000000' });
    const deploy = await sponsor(op);
    assert.equal(dataOf(deploy.body).rule, 'deploymentNotSponsored');
    const pricey = await sponsor({ ...op, initCode: '0x' });
    assert.equal(dataOf(pricey.body).rule, 'maxFeePerGas');
    assert.equal(dataOf(pricey.body).limit, '1000000000');
    const named = await sponsor(
      { ...op, initCode: '0x', maxFeePerGas: 1_000_000_000n },
      {
        sponsorshipPolicyId: '00000000-0000-4000-8000-000000000000',
      },
    );
    assert.equal(dataOf(named.body).rule, 'policyNotFound');
  });

  test('a policy outside its time window or chains: none applies, denied (fail closed)', async () => {
    await addPolicy({ chainIds: [1] });
    const { body } = await sponsor(await buildDeployingOp(fx, 6n));
    assert.equal(dataOf(body).rule, 'noPolicyApplies');
  });

  test('a USD cap without a native price is denied, never counted at a guess', async () => {
    await addPolicy({ caps: [{ scope: 'dapp', unit: 'usd', limit: '100' }] });
    const { body } = await sponsor(await buildDeployingOp(fx, 7n));
    assert.equal(dataOf(body).rule, 'priceUnavailable');
  });
});

describe('caps reserved at signing', () => {
  test('a dApp-wide op cap: two signed, the third denied with the counters and the unit', async () => {
    const policy = await addPolicy({ caps: [{ scope: 'dapp', unit: 'ops', limit: '2', resets: 'daily' }] }, 'two');
    assert.equal((await sponsor(await buildDeployingOp(fx, 10n))).status, 200);
    assert.equal((await sponsor(await buildDeployingOp(fx, 11n))).status, 200);
    const { status, body } = await sponsor(await buildDeployingOp(fx, 12n));
    assert.equal(status, 400);
    assert.equal(body.error?.code, -32012);
    const data = body.error?.data as Record<string, unknown>;
    const dayEnd = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400;
    assert.deepEqual(data, {
      policyId: policy.id,
      policyName: 'two',
      rule: 'cap',
      scope: 'dapp',
      unit: 'ops',
      value: '1',
      limit: '2',
      used: '0',
      reserved: '2',
      resetsAt: dayEnd,
    });
    const usage = await ctx.deps.policies.usage({ dappId: tenant.dappId, policyId: policy.id });
    assert.equal(usage[0]?.reserved, '2');
    // The ERC-7677 stub reads the caps too: a wallet learns of a spent cap before it pays for an estimation.
    const stub = await rpc('pm_getPaymasterStubData', [
      biconomyWireOp(await buildDeployingOp(fx, 13n), false),
      fx.entryPoint,
      '0x7a69',
      {},
    ]);
    assert.equal(stub.body.error?.code, -32012);
    assert.equal(dataOf(stub.body).rule, 'cap');
    await ctx.deps.requestLog.flush();
    const [denied] = await ctx.deps.store.requestLog.query({
      accountId: tenant.accountId,
      outcome: 'denied',
      limit: 1,
    });
    assert.deepEqual(denied?.policy, { decision: 'denied', rule: 'cap', policyId: policy.id });
    assert.equal(denied?.errorCode, -32012);
  });

  test('a per-sender wei cap counts each sender apart; a per-op cap refuses a costly op', async () => {
    await addPolicy({
      caps: [
        { scope: 'sender', unit: 'wei', limit: (WORST_CASE + WORST_CASE / 2n).toString() },
        { scope: 'op', unit: 'wei', limit: (WORST_CASE * 2n).toString() },
      ],
    });
    const a = await buildDeployingOp(fx, 20n);
    assert.equal((await sponsor(a)).status, 200);
    // The same op key with other callData: one reservation holding the larger worst case (the same here).
    assert.equal((await sponsor({ ...a, callData: executeCallData('0x01') })).status, 200);
    const again = await sponsor({ ...a, nonce: a.nonce + 1n });
    const data = again.body.error?.data as Record<string, unknown>;
    assert.equal(data.scope, 'sender');
    assert.equal(data.reserved, WORST_CASE.toString());
    assert.equal((await sponsor(await buildDeployingOp(fx, 21n))).status, 200);
    const costly = await sponsor({ ...(await buildDeployingOp(fx, 22n)), callGasLimit: 3_000_000n });
    assert.equal(dataOf(costly.body).scope, 'op', JSON.stringify(costly.body));
  });

  test('200 concurrent requests against a cap of 37: exactly 37 signed, the rest denied by the cap', async () => {
    await addPolicy({ caps: [{ scope: 'dapp', unit: 'ops', limit: '37' }] });
    const op = await buildDeployingOp(fx, 30n);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => sponsor({ ...op, nonce: BigInt(i) })));
    const signed = answers.filter((a) => a.status === 200).length;
    const capped = answers.filter((a) => (a.body.error?.data as { rule?: string } | undefined)?.rule === 'cap').length;
    assert.equal(signed, 37);
    assert.equal(capped, 163);
  });

  test('a signed op validates on chain and its reservation is keyed by the EntryPoint userOpHash', async () => {
    await addPolicy({ caps: [{ scope: 'dapp', unit: 'wei', limit: (WORST_CASE * 10n).toString() }] });
    const op = await buildDeployingOp(fx, 40n);
    const { body } = await sponsor(op);
    const signed = await signAccount(fx, { ...op, paymasterAndData: body.result?.paymasterAndData as Hex });
    const hash = await fx.client.readContract({
      address: fx.entryPoint,
      abi: entryPoint06Abi,
      functionName: 'getUserOpHash',
      args: [signed],
    });
    const { events } = await submitHandleOps(fx, [signed]);
    assert.equal(events[0]?.args.success, true);
    assert.equal(events[0]?.args.userOpHash, hash);
    const cost = events[0]?.args.actualGasCost ?? 0n;
    // Settlement follows the EntryPoint's UserOperationEvents: the reservation becomes the op's actual cost.
    await ctx.deps.settlement.runOnce();
    const [usage] = await ctx.deps.policies.usage({
      dappId: tenant.dappId,
      policyId: (await ctx.deps.policies.list(tenant.dappId))[0]?.id ?? '',
    });
    assert.equal(usage?.used, cost.toString());
    assert.equal(usage?.reserved, '0');
    // The request log shows what was reserved, the op's hash and, settled, what it really cost.
    await ctx.deps.requestLog.flush();
    const [row] = await ctx.deps.store.requestLog.query({ accountId: tenant.accountId, limit: 10 });
    assert.equal(row?.userOpHash, hash.toLowerCase());
    assert.deepEqual(row?.policy?.reserved, [{ unit: 'wei', amount: WORST_CASE.toString() }]);
    assert.equal(row?.policy?.decision, 'passed');
    assert.equal(row?.actualCostWei, cost.toString());
  });
});

describe('pm_validateSponsorshipPolicies (the dry run)', () => {
  test('names the willing policies, reserves nothing, and answers [] once a cap is spent', async () => {
    const policy = await addPolicy({ caps: [{ scope: 'dapp', unit: 'ops', limit: '1' }] }, 'one');
    const op = await buildDeployingOp(fx, 50n);
    const dry = () => rpc('pm_validateSponsorshipPolicies', [biconomyWireOp(op), fx.entryPoint, [policy.id, 'other']]);
    const first = await dry();
    assert.deepEqual(first.body.result, [
      { sponsorshipPolicyId: policy.id, data: { name: 'one', author: null, icon: null, description: null } },
    ]);
    assert.deepEqual(await dry().then((r) => r.body.result), first.body.result, 'the dry run reserved nothing');
    assert.equal((await sponsor(op)).status, 200);
    assert.deepEqual((await dry()).body.result, []);
  });

  test('bad params are -32602 naming the field; another EntryPoint is refused', async () => {
    const op = await buildDeployingOp(fx, 51n);
    const none = await rpc('pm_validateSponsorshipPolicies', [biconomyWireOp(op), fx.entryPoint, []]);
    assert.equal(none.body.error?.code, -32602);
    assert.match(none.body.error?.message ?? '', /params\[2\].*at least one policy/);
    const ep = await rpc('pm_validateSponsorshipPolicies', [biconomyWireOp(op), COUNTER_ADDRESS, ['x']]);
    assert.equal(ep.body.error?.code, -32602);
  });
});

describe('USD caps priced from the token catalog', () => {
  let priced: RpcFixture;
  before(async () => {
    priced = await startRpcFixture({ tokens: true });
  });
  after(() => priced.close());

  test('the worst case is counted in micro-USD at the native price, rounded up; the cap binds on it', async () => {
    const pfx = priced.fx;
    const t = await createTenant(priced.ctx.deps);
    await withoutHoldShares(priced.ctx.deps, t.dappId);
    const e18 = priced.ctx.deps.tokenCatalog.snapshot(pfx.chain.chainId)?.nativeUsdE18;
    assert.ok(e18 !== undefined, 'the dev chain has a native price');
    const microPerCoin = (e18 + 10n ** 12n - 1n) / 10n ** 12n;
    const perOp = (WORST_CASE * microPerCoin + 10n ** 18n - 1n) / 10n ** 18n;
    // Room for two ops and a bit, not three.
    const limit = perOp * 2n + perOp / 2n;
    const usd = `${limit / 1_000_000n}.${(limit % 1_000_000n).toString().padStart(6, '0')}`;
    const policy = await priced.ctx.deps.policies.create({
      dappId: t.dappId,
      name: 'usd',
      rules: { caps: [{ scope: 'dapp', unit: 'usd', limit: usd }] },
    });
    const send = async (salt: bigint) =>
      priced.rpc(
        'pm_sponsorUserOperation',
        [biconomyWireOp(await buildDeployingOp(pfx, salt)), { mode: 'SPONSORED', calculateGasLimits: false }],
        { apiKey: t.apiKey },
      );
    assert.equal((await send(60n)).status, 200);
    assert.equal((await send(61n)).status, 200);
    const third = await send(62n);
    const data = third.body.error?.data as Record<string, unknown>;
    const asUsd = (m: bigint) => `${m / 1_000_000n}.${(m % 1_000_000n).toString().padStart(6, '0')}`;
    assert.deepEqual(
      { rule: data.rule, unit: data.unit, value: data.value, limit: data.limit, reserved: data.reserved },
      { rule: 'cap', unit: 'usd', value: asUsd(perOp), limit: asUsd(limit), reserved: asUsd(perOp * 2n) },
    );
    const [usage] = await priced.ctx.deps.policies.usage({ dappId: t.dappId, policyId: policy.id });
    assert.equal(usage?.reserved, (perOp * 2n).toString());
  });
});
