import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Hex } from 'viem';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { buildDeployingOp, signAccount, submitHandleOps } from './helpers/patronPaymasterV06.js';
import { biconomyWireOp, type RpcAnswer, type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { BACKEND, createTenant, type Tenant } from './helpers/testContext.js';

/**
 * Issue 31, "no caller can hold a dApp's budget it does not spend", the attacker's way: with the public API key
 * alone, the red team filled a 0.313 ETH daily cap with 8 signatures it never submitted (97 ms), each held until
 * its window passed, from one IP: 8 requests an hour kept the dApp's users out. With the default hold shares
 * (10 % per caller and per sender, binding once the cap is busy: docs/guides/policies.md, "Held budgets") one IP
 * holds at most half of such a cap, the cap never fills from fewer than five IPs, and a user from another IP is
 * served while the attacker holds its share. Requests come from distinct client IPs through `inject`'s remote
 * address, as they would through the socket.
 */
let app: RpcFixture;
let salt = 70_000n;

before(async () => {
  app = await startRpcFixture();
});
after(() => app.close());

/** (100,000 + 3 × 600,000 + 50,000) gas × 2 gwei: buildDeployingOp's worst case. */
const WORST_CASE = 1_950_000n * 2_000_000_000n;

async function sponsorFrom(ip: string, tenant: Tenant, op: UserOperationV06): Promise<RpcAnswer> {
  const res = await app.ctx.app.inject({
    method: 'POST',
    url: `/api/v1/${app.fx.chain.chainId}/${tenant.apiKey}`,
    remoteAddress: ip,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'pm_sponsorUserOperation',
      params: [biconomyWireOp(op), { mode: 'SPONSORED', calculateGasLimits: false }],
    }),
  });
  return res.json() as RpcAnswer;
}

const ruleOf = (a: RpcAnswer | undefined) => (a?.error?.data as { rule?: string; scope?: string } | undefined) ?? {};

/** A dApp with a never-resetting wei cap of `ops` worst cases, the default hold shares. */
async function cappedDapp(ops: bigint) {
  const tenant = await createTenant(app.ctx.deps);
  const policy = await app.ctx.deps.policies.create({
    dappId: tenant.dappId,
    name: 'daily budget',
    rules: { caps: [{ scope: 'dapp', unit: 'wei', limit: (WORST_CASE * ops).toString() }] },
  });
  return { tenant, policyId: policy.id };
}

/** Signs fresh ops (never submitted) from `ip` until refused; returns how many and the refusal. */
async function fillFrom(ip: string, tenant: Tenant, max = 20) {
  const ops: UserOperationV06[] = [];
  for (let i = 0; i < max; i++) {
    const op = await buildDeployingOp(app.fx, salt++);
    const a = await sponsorFrom(ip, tenant, op);
    if (a.result === undefined) return { signed: ops, refusal: a };
    ops.push({ ...op, paymasterAndData: a.result.paymasterAndData as Hex });
  }
  return { signed: ops, refusal: undefined };
}

describe(`held budgets: a cap filled with signatures never submitted (${BACKEND})`, () => {
  test('one IP holds half a cap of 8 ops at most; filling it takes five IPs; another caller is served meanwhile', async (t) => {
    const { tenant, policyId } = await cappedDapp(8n);
    const attacker = await fillFrom('203.0.113.7', tenant);
    assert.equal(attacker.signed.length, 4, 'half the cap from one IP, then its share');
    assert.equal(attacker.refusal?.error?.code, -32012);
    assert.deepEqual(
      { rule: ruleOf(attacker.refusal).rule, scope: ruleOf(attacker.refusal).scope },
      { rule: 'hold', scope: 'caller' },
    );
    assert.match(attacker.refusal?.error?.message ?? '', /holds .* in signatures the chain has not included/);
    // A user from elsewhere while the attacker holds its half: served (a busy cap's share is at least one op).
    const user = await sponsorFrom('198.51.100.20', tenant, await buildDeployingOp(app.fx, salt++));
    assert.ok(user.result, JSON.stringify(user.error));
    // The same /48 of IPv6 is one caller: a site cannot rotate its addresses to get more.
    const v6 = await fillFrom('2001:db8:1234:1::1', tenant);
    assert.equal(v6.signed.length, 1);
    assert.equal(
      ruleOf((await sponsorFrom('2001:db8:1234:ffff::9', tenant, await buildDeployingOp(app.fx, salt++))) as RpcAnswer)
        .rule,
      'hold',
    );
    // Two more IPs take one op each; then the cap itself is full.
    for (const ip of ['192.0.2.1', '192.0.2.2']) assert.equal((await fillFrom(ip, tenant)).signed.length, 1);
    const [cap] = await app.ctx.deps.policies.usage({ dappId: tenant.dappId, policyId });
    assert.equal(BigInt(cap?.reserved ?? 0), WORST_CASE * 8n, 'the cap is full');
    const late = await fillFrom('192.0.2.3', tenant);
    assert.deepEqual([late.signed.length, ruleOf(late.refusal).rule], [0, 'cap']);
    t.diagnostic('a cap of 8 worst cases: 4 from one IP, full from 5 IPs (the red team: 8 from one IP)');
  });

  test("ops included release their caller's hold: the caller signs again", async () => {
    const { tenant } = await cappedDapp(4n);
    const ip = '203.0.113.99';
    const first = await fillFrom(ip, tenant);
    assert.equal(first.signed.length, 2);
    assert.equal(ruleOf(first.refusal).rule, 'hold');
    const signed = await Promise.all(first.signed.map((op) => signAccount(app.fx, op)));
    const { events } = await submitHandleOps(app.fx, signed);
    assert.deepEqual(
      events.map((e) => e.args.success),
      [true, true],
    );
    await app.ctx.deps.settlement.runOnce();
    const again = await sponsorFrom(ip, tenant, await buildDeployingOp(app.fx, salt++));
    assert.ok(again.result, JSON.stringify(again.error));
  });

  test("one sender's share of a busy cap: a sender holds one op's worth, whoever asks", async () => {
    const { tenant } = await cappedDapp(4n);
    const base = await buildDeployingOp(app.fx, salt++);
    // Half the cap from other senders and IPs: the cap is busy from here.
    for (const ip of ['192.0.2.40', '192.0.2.41']) assert.equal((await fillFrom(ip, tenant, 1)).signed.length, 1);
    const a = await sponsorFrom('192.0.2.42', tenant, base);
    assert.ok(a.result, JSON.stringify(a.error));
    const b = await sponsorFrom('192.0.2.43', tenant, { ...base, nonce: base.nonce + 1n });
    assert.deepEqual({ rule: ruleOf(b).rule, scope: ruleOf(b).scope }, { rule: 'hold', scope: 'sender' });
  });
});
