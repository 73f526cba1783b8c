import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createSecretBox } from '../src/crypto/secretBox.js';
import type { WebhookRequestType } from '../src/store/records.js';
import { checkSponsorshipWebhooks } from '../src/webhooks/webhookCheck.js';
import {
  createTenant,
  createTestContext,
  TEST_MASTER_KEY,
  type Tenant,
  type TestContext,
  WEBHOOK_PATH,
  webhookHeaders,
} from './helpers/testContext.js';
import { answer, type Receiver, type ReceiverHandler, signedWith, startReceiver } from './helpers/webhookReceiver.js';

// The sponsorship webhook check end to end: webhooks registered through the REST API, stored in the test back
// end (SQLite or PostgreSQL), called over real HTTP on 127.0.0.1.

let ctx: TestContext;
const receivers: Receiver[] = [];
before(async () => {
  ctx = await createTestContext();
});
after(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await ctx.close();
});

async function receiver(verdict: unknown = { arePoliciesVerified: true }, status = 200): Promise<Receiver> {
  const r = await startReceiver(answer(verdict, status));
  receivers.push(r);
  return r;
}

async function register(t: Tenant, url: string, requestType: WebhookRequestType = 'POST') {
  const res = await ctx.app.inject({
    method: 'POST',
    url: WEBHOOK_PATH,
    headers: webhookHeaders(t),
    payload: { webhookUrl: url, requestType },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { webhookId: string; signingSecret: string };
}

const check = (t: Tenant, webhookData?: Record<string, unknown>) =>
  checkSponsorshipWebhooks({
    webhooks: ctx.deps.webhooks,
    caller: ctx.deps.webhookCaller,
    dappId: t.dappId,
    ...(webhookData === undefined ? {} : { webhookData }),
  });

describe('signatures verify with the secret returned on create', () => {
  for (const requestType of ['POST', 'GET'] as const) {
    test(requestType, async () => {
      const t = await createTenant(ctx.deps);
      const r = await receiver();
      const { signingSecret } = await register(t, r.url(), requestType);
      const result = await check(t, { num: 2, who: 'ünï' });
      assert.equal(result.allowed, true);
      assert.equal(r.requests.length, 1);
      assert.equal(signedWith(signingSecret, r.requests[0]), true);
      const other = await register(t, r.url('/other'), requestType);
      assert.notEqual(other.signingSecret, signingSecret, 'each webhook has its own secret');
      assert.equal(signedWith(other.signingSecret, r.requests[0]), false);
    });
  }
});

describe('checkSponsorshipWebhooks', () => {
  test('no active webhook → allowed without a call', async () => {
    const t = await createTenant(ctx.deps);
    assert.deepEqual(await check(t, { num: 1 }), { allowed: true, calls: [] });
  });

  test('several active webhooks, all verified → allowed, every one called once, in parallel', async () => {
    const t = await createTenant(ctx.deps);
    // A barrier instead of a stopwatch: each webhook answers once all three are waiting (or after 2 s), so calls
    // made one after another would see at most one in flight, calls in parallel see three.
    let inFlight = 0;
    let maxInFlight = 0;
    let release: () => void = () => {};
    const allArrived = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gated: ReceiverHandler = async (q, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (inFlight === 3) release();
      await Promise.race([allArrived, new Promise((resolve) => setTimeout(resolve, 2000))]);
      inFlight--;
      answer({ arePoliciesVerified: true })(q, res);
    };
    const rs = await Promise.all([receiver(), receiver(), receiver()]);
    for (const r of rs) {
      r.handler = gated;
      await register(t, r.url());
    }
    const result = await check(t);
    assert.equal(maxInFlight, 3, 'the three webhooks were called at once');
    assert.equal(result.allowed, true);
    assert.equal(result.calls.length, 3);
    assert.deepEqual(
      rs.map((r) => r.requests.length),
      [1, 1, 1],
    );
  });

  test('one webhook answering false → denied, with its verdict as the failure', async () => {
    const t = await createTenant(ctx.deps);
    await register(t, (await receiver()).url());
    const { webhookId } = await register(t, (await receiver({ arePoliciesVerifed: false })).url());
    const result = await check(t);
    assert.equal(result.allowed, false);
    assert.ok(!result.allowed);
    assert.deepEqual(
      { ...result.failure, latencyMs: 0 },
      { verified: false, reason: 'denied', status: 200, latencyMs: 0 },
    );
    assert.equal(result.calls.length, 2);
    assert.equal(result.calls.find((c) => !c.verdict.verified)?.webhookId, webhookId);
  });

  test('the failure reported is the first in registration order, not the first to complete', async () => {
    const t = await createTenant(ctx.deps);
    const slow500 = await receiver();
    slow500.handler = async (q, res) => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      answer('boom', 500, 'text/plain')(q, res);
    };
    await register(t, slow500.url());
    await register(t, (await receiver({ arePoliciesVerified: false })).url());
    const result = await check(t);
    assert.ok(!result.allowed);
    assert.equal(result.failure.reason, 'http_status');
  });

  test('an inactive webhook is never called', async () => {
    const t = await createTenant(ctx.deps);
    const active = await receiver();
    const inactive = await receiver({ arePoliciesVerified: false });
    await register(t, active.url());
    const { webhookId } = await register(t, inactive.url());
    const res = await ctx.app.inject({
      method: 'PATCH',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(t),
      payload: { webhookId, active: false },
    });
    assert.equal(res.statusCode, 200);
    const result = await check(t);
    assert.equal(result.allowed, true);
    assert.equal(active.requests.length, 1);
    assert.equal(inactive.requests.length, 0);
  });

  test('webhookData defaults to {}', async () => {
    const t = await createTenant(ctx.deps);
    const r = await receiver();
    await register(t, r.url());
    await check(t);
    assert.equal(r.requests[0]?.body, '{"data":{}}');
  });
});

/** An active POST webhook row as written straight into the store, with no signing secret (as before 0002). */
function storedWithoutSecret(t: Tenant, url: string) {
  return {
    id: randomUUID(),
    dappId: t.dappId,
    url,
    requestType: 'POST' as const,
    active: true,
    createdAt: Date.now(),
    updatedAt: Date.now(),
    signingSecretCiphertext: null,
  };
}

describe('webhooks stored before signing secrets existed (migration 0002)', () => {
  test('get a secret on their first call, kept for later calls and revealed by rotation', async () => {
    const t = await createTenant(ctx.deps);
    const r = await receiver();
    const legacy = storedWithoutSecret(t, r.url());
    assert.equal(await ctx.deps.store.webhooks.insertWithinLimit({ webhook: legacy, limit: 10 }), 'created');
    assert.equal((await check(t)).allowed, true);
    const [stored] = await ctx.deps.store.webhooks.listActiveSealed(t.dappId);
    assert.ok(stored?.signingSecretCiphertext, 'a secret was stored');
    const secret = createSecretBox(TEST_MASTER_KEY).open(stored.signingSecretCiphertext);
    assert.equal(signedWith(secret, r.requests[0]), true);
    // Another process that also saw no secret must not replace the one already in use (compare-and-set).
    const late = { webhookId: legacy.id, signingSecretCiphertext: createSecretBox(TEST_MASTER_KEY).seal('whsec_late') };
    assert.equal(await ctx.deps.store.webhooks.fillMissingSigningSecret(late), false);
    await check(t);
    const [again] = await ctx.deps.store.webhooks.listActiveSealed(t.dappId);
    assert.equal(again?.signingSecretCiphertext, stored.signingSecretCiphertext, 'not regenerated');
    assert.equal(signedWith(secret, r.requests[1]), true);
  });
});

describe('production mode', () => {
  test('a stored webhook on 127.0.0.1 is refused at call time without connecting (forbidden_address)', async () => {
    const prod = await createTestContext({ config: { production: true, allowPrivateWebhookUrls: false } });
    try {
      const t = await createTenant(prod.deps);
      const r = await receiver();
      // Stored directly: registration would refuse the URL. DNS or a policy change can get one stored anyway.
      const webhook = storedWithoutSecret(t, r.url());
      await prod.deps.store.webhooks.insertWithinLimit({ webhook, limit: 10 });
      const result = await checkSponsorshipWebhooks({
        webhooks: prod.deps.webhooks,
        caller: prod.deps.webhookCaller,
        dappId: t.dappId,
      });
      assert.ok(!result.allowed);
      assert.equal(result.failure.reason, 'forbidden_address');
      assert.equal(r.connections(), 0);
    } finally {
      await prod.close();
    }
  });
});
