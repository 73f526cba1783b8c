import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { HostResolver } from '../src/webhooks/webhookUrlPolicy.js';
import { createTenant, createTestContext, type TestContext } from './helpers/testContext.js';
import { type Receiver, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The webhook call path as createDeps wires it: a webhook registered by host name is resolved once per
 * PATRON_WEBHOOK_DNS_CACHE_SECONDS, not once per sponsorship (webhooks/cachingResolver.ts), and with the cache
 * off on every call. A real receiver on 127.0.0.1 answers; the name exists only in the test's resolver, so a
 * call that reached it went to the address the resolver gave (the connection is pinned to it).
 */
const HOST = 'hooks.patron.test';

function countingResolver(): { resolve: HostResolver; lookups: () => number } {
  let lookups = 0;
  return {
    resolve: async (host) => {
      if (host !== HOST) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      lookups += 1;
      return ['127.0.0.1'];
    },
    lookups: () => lookups,
  };
}

async function callTwice(ctx: TestContext, receiver: Receiver): Promise<void> {
  const tenant = await createTenant(ctx.deps);
  await ctx.deps.webhooks.create({
    dappId: tenant.dappId,
    url: `http://${HOST}:${receiver.port}/verify`,
    requestType: 'POST',
  });
  const [webhook] = await ctx.deps.webhooks.activeWebhooks(tenant.dappId);
  assert.ok(webhook !== undefined);
  for (const num of [2, 4]) {
    const verdict = await ctx.deps.webhookCaller.call({ webhook, webhookData: { num } });
    assert.equal(verdict.verified, true, JSON.stringify(verdict));
  }
}

describe('webhook calls and DNS', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
  });

  test('by default a host name is resolved once for many calls', async () => {
    const dns = countingResolver();
    const ctx = await createTestContext({ resolver: dns.resolve });
    try {
      const before = receiver.requests.length;
      await callTwice(ctx, receiver);
      assert.equal(receiver.requests.length - before, 2, 'both calls reached the receiver');
      assert.equal(dns.lookups(), 1);
    } finally {
      await ctx.close();
    }
  });

  test('with PATRON_WEBHOOK_DNS_CACHE_SECONDS=0 every call resolves', async () => {
    const dns = countingResolver();
    const ctx = await createTestContext({ resolver: dns.resolve, config: { webhookDnsCacheMs: 0 } });
    try {
      await callTwice(ctx, receiver);
      assert.equal(dns.lookups(), 2);
    } finally {
      await ctx.close();
    }
  });
});
