import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Hex, hexToBytes } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { Config } from '../src/config/config.js';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { generateSigningSecret } from '../src/webhooks/standardWebhooks.js';
import {
  buildDeployingOp,
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  signAccount,
  startPatronFixture,
  submitHandleOps,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp } from './helpers/rpcFixture.js';
import { createTenant, createTestContext, type Tenant, type TestContext, testConfig } from './helpers/testContext.js';
import { answer, type Receiver, signedWith, startReceiver } from './helpers/webhookReceiver.js';

/**
 * A signer rotation as the operator runs it (docs/guides/signer-rotation.md), against the in-process chain's
 * PatronPaymaster and two Patron instances, the old key's and the new key's: add the new key on chain, start the
 * new instance, move the traffic, remove the old key. Every op signed on the way is submitted through handleOps
 * and must be included (zero refused); the old instance, still running, must notice within its check interval
 * that its key was removed and refuse (-32043) rather than sign data that fails AA34, with an alert and a metric;
 * and resume when its key is added back.
 */
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const CHECK_MS = 100;
const OLD_KEY = KEYS.signer;
const NEW_KEY = KEYS.stranger;

describe('signer rotation with an overlap, and the signer watch', () => {
  const secret = generateSigningSecret();
  let fx: PatronFixture;
  let receiver: Receiver;
  const contexts: TestContext[] = [];
  let salt = 100n;

  before(async () => {
    fx = await startPatronFixture();
    receiver = await startReceiver(answer({ ok: true }));
  });
  after(async () => {
    for (const c of contexts) await c.close();
    await receiver.close();
    await fx.close();
  });

  async function instance(key: Hex): Promise<{ ctx: TestContext; tenant: Tenant }> {
    const base = testConfig();
    const config: Partial<Config> = {
      metrics: { enabled: true, port: undefined, host: '127.0.0.1', token: METRICS_TOKEN },
      solvency: { ...base.solvency, alert: { url: receiver.url('/alerts'), secret } },
      paymaster: { ...base.paymaster, signerCheckMs: CHECK_MS },
    };
    const ctx = await createTestContext({ chains: [fixtureChainRuntime(fx)], signerKey: hexToBytes(key), config });
    contexts.push(ctx);
    return { ctx, tenant: await createTenant(ctx.deps) };
  }

  /** Asks the instance to sponsor a fresh account's deploying op; the signed op, or the JSON-RPC error. */
  async function sponsor(i: { ctx: TestContext; tenant: Tenant }) {
    salt += 1n;
    const op = await buildDeployingOp(fx, salt);
    const res = await i.ctx.app.inject({
      method: 'POST',
      url: `/api/v1/${fx.chain.chainId}/${i.tenant.apiKey}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'pm_sponsorUserOperation',
        params: [biconomyWireOp(op), { mode: 'SPONSORED', calculateGasLimits: false }],
      }),
    });
    const body = res.json() as { result?: { paymasterAndData: Hex }; error?: { code: number; message: string } };
    if (body.result === undefined) return { error: body.error, status: res.statusCode };
    return { op: await signAccount(fx, { ...op, paymasterAndData: body.result.paymasterAndData }) };
  }

  async function signed(i: { ctx: TestContext; tenant: Tenant }): Promise<UserOperationV06> {
    const r = await sponsor(i);
    assert.ok(r.op !== undefined, `sponsored: ${JSON.stringify(r.error)}`);
    return r.op;
  }

  /** Every op included and successful: none refused by the EntryPoint (AA34 would revert handleOps). */
  async function allIncluded(ops: readonly UserOperationV06[]): Promise<void> {
    const { receipt, events } = await submitHandleOps(fx, ops);
    assert.equal(receipt.status, 'success');
    assert.equal(events.length, ops.length);
    assert.ok(events.every((e) => e.args.success));
  }

  async function owner(functionName: 'addSigner' | 'removeSigner', key: Hex) {
    const hash = await fx.client.writeContract({
      address: fx.paymaster,
      abi: patronPaymasterAbi,
      functionName,
      args: [privateKeyToAccount(key).address],
    });
    await fx.client.waitForTransactionReceipt({ hash });
  }

  async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 5000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await read();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const alerts = () =>
    receiver.requests
      .filter((r) => r.url === '/alerts')
      .map((r) => {
        assert.ok(signedWith(secret, r), 'every alert is Standard Webhooks signed');
        return JSON.parse(r.body) as { type: string; data: Record<string, unknown> };
      })
      .filter((a) => a.type.startsWith('paymaster.signer.') && a.data.paymaster === fx.paymaster);

  async function acceptedGauge(ctx: TestContext): Promise<string | undefined> {
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    return res.body
      .split('\n')
      .find((l) => l.startsWith('patron_signer_accepted{') && l.includes(`paymaster="${fx.paymaster}"`))
      ?.split(' ')
      .at(-1);
  }

  test('add, move, remove: every op included; the old instance notices, refuses, alerts, and resumes', async () => {
    const a = await instance(OLD_KEY);
    const before = await signed(a);
    assert.equal(await acceptedGauge(a.ctx), '1');

    // Step 1: the new key on chain beside the old one. Step 2: the new instance starts; both sign meanwhile.
    await owner('addSigner', NEW_KEY);
    const b = await instance(NEW_KEY);
    const overlap = [before, await signed(a), await signed(b), await signed(a), await signed(b)];
    await allIncluded(overlap);

    // Step 3: the traffic is on the new instance; the old key is removed. Signed before the removal, a signature of
    // the old key is refused by the contract from the next block on (the EntryPoint's AA34): the service must stop.
    const removedAt = Date.now();
    await owner('removeSigner', OLD_KEY);
    const refusal = await until('the old instance to refuse', async () => {
      const r = await sponsor(a);
      return r.error === undefined ? undefined : r;
    });
    const noticedMs = Date.now() - removedAt;
    assert.equal(refusal.error?.code, -32043);
    assert.equal(refusal.status, 503);
    assert.match(refusal.error?.message ?? '', /does not accept Patron's signing key 0x[0-9a-fA-F]{40}/);
    // A generous bound over the 100 ms interval: the point is "within a read or two", not a figure.
    assert.ok(noticedMs < 3000, `noticed after ${noticedMs} ms`);
    await allIncluded([await signed(b), await signed(b)]);
    assert.equal(await acceptedGauge(a.ctx), '0');
    assert.equal(await acceptedGauge(b.ctx), '1');
    const removed = await until('the removal alert', async () => {
      const found = alerts().find((x) => x.type === 'paymaster.signer.removed');
      return found;
    });
    assert.equal(removed.data.signer, privateKeyToAccount(OLD_KEY).address);
    assert.equal(removed.data.chainId, fx.chain.chainId);
    assert.equal(
      alerts().filter((x) => x.type === 'paymaster.signer.removed').length,
      1,
      'one alert, not one per read or per request',
    );

    // The owner adds the old key back (an undo): the old instance signs again and says so.
    await owner('addSigner', OLD_KEY);
    const resumed = await until('the old instance to sign again', async () => (await sponsor(a)).op);
    await allIncluded([resumed]);
    await until('the restored alert', async () => alerts().find((x) => x.type === 'paymaster.signer.restored'));
    assert.equal(await acceptedGauge(a.ctx), '1');

    // The request log shows the refusals as denials with their rule, for the dashboard.
    await until('the refusal in the request log', async () => {
      const log = await a.ctx.app.inject({
        method: 'GET',
        url: '/api/admin/request-log',
        headers: { authorization: `Bearer ${a.tenant.authToken}` },
      });
      const entries = log.json().data.entries as Array<{ outcome: string; errorCode: number | null; sender: string }>;
      return entries.find((e) => e.outcome === 'denied' && e.errorCode === -32043);
    });
  });

  test('the EntryPoint refuses what the removed key signed, so the refusal above costs nothing', async () => {
    const a = await instance(OLD_KEY);
    const op = await signed(a);
    await owner('removeSigner', OLD_KEY);
    const failed = await fx.client
      .simulateContract({
        address: fx.entryPoint,
        abi: entryPoint06Abi,
        functionName: 'handleOps',
        args: [[op], fx.bundler.account.address],
        account: fx.bundler.account,
      })
      .then(
        () => 'included',
        (err: Error) => err.message,
      );
    assert.match(failed, /AA34 signature error/);
    await owner('addSigner', OLD_KEY);
  });
});
