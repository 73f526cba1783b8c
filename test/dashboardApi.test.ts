import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { hexToBytes, parseEther } from 'viem';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import { eip1193ChainRuntime } from '../src/chain/chainRegistry.js';
import { devChainDeployments } from '../src/chain/embeddedChain.js';
import { type SignedIn, setTenantPassword, signIn, writeHeaders } from './helpers/dashboardSession.js';
import {
  fixtureChainRuntime,
  KEYS,
  latestTimestamp,
  type PatronFixture,
  startPatronFixture,
} from './helpers/patronPaymasterV06.js';
import { createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';
import { answer, type Receiver, signedWith, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The admin endpoints the dashboard adds, through a signed-in session: webhook register / activate / delete /
 * reveal / test call, paymaster status; the static dashboard itself; and tenancy (another account's ids are
 * answered exactly like unknown ones).
 */
let fx: PatronFixture;
let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let sa: SignedIn;
let sb: SignedIn;
let receiver: Receiver;

before(async () => {
  fx = await startPatronFixture(); // paymaster deposit: 10 ETH
  const chain = fixtureChainRuntime(fx);
  ctx = await createTestContext({
    chains: [chain],
    signerKey: hexToBytes(KEYS.signer),
    config: {
      dashboard: {
        basePath: '/ops/ui',
        sessionIdleMs: 3_600_000,
        sessionMaxMs: 7_200_000,
        depositWarningWei: parseEther('20'),
      },
    },
  });
  a = await createTenant(ctx.deps, `a-${randomUUID()}@example.com`);
  b = await createTenant(ctx.deps, `b-${randomUUID()}@example.com`);
  await setTenantPassword(ctx.deps, a);
  await setTenantPassword(ctx.deps, b);
  sa = await signIn(ctx.app, a.email);
  sb = await signIn(ctx.app, b.email);
  receiver = await startReceiver(answer({ arePoliciesVerified: true }));
});
after(async () => {
  await receiver.close();
  await ctx.close();
  await fx.close();
});

const as = (s: SignedIn) => ({
  get: (url: string) => ctx.app.inject({ method: 'GET', url, headers: { cookie: s.cookie } }),
  send: (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    ctx.app.inject({
      method,
      url,
      headers: writeHeaders(s),
      ...(payload === undefined ? {} : { payload: payload as object }),
    }),
});

describe('webhooks from the dashboard', () => {
  let webhookId: string;
  let secret: string;
  const hooks = () => `/api/admin/dapps/${a.dappId}/webhooks`;

  test('register: the URL policy and the signing secret, shown in this answer', async () => {
    const res = await as(sa).send('POST', hooks(), { webhookUrl: receiver.url('/hook'), requestType: 'post' });
    assert.equal(res.statusCode, 200, res.body);
    const d = res.json().data;
    assert.equal(d.requestType, 'POST');
    assert.equal(d.active, true);
    assert.match(d.signingSecret, /^whsec_/);
    webhookId = d.webhookId;
    secret = d.signingSecret;
    const list = await as(sa).get(hooks());
    assert.equal(list.json().data.length, 1);
    assert.equal(JSON.stringify(list.json()).includes('whsec_'), false, 'listing never shows secrets');
  });

  test('register refuses what the spec API refuses', async () => {
    const bad = await as(sa).send('POST', hooks(), { webhookUrl: 'ftp://x', requestType: 'POST' });
    assert.equal(bad.statusCode, 400);
    const method = await as(sa).send('POST', hooks(), { webhookUrl: receiver.url(), requestType: 'PUT' });
    assert.equal(method.json().message, 'requestType must be one of GET, POST');
  });

  test('reveal shows the same secret again, on an explicit POST only', async () => {
    const res = await as(sa).send('POST', `${hooks()}/${webhookId}/reveal-secret`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().data.signingSecret, secret);
    const noCsrf = await ctx.app.inject({
      method: 'POST',
      url: `${hooks()}/${webhookId}/reveal-secret`,
      headers: { cookie: sa.cookie },
    });
    assert.equal(noCsrf.statusCode, 403);
  });

  test('send test: the signed call with sample webhookData, and its verdict, status and latency', async () => {
    receiver.requests.length = 0;
    const res = await as(sa).send('POST', `${hooks()}/${webhookId}/test`, {});
    assert.equal(res.statusCode, 200, res.body);
    const v = res.json().data;
    assert.equal(v.verified, true);
    assert.equal(v.status, 200);
    assert.equal(typeof v.latencyMs, 'number');
    const req = receiver.requests[0];
    assert.ok(req);
    assert.deepEqual(JSON.parse(req.body), { data: { patronTest: true, num: 2 } });
    assert.equal(signedWith(secret, req), true);
  });

  test('send test with the owner’s webhookData; a denial and a failure are verdicts, not errors', async () => {
    receiver.handler = answer({ arePoliciesVerified: false });
    const denied = await as(sa).send('POST', `${hooks()}/${webhookId}/test`, { webhookData: { num: 3 } });
    assert.equal(denied.statusCode, 200);
    assert.equal(denied.json().data.verified, false);
    assert.equal(denied.json().data.reason, 'denied');
    assert.deepEqual(JSON.parse(receiver.requests.at(-1)?.body ?? ''), { data: { num: 3 } });
    receiver.handler = answer('nope', 503);
    const failed = await as(sa).send('POST', `${hooks()}/${webhookId}/test`);
    assert.deepEqual(
      { ...failed.json().data, latencyMs: 0 },
      { verified: false, reason: 'http_status', status: 503, latencyMs: 0 },
    );
    receiver.handler = answer({ arePoliciesVerified: true });
    const bad = await as(sa).send('POST', `${hooks()}/${webhookId}/test`, { webhookData: [1] });
    assert.equal(bad.statusCode, 400);
  });

  test('send test with webhookData nested 5,000 levels or over 16 KiB: 400 naming the bound, nothing sent', async () => {
    const calls = receiver.requests.length;
    const deep = `{"webhookData":${'{"a":'.repeat(4999)}{}${'}'.repeat(4999)}}`;
    const res = await ctx.app.inject({
      method: 'POST',
      url: `${hooks()}/${webhookId}/test`,
      headers: { ...writeHeaders(sa), 'content-type': 'application/json' },
      payload: deep,
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().message, 'webhookData must nest at most 32 levels');
    const big = await as(sa).send('POST', `${hooks()}/${webhookId}/test`, { webhookData: { pad: 'x'.repeat(16_384) } });
    assert.equal(big.statusCode, 400, big.body);
    assert.match(big.json().message, /^webhookData must be at most 16384 bytes as JSON/);
    assert.equal(receiver.requests.length, calls);
  });

  test('deactivate, activate (an inactive webhook can still be tested), delete', async () => {
    const off = await as(sa).send('PATCH', `${hooks()}/${webhookId}`, { active: false });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(off.json().data.active, false);
    const test = await as(sa).send('POST', `${hooks()}/${webhookId}/test`);
    assert.equal(test.json().data.verified, true);
    assert.equal((await as(sa).send('PATCH', `${hooks()}/${webhookId}`, { active: 'yes' })).statusCode, 400);
    const on = await as(sa).send('PATCH', `${hooks()}/${webhookId}`, { active: true });
    assert.equal(on.json().data.active, true);
    assert.equal((await as(sa).send('DELETE', `${hooks()}/${webhookId}`)).statusCode, 200);
    assert.equal((await as(sa).get(hooks())).json().data.length, 0);
    assert.equal((await as(sa).send('DELETE', `${hooks()}/${webhookId}`)).statusCode, 404);
  });
});

describe('tenancy: another account’s dApp and webhooks are not found', () => {
  let theirHook: string;
  before(async () => {
    const res = await as(sb).send('POST', `/api/admin/dapps/${b.dappId}/webhooks`, {
      webhookUrl: receiver.url('/b'),
      requestType: 'POST',
    });
    theirHook = res.json().data.webhookId;
  });

  test('every webhook route with B’s ids, signed in as A, answers 404 and changes nothing', async () => {
    receiver.requests.length = 0;
    const base = `/api/admin/dapps/${b.dappId}/webhooks`;
    const attempts = [
      as(sa).get(base),
      as(sa).send('POST', base, { webhookUrl: receiver.url('/a'), requestType: 'POST' }),
      as(sa).send('PATCH', `${base}/${theirHook}`, { active: false }),
      as(sa).send('POST', `${base}/${theirHook}/reveal-secret`),
      as(sa).send('POST', `${base}/${theirHook}/rotate-secret`),
      as(sa).send('POST', `${base}/${theirHook}/test`),
      as(sa).send('DELETE', `${base}/${theirHook}`),
      // A's own dApp with B's webhook id.
      as(sa).send('POST', `/api/admin/dapps/${a.dappId}/webhooks/${theirHook}/test`),
      as(sa).send('POST', `/api/admin/dapps/${a.dappId}/webhooks/${theirHook}/reveal-secret`),
      as(sa).get(`/api/admin/dapps/${b.dappId}`),
      as(sa).send('PATCH', `/api/admin/dapps/${b.dappId}`, { name: 'mine now' }),
      as(sa).send('POST', `/api/admin/dapps/${b.dappId}/rotate-key`),
    ];
    for (const res of await Promise.all(attempts)) {
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(res.body.includes('whsec_'), false);
    }
    assert.equal(receiver.requests.length, 0, 'no test call went out');
    const theirs = await as(sb).get(base);
    assert.equal(theirs.json().data.length, 1);
    assert.equal(theirs.json().data[0].active, true);
    assert.equal((await as(sb).get(`/api/admin/dapps/${b.dappId}`)).json().data.name, 'Test dApp');
  });

  test('lists are the account’s own', async () => {
    const dapps = (await as(sa).get('/api/admin/dapps')).json().data as Array<{ dappId: string }>;
    assert.deepEqual(
      dapps.map((d) => d.dappId),
      [a.dappId],
    );
    const tokens = (await as(sa).get('/api/admin/tokens')).json().data as Array<{ tokenId: string }>;
    const theirTokens = (await as(sb).get('/api/admin/tokens')).json().data as Array<{ tokenId: string }>;
    assert.equal(
      tokens.some((t) => theirTokens.some((u) => u.tokenId === t.tokenId)),
      false,
    );
    const revoke = await as(sa).send('DELETE', `/api/admin/tokens/${theirTokens[0]?.tokenId}`);
    assert.equal(revoke.statusCode, 404);
  });
});

describe('paymaster status', () => {
  test('per paymaster deployment: addresses, deposit, signer; a deposit below the threshold is flagged', async () => {
    const res = await as(sa).get('/api/admin/paymaster-status');
    assert.equal(res.statusCode, 200, res.body);
    const d = res.json().data;
    assert.deepEqual(d.depositWarning, { wei: parseEther('20').toString(), eth: '20' });
    // One row per EntryPoint version of the dev chain, each with its own paymaster and its own deposit.
    assert.deepEqual(
      d.paymasters.map((p: { chainId: number; entryPointVersion: string; entryPoint: string; paymaster: string }) => [
        p.chainId,
        p.entryPointVersion,
        p.entryPoint,
        p.paymaster,
      ]),
      devChainDeployments(fx).map((x) => [fx.chain.chainId, x.entryPointVersion, x.entryPoint, x.paymaster]),
    );
    assert.equal(new Set(d.paymasters.map((p: { paymaster: string }) => p.paymaster)).size, 4);
    for (const p of d.paymasters) {
      assert.equal(p.deposit.eth, '10', p.entryPointVersion);
      assert.equal(p.signer, ctx.deps.signer.address);
      assert.deepEqual(p.onChainSigners, [ctx.deps.signer.address], p.entryPointVersion);
      assert.equal(p.signerActive, true, p.entryPointVersion);
      assert.deepEqual(
        p.warnings.map((w: { code: string }) => w.code),
        ['deposit_low'],
      );
    }
    // `chains`, as callers from before the deployments read it: per chain, its first (v0.6) paymaster's row.
    assert.deepEqual(d.chains, [d.paymasters[0]]);
    const [c] = d.chains;
    assert.equal(c.chainId, fx.chain.chainId);
    assert.equal(c.paymaster, fx.paymaster);
    assert.equal(c.entryPoint, fx.entryPoint);
    assert.equal(c.entryPointVersion, '0.6');
  });

  test('the stake state per deployment: staked, then unlocking with when it can be withdrawn', async () => {
    type Row = { entryPointVersion: string; stakeState: string | null; stakeWithdrawableAt: string | null };
    const rows = async () => (await as(sa).get('/api/admin/paymaster-status')).json().data.paymasters as Row[];
    // The embedded chain stakes its paymasters as it deploys them.
    for (const r of await rows()) {
      assert.deepEqual([r.stakeState, r.stakeWithdrawableAt], ['staked', null], r.entryPointVersion);
    }
    // The owner unlocks the v0.9 paymaster's stake: the delay runs from that block.
    const v09 = devChainDeployments(fx).find((d) => d.entryPointVersion === '0.9');
    assert.ok(v09);
    const hash = await fx.client.writeContract({
      address: v09.paymaster,
      abi: patronPaymasterAbi,
      functionName: 'unlockStake',
    });
    await fx.client.waitForTransactionReceipt({ hash });
    const unlockedAt = await latestTimestamp(fx);
    const after = await rows();
    const row = after.find((r) => r.entryPointVersion === '0.9');
    assert.equal(row?.stakeState, 'unlocking');
    const delay = (await as(sa).get('/api/admin/paymaster-status'))
      .json()
      .data.paymasters.find((r: Row) => r.entryPointVersion === '0.9').unstakeDelaySec as number;
    assert.ok(delay > 0);
    assert.equal(row?.stakeWithdrawableAt, new Date((unlockedAt + delay) * 1000).toISOString());
    assert.deepEqual(
      after.filter((r) => r.entryPointVersion !== '0.9').map((r) => r.stakeState),
      ['staked', 'staked', 'staked'],
    );
  });

  test('a signer that is not the contract’s is flagged; an unreachable chain is a warning, not a failure', async () => {
    const other = await createTestContext({
      chains: [
        fixtureChainRuntime(fx),
        eip1193ChainRuntime({
          chainId: 999,
          request: async () => {
            throw new Error('down');
          },
          entryPoint: fx.entryPoint,
          paymaster: fx.paymaster,
        }),
      ],
    });
    try {
      const t = await createTenant(other.deps);
      const res = await other.app.inject({
        method: 'GET',
        url: '/api/admin/paymaster-status',
        headers: { authorization: `Bearer ${t.authToken}` },
      });
      const rows = res.json().data.paymasters as Array<{
        chainId: number;
        entryPointVersion: string;
        deposit: unknown;
        warnings: Array<{ code: string }>;
      }>;
      const dev = rows.filter((r) => r.chainId === fx.chain.chainId);
      assert.equal(dev.length, 4);
      for (const r of dev) {
        assert.ok(
          r.warnings.some((w) => w.code === 'signer_mismatch'),
          r.entryPointVersion,
        );
        assert.equal(
          r.warnings.some((w) => w.code === 'deposit_low'),
          false,
          'default threshold 0.1 ETH',
        );
      }
      // A chain configured the way chains were before v0.7 (one v0.6 paymaster) is one row.
      const down = rows.filter((r) => r.chainId === 999);
      assert.deepEqual(
        down.map((r) => [r.entryPointVersion, r.warnings.map((w) => w.code), r.deposit]),
        [['0.6', ['unreachable'], null]],
      );
      assert.deepEqual(
        res.json().data.chains.map((c: { chainId: number }) => c.chainId),
        [fx.chain.chainId, 999],
      );
    } finally {
      await other.close();
    }
  });

  test('needs a signed-in account', async () => {
    assert.equal((await ctx.app.inject({ method: 'GET', url: '/api/admin/paymaster-status' })).statusCode, 401);
  });
});

describe('the dashboard itself', () => {
  test('every page path serves the HTML with a strict CSP under the configured base path', async () => {
    for (const url of [
      '/ops/ui',
      '/ops/ui/',
      '/ops/ui/account',
      `/ops/ui/dapps/${a.dappId}`,
      '/ops/ui/log?outcome=denied',
    ]) {
      const res = await ctx.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'; script-src 'self'/);
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(res.body, /data-base="\/ops\/ui"/);
      assert.match(res.body, /<script type="module" src="\/ops\/ui\/assets\/app\.js"><\/script>/);
    }
    assert.equal((await ctx.app.inject({ method: 'GET', url: '/dashboard' })).statusCode, 404);
  });

  test('the request log page words the policy decision, a mode-2 token op as a guarantee', async () => {
    // The page's own function (dashboard/assets/pageLog.js imports nothing that needs a browser at load).
    const page = (await import(new URL('../dashboard/assets/pageLog.js', import.meta.url).href)) as {
      policyText(p: Record<string, unknown> | null, names: Map<string, string>): string;
    };
    const names = new Map([['p1', 'Daily cap']]);
    const passed = { decision: 'passed', rule: null, policyId: null, policyIds: ['p1'], guarantee: false };
    const reserved = [{ unit: 'wei', amount: '3900000000000000' }];
    assert.equal(page.policyText(null, names), '—');
    assert.equal(page.policyText({ ...passed, reserved }, names), 'reserved 0.0039 ETH');
    assert.equal(page.policyText({ ...passed, reserved, guarantee: true }, names), 'guarantee: reserved 0.0039 ETH');
    assert.equal(
      page.policyText({ ...passed, policyIds: [], reserved: [], guarantee: true }, names),
      'guarantee: passed',
    );
    assert.equal(
      page.policyText({ ...passed, decision: 'denied', rule: 'cap', policyId: 'p1', reserved: [] }, names),
      'denied: cap (policy Daily cap)',
    );
  });

  test('USD for reading: a real cost is never shown as $0 or $0.00', async () => {
    // dashboard/assets/dom.js touches the document only inside its functions: formatUsd needs none.
    const dom = (await import(new URL('../dashboard/assets/dom.js', import.meta.url).href)) as {
      formatUsd(usd: string): string;
    };
    assert.equal(dom.formatUsd('0.000000'), '$0');
    assert.equal(dom.formatUsd('0.000042'), '$0.000042');
    assert.equal(dom.formatUsd('0.004999'), '$0.0050');
    assert.equal(dom.formatUsd('0.010000'), '$0.01');
    assert.equal(dom.formatUsd('1234.5'), '$1,234.50');
  });

  test('the policy editor: the form to rules and back, and which field a server message names', async () => {
    type Values = Record<string, unknown> & { caps: unknown[]; contracts: unknown[] };
    const rules = (await import(new URL('../dashboard/assets/policyRules.js', import.meta.url).href)) as {
      readRules(v: Values): Record<string, unknown>;
      formValuesOf(p: { name: string; active: boolean; rules: Record<string, unknown> }): Values;
      fieldForPath(message: string): { path: string[]; text: string } | undefined;
      rulesSummary(r: Record<string, unknown>): string[];
    };
    const stored = {
      chainIds: [31337, 8453],
      senders: { block: ['0x000000000000000000000000000000000000dEaD'] },
      contracts: [{ address: '0x00000000000000000000000000000000c0c0c0c0', selectors: ['0xd09de08a'] }],
      sponsorDeployment: false,
      maxFeePerGas: '50000000000',
      caps: [
        { scope: 'sender', unit: 'usd', limit: '5', resets: 'daily' },
        { scope: 'op', unit: 'wei', limit: '1000' },
      ],
      startsAt: 1_800_000_000,
    };
    // Through the form's values and back, unchanged: editing a policy without touching a field changes nothing.
    const values = rules.formValuesOf({ name: 'p', active: true, rules: stored });
    assert.deepEqual(rules.readRules(values), stored);
    // Empty fields are absent rules; a chain id that is not a number goes as typed, for the server to name.
    const empty = rules.formValuesOf({ name: 'p', active: true, rules: {} });
    assert.deepEqual(rules.readRules(empty), {});
    assert.deepEqual(rules.readRules({ ...empty, chains: '1, x' }), { chainIds: [1, 'x'] });
    assert.deepEqual(rules.fieldForPath('Invalid rules.caps.0.unit: a per-op cap is in wei or usd'), {
      path: ['caps', '0', 'unit'],
      text: 'a per-op cap is in wei or usd',
    });
    assert.deepEqual(rules.fieldForPath('Invalid rules.senders.block.2: expected a 20-byte 0x address'), {
      path: ['senders', 'block', '2'],
      text: 'address 3: expected a 20-byte 0x address',
    });
    assert.deepEqual(rules.fieldForPath('name must not be empty')?.path, ['name']);
    assert.deepEqual(rules.fieldForPath('A policy named "x" already exists for this dApp')?.path, ['name']);
    assert.equal(rules.fieldForPath('Policy limit reached: a dApp can have at most 20 policies'), undefined);
    assert.deepEqual(rules.rulesSummary({}), ['no rules: admits every request']);
    assert.ok(rules.rulesSummary(stored).includes('per sender ≤ 5 USD daily'));
    assert.ok(rules.rulesSummary(stored).includes('per op ≤ 1000 wei'));
  });

  test('the status page: the top-up amount reaches the mark, the stake step per state', async () => {
    const g = (await import(new URL('../dashboard/assets/paymasterGuidance.js', import.meta.url).href)) as {
      etherAmount(wei: bigint): string;
      depositAdvice(a: { row: unknown; warningWei: bigint; origin: string }): {
        level: string;
        commands: Array<{ command: string }>;
      };
      stakeAdvice(a: { row: unknown; origin: string; nowMs: number }): {
        state: string;
        text: string;
        commands: Array<{ command: string }>;
      };
    };
    assert.equal(g.etherAmount(parseEther('1.25')), '1.25');
    assert.equal(g.etherAmount(1n), '0.000000000000000001');
    const w = (eth: string) => ({ wei: parseEther(eth).toString(), eth });
    const row = {
      chainId: 10,
      embedded: false,
      paymaster: '0x00000000000000000000000000000000000000aa',
      deposit: w('0.2'),
      stake: w('1'),
      staked: true,
      unstakeDelaySec: 86_400,
      stakeState: 'staked',
      stakeWithdrawableAt: null,
      warnings: [],
      solvency: {
        deposit: w('0.2'),
        signing: true,
        floor: w('0.1'),
        lowWater: w('0.3'),
        required: w('0.05'),
      },
    };
    // Below required + low-water (0.35) with its 10 % (0.38): top up by 0.18, rounded up to 0.001 ETH.
    const low = g.depositAdvice({ row, warningWei: parseEther('0.1'), origin: 'http://x' });
    assert.equal(low.level, 'low');
    assert.deepEqual(
      low.commands.map((c) => c.command),
      ['patron paymaster deposit --rpc RPC_URL --paymaster 0x00000000000000000000000000000000000000aa --amount 0.18'],
    );
    const held = g.depositAdvice({
      row: { ...row, solvency: { ...row.solvency, signing: false, floor: w('5') } },
      warningWei: 0n,
      origin: 'http://x',
    });
    assert.equal(held.level, 'held');
    assert.match(held.commands[0]?.command ?? '', / --amount 4\.8$/);
    const ok = g.depositAdvice({
      row: { ...row, deposit: w('10'), solvency: { ...row.solvency, deposit: w('10') } },
      warningWei: 0n,
      origin: 'http://x',
    });
    assert.equal(ok.level, 'ok');
    assert.match(ok.commands[0]?.command ?? '', /^patron paymaster withdraw .* --amount 9\.62$/);
    const step = (stakeState: string, extra: object = {}) =>
      g.stakeAdvice({ row: { ...row, stakeState, ...extra }, origin: 'http://x', nowMs: 0 });
    assert.match(
      step('staked').commands[1]?.command ?? '',
      /^patron paymaster unlock-stake --rpc RPC_URL --paymaster 0x0+aa$/,
    );
    assert.match(step('unstaked').text, /Token mode .* staked/);
    assert.match(step('unstaked').commands[0]?.command ?? '', / --amount 1 --unstake-delay 86400$/);
    const unlocking = step('unlocking', { staked: false, stakeWithdrawableAt: new Date(7_200_000).toISOString() });
    assert.match(unlocking.text, /\(in 2 h\)/);
    assert.match(unlocking.commands[0]?.command ?? '', /^patron paymaster withdraw-stake /);
    assert.match(
      step('withdrawable', { staked: false }).commands[0]?.command ?? '',
      /^patron paymaster withdraw-stake /,
    );
    assert.equal(step('staked', { embedded: true }).commands[0]?.command.includes('--rpc http://x/chain/10'), true);
  });

  test('assets: JavaScript and CSS with ETags (304 when unchanged); unknown files 404; no path escapes', async () => {
    const js = await ctx.app.inject({ method: 'GET', url: '/ops/ui/assets/app.js' });
    assert.equal(js.statusCode, 200);
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    const again = await ctx.app.inject({
      method: 'GET',
      url: '/ops/ui/assets/app.js',
      headers: { 'if-none-match': String(js.headers.etag) },
    });
    assert.equal(again.statusCode, 304);
    const css = await ctx.app.inject({ method: 'GET', url: '/ops/ui/assets/style.css' });
    assert.match(String(css.headers['content-type']), /^text\/css/);
    for (const url of [
      '/ops/ui/assets/nope.js',
      '/ops/ui/assets/..%2F..%2Fpackage.json',
      '/ops/ui/assets/%2e%2e%2findex.html',
    ]) {
      assert.equal((await ctx.app.inject({ method: 'GET', url })).statusCode, 404, url);
    }
  });
});
