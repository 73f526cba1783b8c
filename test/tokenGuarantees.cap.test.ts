import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Address, getAddress, type Hex, maxUint256, parseEventLogs } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { DevClient } from '../src/chain/devClient.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { COUNTER_ADDRESS, mintToken } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { BACKEND, createTenant, enableTokenGuarantees, type Tenant } from './helpers/testContext.js';
import {
  type AttackerAccount,
  approveCall,
  attackerAccount,
  attackerBundler,
  deployDrainer,
  runCall,
} from './helpers/tokenAttacker.js';
import { type Limits, requestTokenData, submitAttack } from './helpers/tokenAttackOps.js';

/**
 * The dApp's token-guarantee cap (policies/guaranteeCap.ts) through the service on EntryPoint v0.7, on the configured
 * back end: reserved in the same ledger step as the guarantee, so N requests at once against a cap that admits k
 * sign exactly k (the rest refused, -32021 `guaranteeCap`, naming the cap and its counters); settlement releases a
 * guarantee whose user paid (TokenCharged) and charges the cap what the deposit paid for one whose charge failed.
 */
const VERSION = '0.7';
const N = 8;
const K = 3;
const USDC = 10n ** 6n;

let app: RpcFixture;
let usdc: DevTokenInfo;
let bundler: DevClient;
before(async () => {
  app = await startRpcFixture({ tokens: true });
  [usdc] = app.fx.tokens as [DevTokenInfo];
  bundler = await attackerBundler(app.fx, 'guarantee-cap');
});
after(() => app?.close());

const paymaster = () => app.fx.paymasters[VERSION];
const tokenData = (args: { tenant: Tenant; a: AttackerAccount; callData: Hex; limits?: Limits }) =>
  requestTokenData({ app, token: usdc.address, version: VERSION, ...args });

/** A deployed account holding 1,000 USDC, no allowance: its first token op batches its approval (mode 2). */
async function holder(label: string): Promise<AttackerAccount> {
  const a = await attackerAccount({ fx: app.fx, version: VERSION, label: `cap-${BACKEND}-${label}`, bundler });
  await mintToken(app.fx, usdc.address, a.sender, 1_000n * USDC);
  return a;
}
const firstOp = (a: AttackerAccount) =>
  a.account.encodeCalls([
    { to: usdc.address, data: approveCall(paymaster(), 100n * USDC) },
    { to: COUNTER_ADDRESS, data: '0x01' },
  ]);

async function tenantWithCap(limitWei: bigint) {
  const tenant = await createTenant(app.ctx.deps);
  const cap = { limitWei: limitWei.toString(), resets: 'daily' } as const;
  await enableTokenGuarantees(app.ctx.deps, tenant, cap);
  const usage = async () => {
    const u = await app.ctx.deps.policies.guaranteeUsage(tenant.dappId, cap);
    return { used: BigInt(u.usedWei), reserved: BigInt(u.reservedWei) };
  };
  return { tenant, usage };
}

test(`${BACKEND}: ${N} guarantees at once against a cap admitting ${K}: exactly ${K} signed; settlement releases the paid ones and charges a failed one at its cost`, async (t) => {
  // One after another: their set-up transactions share senders (the minter, the bundler).
  const accounts: AttackerAccount[] = [];
  for (let i = 0; i < N; i++) accounts.push(await holder(`${i}`));
  const calls = await Promise.all(accounts.map(firstOp));
  // The op's worst case W at fixed limits: the limits Patron computes, then one guarantee signed over them.
  const probe = await tenantWithCap(10n ** 18n);
  const [a0, c0] = [accounts[0], calls[0]] as [AttackerAccount, Hex];
  const estimate = await tokenData({ tenant: probe.tenant, a: a0, callData: c0 });
  assert.ok(estimate.limits, JSON.stringify(estimate.error));
  const limits = estimate.limits;
  const before = await probe.usage();
  assert.ok((await tokenData({ tenant: probe.tenant, a: a0, callData: c0, limits })).op);
  const w = (await probe.usage()).reserved - before.reserved;
  assert.ok(w > 0n);

  const cap = BigInt(K) * w + w / 2n;
  const { tenant, usage } = await tenantWithCap(cap);
  const answers = await Promise.all(
    accounts.map((a, i) => tokenData({ tenant, a, callData: calls[i] as Hex, limits })),
  );
  const signed = answers.flatMap((r, i) =>
    r.op === undefined ? [] : [{ op: r.op, fields: r.fields, a: accounts[i] }],
  );
  const refused = answers.flatMap((r) => (r.op === undefined ? [r.error] : []));
  t.diagnostic(`W ${w} wei, cap ${cap}: ${signed.length} signed, ${refused.length} refused`);
  assert.equal(signed.length, K, JSON.stringify(refused.map((e) => e?.message)));
  for (const s of signed) assert.equal(s.fields.guaranteed, true, 'mode 2');
  for (const e of refused) {
    assert.equal(e?.code, -32021, JSON.stringify(e));
    const data = e?.data as Record<string, unknown>;
    assert.deepEqual(
      { rule: data.rule, unit: data.unit, value: data.value, limit: data.limit },
      { rule: 'guaranteeCap', unit: 'wei', value: w.toString(), limit: cap.toString() },
    );
    assert.equal(BigInt(String(data.used)) + BigInt(String(data.reserved)), BigInt(K) * w, 'the counters it found');
    assert.match(
      e?.message ?? '',
      new RegExp(
        `token-guarantee cap of ${cap} wei \\(daily, until .*\\) has ${w / 2n} wei left and this operation needs ${w} wei`,
      ),
    );
  }
  assert.deepEqual(await usage(), { used: 0n, reserved: BigInt(K) * w });

  // The k ops on chain: each charge collected (TokenCharged), so settlement releases each guarantee whole.
  for (const s of signed) {
    const { receipt } = await submitAttack({ app, version: VERSION, bundler, a: s.a as AttackerAccount, op: s.op });
    const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
    assert.equal(event?.args.success, true);
    const [charged] = parseEventLogs({ abi: patronPaymasterAbi, logs: receipt.logs, eventName: 'TokenCharged' });
    assert.ok(charged !== undefined && getAddress(charged.args.account) === getAddress(s.op.sender));
  }
  await app.ctx.deps.settlement.runOnce();
  assert.deepEqual(await usage(), { used: 0n, reserved: 0n }, 'the users paid: nothing of the cap is used');

  // An op whose charge fails at inclusion (the account's own Drainer takes its tokens first): the deposit pays, and
  // settlement charges the cap exactly that.
  const drainer: Address = await deployDrainer(bundler, 1_000_000n);
  const x = await holder('drained');
  await x.ownTransaction(usdc.address, approveCall(drainer, maxUint256));
  const drain = await x.account.encodeCalls([
    { to: usdc.address, data: approveCall(paymaster(), 100n * USDC) },
    { to: drainer, data: runCall(usdc.address) },
  ]);
  const failing = await tokenData({ tenant, a: x, callData: drain });
  assert.ok(failing.op, JSON.stringify(failing.error));
  assert.equal(failing.fields.guaranteed, true);
  const { receipt } = await submitAttack({ app, version: VERSION, bundler, a: x, op: failing.op });
  const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  assert.equal(event?.args.success, false, 'the charge failed: the execution reverted');
  await app.ctx.deps.settlement.runOnce();
  assert.deepEqual(await usage(), { used: event.args.actualGasCost, reserved: 0n }, 'the deposit’s loss, charged');
});
