import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { pad, toFunctionSelector } from 'viem';
import { eip1193ChainRuntime } from '../src/chain/chainRegistry.js';
import type { RequestLogRecord } from '../src/requestLog/requestLogRecord.js';
import { createRequestLogRecorder, type RequestLogRecorderOptions } from '../src/requestLog/requestLogRecorder.js';
import { inThreadWriter } from '../src/requestLog/requestLogWriter.js';
import type { RequestLogRepository } from '../src/store/events/requestLogRepository.js';
import type { RequestLogEntry } from '../src/store/records.js';
import type { Store } from '../src/store/store.js';
import { setTenantPassword, signIn } from './helpers/dashboardSession.js';
import { recordOf } from './helpers/requestLogRecords.js';
import {
  createTenant,
  createTestContext,
  dropTestSchema,
  openTestStore,
  type Tenant,
  type TestContext,
} from './helpers/testContext.js';
import { answer, type Receiver, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The request log: every paymaster JSON-RPC call of a resolved dApp is recorded with its outcome, written in
 * batches off the request path, shown per account through the admin API, and pruned by age and count.
 * The chain is a stub that answers only the fee reads of the signing bounds (base fee 1 gwei, tip 1 gwei) and the
 * sender's code (a deployed account: an op without initCode from a sender without code is refused) and fails
 * every other call: the calls recorded here need no chain beyond that (limits given, or a stub).
 */
const SENDER = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';
const PAYMASTER = '0x1111111111111111111111111111111111111111';
const IS_SIGNER = toFunctionSelector('isSigner(address)');
const ENTRY_POINT = '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789';

const op = (nonce: number) => ({
  sender: SENDER,
  nonce: `0x${nonce.toString(16)}`,
  initCode: '0x',
  callData: '0x',
  callGasLimit: '100000',
  verificationGasLimit: '200000',
  preVerificationGas: '50000',
  maxFeePerGas: '0x3b9aca00',
  maxPriorityFeePerGas: '0x3b9aca00',
  signature: '0x',
});
const sponsoredParams = (nonce: number, webhookData?: unknown) => [
  op(nonce),
  {
    mode: 'SPONSORED',
    calculateGasLimits: false,
    ...(webhookData === undefined ? {} : { sponsorshipInfo: { webhookData } }),
  },
];

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let receiver: Receiver;

before(async () => {
  const chain = eip1193ChainRuntime({
    chainId: 31337,
    request: async ({ method, params }) => {
      if (method === 'eth_getBlockByNumber') return { number: '0x1', baseFeePerGas: '0x3b9aca00' };
      if (method === 'eth_maxPriorityFeePerGas') return '0x3b9aca00';
      if (method === 'eth_getCode') return '0x60006000fd';
      // The EntryPoint's balanceOf / getDepositInfo: a deposit of 1,000 ETH (on PostgreSQL the solvency claims
      // refuse to sign against a deposit never read).
      // The paymaster's isSigner (the signer watch): true, the key is accepted.
      if (method === 'eth_call' && JSON.stringify(params).includes(IS_SIGNER.slice(2))) return pad('0x01');
      if (method === 'eth_call') return `0x${(10n ** 21n).toString(16).padStart(64, '0')}${'0'.repeat(64 * 4)}`;
      throw new Error('no chain in this test');
    },
    entryPoint: ENTRY_POINT,
    paymaster: PAYMASTER,
  });
  ctx = await createTestContext({ chains: [chain] });
  a = await createTenant(ctx.deps, `a-${randomUUID()}@example.com`);
  b = await createTenant(ctx.deps, `b-${randomUUID()}@example.com`);
  receiver = await startReceiver(answer({ arePoliciesVerified: true }));
});
after(async () => {
  await receiver.close();
  await ctx.close();
});

async function rpc(tenant: Tenant, body: unknown) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/31337/${tenant.apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  return res;
}
const call = (tenant: Tenant, method: string, params: unknown[], id: number | string = 1) =>
  rpc(tenant, { jsonrpc: '2.0', id, method, params });

async function logOf(tenant: Tenant, query = '') {
  await ctx.deps.requestLog.flush();
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/api/admin/request-log${query}`,
    headers: { authorization: `Bearer ${tenant.authToken}` },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { entries: Array<Record<string, unknown>>; nextCursor: string | null };
}

describe('what is recorded', () => {
  test('a sponsored call: outcome, mode, sender (lower-case), method, chain, dApp, latency; no webhook', async () => {
    const res = await call(a, 'pm_getFeeQuoteOrData', sponsoredParams(1));
    assert.equal(res.statusCode, 200, res.body);
    const [e] = (await logOf(a)).entries;
    assert.ok(e);
    assert.equal(e.outcome, 'sponsored');
    assert.equal(e.mode, 'SPONSORED');
    assert.equal(e.sender, SENDER.toLowerCase());
    assert.equal(e.method, 'pm_getFeeQuoteOrData');
    assert.equal(e.chainId, 31337);
    assert.equal(e.dappId, a.dappId);
    assert.equal(e.errorCode, null);
    assert.equal(e.reason, null);
    assert.equal(e.webhook, null);
    assert.equal(typeof e.latencyMs, 'number');
    assert.ok(Math.abs(Date.parse(String(e.at)) - Date.now()) < 60_000);
  });

  test('the ERC-7677 stub is "quoted" (nothing signed)', async () => {
    const res = await call(a, 'pm_getPaymasterStubData', [op(2), ENTRY_POINT, '0x7a69', { mode: 'SPONSORED' }]);
    assert.equal(res.statusCode, 200, res.body);
    const [e] = (await logOf(a)).entries;
    assert.equal(e?.outcome, 'quoted');
    assert.equal(e?.method, 'pm_getPaymasterStubData');
  });

  test('each method reports the outcome it declares: the EntryPoints served and token rates sign nothing', async () => {
    // Guessed from the result's shape these were "sponsored" (no feeQuotes in them); each method now says.
    const listed = await call(a, 'pm_supportedEntryPoints', []);
    assert.equal(listed.statusCode, 200, listed.body);
    let [e] = (await logOf(a)).entries;
    assert.equal(e?.method, 'pm_supportedEntryPoints');
    assert.equal(e?.outcome, 'quoted');
    const rates = await call(a, 'pimlico_getTokenQuotes', [{ tokens: [SENDER] }, ENTRY_POINT, '0x7a69']);
    assert.equal(rates.statusCode, 200, rates.body);
    [e] = (await logOf(a)).entries;
    assert.equal(e?.method, 'pimlico_getTokenQuotes');
    assert.equal(e?.outcome, 'quoted');
  });

  test('invalid params are an "error" with the code and message', async () => {
    const res = await call(a, 'pm_sponsorUserOperation', [{ sender: 'nope' }, { mode: 'SPONSORED' }]);
    assert.equal(res.statusCode, 400);
    const [e] = (await logOf(a)).entries;
    assert.equal(e?.outcome, 'error');
    assert.equal(e?.errorCode, -32602);
    assert.match(String(e?.reason), /^Invalid params: params\[0\]/);
  });

  test('unknown API keys and unknown methods are not recorded (no dApp to show them to / no call made)', async () => {
    const before = (await logOf(a)).entries.length;
    await rpc(
      { ...a, apiKey: `pk.${'x'.repeat(33)}` },
      { jsonrpc: '2.0', id: 1, method: 'pm_getFeeQuoteOrData', params: [] },
    );
    await call(a, 'eth_chainId', []);
    assert.equal((await logOf(a)).entries.length, before);
  });

  test('a batch records each call', async () => {
    const before = (await logOf(a)).entries.length;
    const res = await rpc(
      a,
      [1, 2, 3].map((i) => ({
        jsonrpc: '2.0',
        id: i,
        method: 'pm_getFeeQuoteOrData',
        params: sponsoredParams(100 + i),
      })),
    );
    assert.equal(res.statusCode, 200);
    assert.equal((await logOf(a)).entries.length, before + 3);
  });

  test('out of the signing bounds: "denied" with -32040 and the rule in the reason', async () => {
    const [userOp, mode] = sponsoredParams(7);
    const inflated = { ...(userOp as object), maxPriorityFeePerGas: '0x3635c9adc5dea00000' };
    assert.equal((await call(a, 'pm_sponsorUserOperation', [inflated, mode])).statusCode, 400);
    const [e] = (await logOf(a)).entries;
    assert.equal(e?.outcome, 'denied');
    assert.equal(e?.errorCode, -32040);
    assert.match(String(e?.reason), /^Out of bounds: maxPriorityFeePerGas 1000000000000000000000 wei per gas/);
  });

  describe('with a webhook', () => {
    let webhookId: string;
    before(async () => {
      const res = await ctx.app.inject({
        method: 'POST',
        url: `/api/admin/dapps/${b.dappId}/webhooks`,
        headers: { authorization: `Bearer ${b.authToken}` },
        payload: { webhookUrl: receiver.url('/verify'), requestType: 'POST' },
      });
      assert.equal(res.statusCode, 200, res.body);
      webhookId = res.json().data.webhookId;
    });
    beforeEach(() => {
      receiver.handler = (req, res) => {
        const num = (JSON.parse(req.body || '{}') as { data?: { num?: number } }).data?.num;
        if (num === 500) return answer('boom', 500)(req, res);
        return answer({ arePoliciesVerified: typeof num === 'number' && num % 2 === 0 })(req, res);
      };
    });

    test('allowed: sponsored with the webhook verdict and its latency', async () => {
      assert.equal((await call(b, 'pm_getFeeQuoteOrData', sponsoredParams(3, { num: 2 }))).statusCode, 200);
      const [e] = (await logOf(b)).entries;
      assert.equal(e?.outcome, 'sponsored');
      const w = e?.webhook as { allowed: boolean; reason: string | null; latencyMs: number; calls: number };
      assert.equal(w.allowed, true);
      assert.equal(w.reason, null);
      assert.equal(w.calls, 1);
      assert.ok(w.latencyMs >= 0);
    });

    test('refused: "denied" with -32010 and the webhook reason', async () => {
      assert.equal((await call(b, 'pm_getFeeQuoteOrData', sponsoredParams(4, { num: 3 }))).statusCode, 400);
      const [e] = (await logOf(b)).entries;
      assert.equal(e?.outcome, 'denied');
      assert.equal(e?.errorCode, -32010);
      assert.deepEqual(
        { ...(e?.webhook as object), latencyMs: 0 },
        { allowed: false, reason: 'denied', latencyMs: 0, calls: 1 },
      );
    });

    test('no verdict: "denied" with -32011 and the failure reason', async () => {
      assert.equal((await call(b, 'pm_sponsorUserOperation', sponsoredParams(5, { num: 500 }))).statusCode, 400);
      const [e] = (await logOf(b)).entries;
      assert.equal(e?.outcome, 'denied');
      assert.equal(e?.errorCode, -32011);
      assert.equal(e?.reason, 'http_status');
      assert.equal((e?.webhook as { reason: string } | undefined)?.reason, 'http_status');
    });

    after(async () => {
      await ctx.app.inject({
        method: 'DELETE',
        url: `/api/admin/dapps/${b.dappId}/webhooks/${webhookId}`,
        headers: { authorization: `Bearer ${b.authToken}` },
      });
    });
  });
});

describe('reading it back', () => {
  test('filters: outcome, sender, dApp; another account’s dApp id finds nothing', async () => {
    const denied = await logOf(b, '?outcome=denied');
    assert.ok(denied.entries.length >= 2);
    assert.ok(denied.entries.every((e) => e.outcome === 'denied'));
    const bySender = await logOf(a, `?sender=${SENDER.toUpperCase().replace('0X', '0x')}`);
    assert.ok(bySender.entries.length > 0 && bySender.entries.every((e) => e.sender === SENDER.toLowerCase()));
    assert.equal((await logOf(a, '?sender=0x0000000000000000000000000000000000000001')).entries.length, 0);
    assert.equal((await logOf(a, `?dappId=${b.dappId}`)).entries.length, 0, 'B’s dApp through A’s account');
    assert.ok((await logOf(a, `?dappId=${a.dappId}`)).entries.length > 0);
  });

  test('tenancy: each account sees only its own dApps’ calls, through the token and the session alike', async () => {
    const mine = await logOf(a);
    assert.ok(mine.entries.every((e) => e.dappId === a.dappId));
    const theirs = await logOf(b);
    assert.ok(theirs.entries.length > 0 && theirs.entries.every((e) => e.dappId === b.dappId));
    await setTenantPassword(ctx.deps, b);
    const s = await signIn(ctx.app, b.email);
    const res = await ctx.app.inject({ method: 'GET', url: '/api/admin/request-log', headers: { cookie: s.cookie } });
    assert.deepEqual(
      res.json().data.entries.map((e: { id: string }) => e.id),
      theirs.entries.map((e) => e.id),
    );
  });

  test('pages newest first with nextCursor, no row twice', async () => {
    const all = (await logOf(a, '?limit=200')).entries.map((e) => e.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { entries: Array<Record<string, unknown>>; nextCursor: string | null } = await logOf(
        a,
        `?limit=2${cursor ? `&before=${cursor}` : ''}`,
      );
      seen.push(...page.entries.map((e) => String(e.id)));
      cursor = page.nextCursor;
    } while (cursor !== null);
    assert.deepEqual(seen, all);
    const times = (await logOf(a, '?limit=200')).entries.map((e) => Date.parse(String(e.at)));
    assert.deepEqual(
      times,
      [...times].sort((x, y) => y - x),
    );
  });

  test('policy.guarantee: true for a token op signed in mode 2 (with or without caps), false otherwise', async () => {
    // Rows as the recorder writes them (requestLogOnCall.ts); the token flow that records them through the service
    // is test/paymasterRpc.token.guarantee.test.ts.
    const c = await createTenant(ctx.deps, `c-${randomUUID()}@example.com`);
    // One clock reading for all rows: a millisecond ticking between two of them gave two rows the same time, and
    // the newest-first order then fell to their random ids.
    const now = Date.now();
    const row = (n: number, policy: RequestLogEntry['policy']) => ({
      id: randomUUID(),
      at: now - n,
      accountId: c.accountId,
      dappId: c.dappId,
      chainId: 31337,
      method: 'pm_getPaymasterData',
      mode: 'ERC20',
      sender: SENDER.toLowerCase(),
      outcome: 'sponsored' as const,
      errorCode: null,
      reason: null,
      webhook: null,
      latencyMs: 3,
      policy,
      userOpHash: null,
      actualCostWei: null,
    });
    await ctx.deps.store.requestLog.insertMany([
      row(1, { decision: 'passed', policyIds: [], guarantee: true }),
      row(2, {
        decision: 'passed',
        policyIds: ['p1'],
        reservationId: 'r1',
        reserved: [{ unit: 'wei', amount: '7' }],
        guarantee: true,
      }),
      row(3, { decision: 'passed', policyIds: ['p1'], reserved: [{ unit: 'wei', amount: '5' }] }),
      row(4, null),
    ]);
    const { entries } = await logOf(c);
    assert.deepEqual(
      entries.map((e) => e.policy),
      [
        { decision: 'passed', rule: null, policyId: null, policyIds: [], reserved: [], guarantee: true },
        {
          decision: 'passed',
          rule: null,
          policyId: null,
          policyIds: ['p1'],
          reserved: [{ unit: 'wei', amount: '7' }],
          guarantee: true,
        },
        {
          decision: 'passed',
          rule: null,
          policyId: null,
          policyIds: ['p1'],
          reserved: [{ unit: 'wei', amount: '5' }],
          guarantee: false,
        },
        null,
      ],
    );
  });

  test('bad queries are 400 naming the field', async () => {
    for (const [q, msg] of [
      ['?outcome=won', /^outcome must be one of sponsored, quoted, denied, error$/],
      ['?sender=0x12', /^sender must be an address/],
      ['?limit=0', /^limit must be an integer from 1 to 200$/],
      ['?before=abc', /^before must be a cursor/],
    ] as const) {
      const res = await ctx.app.inject({
        method: 'GET',
        url: `/api/admin/request-log${q}`,
        headers: { authorization: `Bearer ${a.authToken}` },
      });
      assert.equal(res.statusCode, 400, q);
      assert.match(res.json().message, msg);
    }
  });

  test('stats: counts per outcome in even buckets over the range', async () => {
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/api/admin/request-log/stats?range=24h',
      headers: { authorization: `Bearer ${b.authToken}` },
    });
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data as { bucketMs: number; buckets: Array<Record<string, number | string>> };
    assert.equal(data.bucketMs, 3_600_000);
    assert.equal(data.buckets.length, 24);
    const sum = (k: string) => data.buckets.reduce((n, x) => n + Number(x[k]), 0);
    const entries = (await logOf(b, '?limit=200')).entries;
    for (const k of ['sponsored', 'quoted', 'denied', 'error']) {
      assert.equal(sum(k), entries.filter((e) => e.outcome === k).length, k);
    }
    const hour = await ctx.app.inject({
      method: 'GET',
      url: '/api/admin/request-log/stats?range=1h',
      headers: { authorization: `Bearer ${b.authToken}` },
    });
    assert.equal(hour.json().data.buckets.length, 12);
  });
});

describe('the recorder', () => {
  let store: Store;
  let schema: string | undefined;
  beforeEach(async () => {
    ({ store, schema } = await openTestStore());
  });
  const close = async () => {
    await store.close();
    await dropTestSchema(schema);
  };
  const entry = (i: number, at = Date.now()): RequestLogRecord =>
    recordOf({
      at,
      accountId: 'acc',
      dappId: 'dapp',
      chainId: 1,
      method: 'pm_sponsorUserOperation',
      mode: 'SPONSORED',
      sender: SENDER,
      outcome: i % 2 === 0 ? 'sponsored' : 'denied',
      errorCode: i % 2 === 0 ? null : -32010,
      reason: i % 2 === 0 ? null : 'x'.repeat(1000),
      webhook: null,
      latencyMs: 1.5,
      policy: null,
      userOpHash: null,
    });
  const count = async () => (await store.requestLog.query({ accountId: 'acc', limit: 10_000 })).length;
  const silent = { warn: () => {} };
  /** A recorder on the test's store whose timer never fires within a test; each test sets what it is about. */
  const recorder = (opts: Partial<RequestLogRecorderOptions> = {}) =>
    createRequestLogRecorder({
      repository: store.requestLog,
      writer: inThreadWriter(opts.repository ?? store.requestLog),
      now: Date.now,
      logger: silent,
      retentionDays: 7,
      maxRows: 1e6,
      flushIntervalMs: 60_000,
      ...opts,
    });

  test('record is an append: nothing is written until a flush; a full batch flushes on its own', async () => {
    const r = recorder({ batchSize: 10 });
    for (let i = 0; i < 9; i++) r.record(entry(i));
    assert.equal(r.stats().buffered, 9);
    assert.equal(await count(), 0);
    r.record(entry(9));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(await count(), 10, 'the 10th entry filled a batch');
    const [denied] = await store.requestLog.query({ accountId: 'acc', outcome: 'denied', limit: 1 });
    assert.equal(denied?.reason?.length, 300, 'reasons are cut to 300 characters');
    await r.close();
    await close();
  });

  test('a full buffer drops and counts instead of growing; close flushes the rest', async () => {
    const r = recorder({ bufferLimit: 5, batchSize: 1000 });
    for (let i = 0; i < 8; i++) r.record(entry(i));
    assert.deepEqual(r.stats(), { recorded: 5, dropped: 3, written: 0, failed: 0, buffered: 5 });
    await r.close();
    assert.equal(await count(), 5);
    assert.equal(r.stats().written, 5);
    r.record(entry(0));
    assert.equal(r.stats().buffered, 0, 'closed: no more recording');
    await close();
  });

  test('a failing database loses the batch (counted and warned once), never blocks or retries forever', async () => {
    const warnings: string[] = [];
    const broken: RequestLogRepository = {
      ...store.requestLog,
      insertMany: async () => {
        throw new Error('database down');
      },
    };
    const r = recorder({ repository: broken, logger: { warn: (_o, m) => warnings.push(m) } });
    for (let i = 0; i < 3; i++) r.record(entry(i));
    await r.flush();
    r.record(entry(4));
    await r.flush();
    assert.equal(r.stats().failed, 4);
    assert.equal(r.stats().buffered, 0);
    assert.deepEqual(warnings, ['could not write the request log; entries dropped']);
    await r.close();
    await close();
  });

  test('retention: rows older than the retention age go, then the oldest beyond the row cap', async () => {
    const now = Date.now();
    const r = recorder({ now: () => now, retentionDays: 2, maxRows: 1000 });
    for (let i = 0; i < 5; i++) r.record(entry(i, now - 3 * 86_400_000 - i));
    for (let i = 0; i < 1010; i++) r.record(entry(i, now - 1000 - i));
    await r.flush();
    assert.equal(await count(), 1015);
    const deleted = await r.prune();
    assert.equal(deleted, 15);
    const left = await store.requestLog.query({ accountId: 'acc', limit: 10_000 });
    assert.equal(left.length, 1000);
    assert.equal(left.at(-1)?.at, now - 1000 - 999, 'the newest 1000 stay');
    await r.close();
    await close();
  });

  test('retention 0 turns recording off', async () => {
    // Retention 0 starts no flush timer, so the helper's flushIntervalMs plays no part here.
    const r = recorder({ retentionDays: 0, maxRows: 1000 });
    r.record(entry(1));
    await r.close();
    assert.equal(await count(), 0);
    assert.equal(r.stats().recorded, 0);
    await close();
  });
});
