import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { buildDeployingOp } from './helpers/patronPaymasterV06.js';
import { biconomyWireOp, type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import {
  BACKEND,
  createTenant,
  openTestStore,
  type Tenant,
  WEBHOOK_PATH,
  webhookHeaders,
} from './helpers/testContext.js';
import { answer, type Receiver, startReceiver } from './helpers/webhookReceiver.js';

/**
 * Hole 4 of issue 20: a policy tightened while requests are in flight binds them. 20 sponsorship requests are held
 * 1.5 s by the dApp's webhook (a real HTTP receiver on 127.0.0.1); while they wait, the owner PATCHes the policy
 * through the admin API. Every request that answers after the PATCH's 200 obeys the new rules: a deny-all sender
 * list refuses them all, a cap lowered to 1 wei has nothing reserved against it. On PostgreSQL the write also comes
 * from another connection pool (another process's view of the same schema).
 */
let app: RpcFixture;
let receiver: Receiver;
let tenant: Tenant;
let salt = 70_000n;

const HOLD_MS = 1500;

before(async () => {
  app = await startRpcFixture();
  const verified = answer({ arePoliciesVerified: true });
  receiver = await startReceiver(async (req, res) => {
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    verified(req, res);
  });
});
after(async () => {
  await receiver.close();
  await app.close();
});
beforeEach(async () => {
  tenant = await createTenant(app.ctx.deps);
  const res = await app.ctx.app.inject({
    method: 'POST',
    url: WEBHOOK_PATH,
    headers: webhookHeaders(tenant),
    payload: { webhookUrl: receiver.url(), requestType: 'POST' },
  });
  assert.equal(res.statusCode, 200, res.body);
});

const admin = async (method: 'POST' | 'PATCH', url: string, body: unknown) => {
  const res = await app.ctx.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${tenant.authToken}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { data: { policyId: string } };
};

/** 20 requests sent at once; resolves once the webhook holds all of them, with each answer and when it came. */
async function inFlight() {
  const seen = receiver.requests.length;
  const ops = await Promise.all(Array.from({ length: 20 }, () => buildDeployingOp(app.fx, salt++)));
  const answers = ops.map((op) =>
    app
      .rpc('pm_sponsorUserOperation', [biconomyWireOp(op), { mode: 'SPONSORED', calculateGasLimits: false }], {
        apiKey: tenant.apiKey,
      })
      .then((r) => ({ ...r, at: performance.now() })),
  );
  while (receiver.requests.length < seen + 20) await new Promise((resolve) => setTimeout(resolve, 10));
  return answers;
}

describe(`a policy written while requests wait on the webhook binds them (${BACKEND})`, () => {
  test('a deny-all sender list: every request answered after the PATCH’s 200 is refused', async () => {
    const base = `/api/admin/dapps/${tenant.dappId}/policies`;
    const { data } = await admin('POST', base, { name: 'open', rules: {} });
    const answers = await inFlight();
    await admin('PATCH', `${base}/${data.policyId}`, {
      rules: { senders: { allow: ['0x000000000000000000000000000000000000dEaD'] } },
    });
    const acknowledged = performance.now();
    const results = await Promise.all(answers);
    const after = results.filter((r) => r.at > acknowledged);
    assert.equal(after.length, 20, 'the webhook held every request past the PATCH');
    for (const r of after) {
      assert.equal(r.body.error?.code, -32012, JSON.stringify(r.body));
      assert.equal((r.body.error?.data as { rule?: string } | undefined)?.rule, 'senderNotAllowed');
    }
  });

  test('a cap lowered to 1 wei: nothing is reserved against it after the PATCH’s 200', async () => {
    const base = `/api/admin/dapps/${tenant.dappId}/policies`;
    const caps = (limit: string) => ({ caps: [{ scope: 'dapp', unit: 'wei', limit }] });
    const { data } = await admin('POST', base, { name: 'budget', rules: caps('1000000000000000000') });
    const answers = await inFlight();
    await admin('PATCH', `${base}/${data.policyId}`, { rules: caps('1') });
    const results = await Promise.all(answers);
    for (const r of results) {
      assert.equal(r.body.error?.code, -32012, JSON.stringify(r.body));
      assert.equal((r.body.error?.data as { rule?: string } | undefined)?.rule, 'cap');
    }
    const [usage] = await app.ctx.deps.policies.usage({ dappId: tenant.dappId, policyId: data.policyId });
    assert.deepEqual([usage?.limit, usage?.reserved, usage?.used], ['1', '0', '0']);
  });

  test('a policy deactivated by another connection (PostgreSQL: another pool on the schema) binds them too', async (t) => {
    if (app.ctx.schema === undefined) {
      t.skip('SQLite in memory has no second connection; the SQLite IMMEDIATE batch is covered by spendLedger');
      return;
    }
    const base = `/api/admin/dapps/${tenant.dappId}/policies`;
    const { data } = await admin('POST', base, { name: 'only', rules: {} });
    const other = await openTestStore({ schema: app.ctx.schema });
    try {
      const answers = await inFlight();
      const updated = await other.store.policies.update({
        dappId: tenant.dappId,
        policyId: data.policyId,
        active: false,
        now: Date.now(),
      });
      assert.ok(updated !== undefined && updated !== 'name-taken');
      for (const r of await Promise.all(answers)) {
        assert.equal((r.body.error?.data as { rule?: string } | undefined)?.rule, 'noPolicyApplies');
      }
    } finally {
      await other.store.close();
    }
  });
});
