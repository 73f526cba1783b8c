import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { ledgerItemView, ledgerStatsView } from '../src/api/ledgerWire.js';
import { parseRfc4180 } from './helpers/rfc4180.js';
import { BACKEND, createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * The itemized ledger's admin API on the configured back end (docs/guides/ledger.md): rows written through the
 * spend ledger's own reserve/settle/release (the signing path's and settlement's writes), read back with every
 * filter, paged by cursor while rows are inserted, isolated per dApp, summed by stats exactly as the list sums them,
 * and exported as CSV (quoting, injection, and a large export streamed in bounded memory).
 */
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1);
const POLICY_A = '11111111-1111-4111-8111-111111111111';
const POLICY_B = '22222222-2222-4222-8222-222222222222';
const SENDERS = ['0x1111111111111111111111111111111111111111', '0x2222222222222222222222222222222222222222'];

interface Seed {
  readonly dappId: string;
  readonly at: number;
  readonly sender: string;
  readonly user: string | undefined;
  readonly policyIds: readonly string[];
  readonly chainId: number;
  readonly worst: bigint;
  readonly end?:
    | { readonly wei: bigint; readonly usd: bigint | undefined; readonly success: boolean }
    | 'expired'
    | undefined;
}

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let seq = 0;
const seeded: (Seed & { id: string })[] = [];

async function put(s: Seed): Promise<string> {
  const hash = `0x${randomBytes(32).toString('hex')}`;
  const id = `${s.chainId}:${hash}:${seq++}`;
  const ledger = ctx.deps.store.spendLedger;
  const r = await ledger.reserve({
    id,
    dappId: s.dappId,
    chainId: s.chainId,
    userOpHash: hash,
    charges: [],
    expiresAt: s.at + 600_000,
    now: s.at,
    item: { sender: s.sender, user: s.user, policyIds: s.policyIds, worstCaseWei: s.worst },
  });
  assert.deepEqual(r, { ok: true });
  if (s.end === 'expired') assert.ok(await ledger.release({ id, now: s.at + 1 }));
  else if (s.end !== undefined) {
    const settled = await ledger.settle({
      id,
      actualWei: s.end.wei,
      actualUsdMicros: s.end.usd,
      now: s.at + 1,
      block: { number: 100n, hash: `0x${'ab'.repeat(32)}` },
      included: { txHash: `0x${'cd'.repeat(32)}`, success: s.end.success },
    });
    assert.ok(settled);
  }
  seeded.push({ ...s, id });
  return id;
}

const get = async (who: Tenant, path: string) => {
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/api/admin/dapps/${who.dappId}/${path}`,
    headers: { authorization: `Bearer ${who.authToken}` },
  });
  return res;
};
const pageOut = z.object({ data: z.object({ items: z.array(ledgerItemView), nextCursor: z.string().nullable() }) });
const statsOut = z.object({ data: ledgerStatsView });

async function listAll(who: Tenant, query: string, limit = 500) {
  const items: z.infer<typeof ledgerItemView>[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(who, `ledger?limit=${limit}&${query}${cursor === null ? '' : `&cursor=${cursor}`}`);
    assert.equal(res.statusCode, 200, res.body);
    const page = pageOut.parse(res.json()).data;
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return items;
}

before(async () => {
  ctx = await createTestContext();
  a = await createTenant(ctx.deps);
  b = await createTenant(ctx.deps);
  // 40 rows over 4 days for A, in every status, two policies, two senders, two users, two chains.
  for (let i = 0; i < 40; i++) {
    await put({
      dappId: a.dappId,
      at: T0 + Math.floor(i / 10) * DAY + i * 1000,
      sender: SENDERS[i % 2] ?? '',
      user: i % 3 === 0 ? undefined : `user-${i % 3}`,
      policyIds: i % 4 === 0 ? [] : i % 4 === 1 ? [POLICY_A] : i % 4 === 2 ? [POLICY_B] : [POLICY_A, POLICY_B],
      chainId: i % 5 === 0 ? 10 : 31337,
      // Above 2^64 for some: the sums must stay exact on SQLite too.
      worst: 10n ** 19n + BigInt(i),
      end:
        i % 7 === 0
          ? 'expired'
          : i % 7 === 1
            ? undefined
            : { wei: 9n * 10n ** 18n + BigInt(i), usd: i % 2 === 0 ? 1_234_567n : undefined, success: i % 7 !== 2 },
    });
  }
  // B's rows share A's senders and users: they must never show in A's ledger.
  for (let i = 0; i < 5; i++) {
    await put({
      dappId: b.dappId,
      at: T0 + i,
      sender: SENDERS[0] ?? '',
      user: 'user-1',
      policyIds: [],
      chainId: 31337,
      worst: 1n,
    });
  }
});
after(async () => {
  await ctx.close();
});

const mine = (who: Tenant) => seeded.filter((s) => s.dappId === who.dappId);

describe(`ledger admin API (${BACKEND})`, () => {
  test('lists every row of the dApp, newest first, with its status and amounts', async () => {
    const items = await listAll(a, '', 500);
    assert.equal(items.length, 40);
    const sorted = [...items].sort((x, y) => (x.createdAt < y.createdAt ? 1 : -1));
    assert.deepEqual(
      items.map((i) => i.id),
      sorted.map((i) => i.id),
    );
    const statuses = new Set(items.map((i) => i.status));
    assert.deepEqual([...statuses].sort(), ['expired', 'included', 'reserved', 'reverted']);
    const included = items.find((i) => i.status === 'included' && i.actualUsd !== null);
    assert.ok(included);
    assert.equal(included.actualUsd, '1.234567');
    assert.equal(included.txHash, `0x${'cd'.repeat(32)}`);
    assert.equal(included.blockNumber, 100);
    assert.equal(included.mode, 'sponsored');
  });

  test('each filter returns exactly the matching rows', async () => {
    const cases: [string, (s: Seed) => boolean][] = [
      [`sender=${SENDERS[1]?.toUpperCase().replace('0X', '0x')}`, (s) => s.sender === SENDERS[1]],
      ['user=user-2', (s) => s.user === 'user-2'],
      [`policyId=${POLICY_A}`, (s) => s.policyIds.includes(POLICY_A)],
      ['chainId=10', (s) => s.chainId === 10],
      ['status=expired', (s) => s.end === 'expired'],
      ['status=reserved', (s) => s.end === undefined],
      ['status=reverted', (s) => typeof s.end === 'object' && !s.end.success],
      [
        `from=${new Date(T0 + DAY).toISOString()}&to=${new Date(T0 + 3 * DAY).toISOString().slice(0, 10)}`,
        (s) => s.at >= T0 + DAY && s.at < T0 + 3 * DAY,
      ],
      [
        `user=user-1&policyId=${POLICY_B}&chainId=31337`,
        (s) => s.user === 'user-1' && s.policyIds.includes(POLICY_B) && s.chainId === 31337,
      ],
    ];
    for (const [query, match] of cases) {
      const got = (await listAll(a, query, 3)).map((i) => i.id).sort();
      const want = mine(a)
        .filter(match)
        .map((s) => s.id)
        .sort();
      assert.ok(want.length > 0, `${query}: the seeds cover it`);
      assert.deepEqual(got, want, query);
    }
  });

  test('a bad filter or cursor is a 400 naming it', async () => {
    for (const [query, message] of [
      ['status=lost', /status must be one of/],
      ['from=yesterday', /from must be an ISO 8601 date/],
      ['sender=0x12', /sender must be an address/],
      ['limit=501', /limit must be an integer from 1 to 500/],
      ['cursor=%%%', /cursor must be a nextCursor/],
    ] as const) {
      const res = await get(a, `ledger?${query}`);
      assert.equal(res.statusCode, 400, query);
      assert.match((res.json() as { message: string }).message, message);
    }
    const stats = await get(a, 'ledger/stats?groupBy=week');
    assert.equal(stats.statusCode, 400);
    assert.match(
      (stats.json() as { message: string }).message,
      /groupBy must be one or two of day, policy, user, chain/,
    );
  });

  test('the cursor is stable under inserts: no row twice, none lost', async () => {
    const before = new Set(mine(a).map((s) => s.id));
    const seen: string[] = [];
    let cursor: string | null = null;
    let round = 0;
    do {
      const res = await get(a, `ledger?limit=6${cursor === null ? '' : `&cursor=${cursor}`}`);
      const page = pageOut.parse(res.json()).data;
      seen.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor;
      // Between pages: a newer row, and one at the very time of a row already seen (same created_at).
      const first = page.items[0];
      await put({
        dappId: a.dappId,
        at: T0 + 10 * DAY + round,
        sender: SENDERS[0] ?? '',
        user: undefined,
        policyIds: [],
        chainId: 31337,
        worst: 1n,
      });
      if (first !== undefined) {
        await put({
          dappId: a.dappId,
          at: Date.parse(first.createdAt),
          sender: SENDERS[0] ?? '',
          user: undefined,
          policyIds: [],
          chainId: 31337,
          worst: 1n,
        });
      }
      round++;
    } while (cursor !== null);
    assert.equal(new Set(seen).size, seen.length, 'no row twice');
    for (const id of before) assert.ok(seen.includes(id), `row ${id} lost`);
  });

  test("another dApp's rows never appear, whatever the filter; another account's dApp is a 404", async () => {
    const bIds = new Set(mine(b).map((s) => s.id));
    for (const query of ['', `sender=${SENDERS[0]}`, 'user=user-1']) {
      const items = await listAll(a, query);
      assert.equal(items.filter((i) => bIds.has(i.id)).length, 0, query);
    }
    assert.equal((await listAll(b, '')).length, 5);
    for (const path of ['ledger', 'ledger/stats', 'ledger.csv']) {
      const res = await ctx.app.inject({
        method: 'GET',
        url: `/api/admin/dapps/${a.dappId}/${path}`,
        headers: { authorization: `Bearer ${b.authToken}` },
      });
      assert.equal(res.statusCode, 404, path);
    }
  });

  test('stats add up to what the list shows, per day, policy, user and chain', async () => {
    const items = await listAll(a, '');
    const sum = (xs: typeof items, f: (i: (typeof items)[number]) => string | null) =>
      xs.reduce((t, i) => t + BigInt(f(i)?.replace('.', '') ?? '0'), 0n);
    const usdMicros = (s: string | null) => (s === null ? 0n : BigInt(s.replace('.', '')));
    for (const groupBy of ['day', 'policy', 'user', 'chain', 'day,policy']) {
      const res = await get(a, `ledger/stats?groupBy=${groupBy}`);
      assert.equal(res.statusCode, 200, res.body);
      const stats = statsOut.parse(res.json()).data;
      assert.equal(stats.total.count, items.length);
      assert.equal(
        BigInt(stats.total.reservedWei),
        sum(items, (i) => i.reservedWei),
      );
      assert.equal(
        BigInt(stats.total.settledWei),
        sum(items, (i) => i.actualWei),
      );
      assert.equal(
        usdMicros(stats.total.settledUsd),
        sum(items, (i) => i.actualUsd),
      );
      for (const g of stats.groups) {
        const inGroup = items.filter(
          (i) =>
            (g.day === undefined || i.createdAt.startsWith(g.day)) &&
            (g.policyId === undefined ||
              (g.policyId === null ? i.policyIds?.length === 0 : (i.policyIds ?? []).includes(g.policyId))) &&
            (g.user === undefined || i.user === g.user) &&
            (g.chainId === undefined || i.chainId === g.chainId),
        );
        const what = `${groupBy} ${JSON.stringify(g)}`;
        assert.equal(g.count, inGroup.length, what);
        assert.equal(
          BigInt(g.reservedWei),
          sum(inGroup, (i) => i.reservedWei),
          what,
        );
        assert.equal(
          BigInt(g.settledWei),
          sum(inGroup, (i) => i.actualWei),
          what,
        );
        assert.equal(
          usdMicros(g.settledUsd),
          sum(inGroup, (i) => i.actualUsd),
          what,
        );
        assert.equal(
          g.settledWithoutPrice,
          inGroup.filter((i) => i.actualWei !== null && i.actualUsd === null).length,
          what,
        );
        assert.equal(
          g.settledUsd === null,
          g.settledWithoutPrice > 0 && inGroup.every((i) => i.actualUsd === null),
          `${what}: settledUsd is null exactly when settled ops had no price at all`,
        );
      }
      if (!groupBy.includes('policy'))
        assert.equal(
          stats.groups.reduce((t, g) => t + g.count, 0),
          items.length,
        );
    }
    // With a filter, the same holds.
    const filtered = await listAll(a, 'user=user-1&chainId=31337');
    const res = await get(a, 'ledger/stats?groupBy=day&user=user-1&chainId=31337');
    const stats = statsOut.parse(res.json()).data;
    assert.equal(stats.total.count, filtered.length);
    assert.equal(
      BigInt(stats.total.settledWei),
      sum(filtered, (i) => i.actualWei),
    );
  });

  test('settled spend with no price is null in USD, never $0; nothing settled is $0', async () => {
    // The second sender's settled ops are the odd ones: all settled with no price (as on a chain without a source).
    const unpriced = await listAll(a, `sender=${SENDERS[1]}`);
    const settled = unpriced.filter((i) => i.actualWei !== null);
    assert.ok(settled.length > 0 && settled.every((i) => i.actualUsd === null), 'the fixture: settled, no price');
    for (const groupBy of ['day', 'policy', 'chain']) {
      const res = await get(a, `ledger/stats?groupBy=${groupBy}&sender=${SENDERS[1]}`);
      const stats = statsOut.parse(res.json()).data;
      assert.equal(stats.total.settledUsd, null, groupBy);
      assert.equal(stats.total.settledWithoutPrice, settled.length, groupBy);
      for (const g of stats.groups.filter((x) => x.settledWithoutPrice > 0)) assert.equal(g.settledUsd, null, groupBy);
    }
    // A filter that selects nothing settled: $0 at any price.
    const res = await get(a, `ledger/stats?sender=${SENDERS[1]}&status=expired`);
    const stats = statsOut.parse(res.json()).data;
    assert.equal(stats.total.settledWei, '0');
    assert.equal(stats.total.settledUsd, '0.000000');
  });

  test('the CSV has a header, every row, RFC 4180 quoting, and no cell a spreadsheet would run', async () => {
    const evil = ['=HYPERLINK("http://evil.example","x")', '+1', '-2', '@SUM(A1)', 'a,b', 'say "hi"', 'two\nlines'];
    for (const [i, user] of evil.entries()) {
      await put({
        dappId: a.dappId,
        at: T0 + 20 * DAY + i,
        sender: SENDERS[1] ?? '',
        user,
        policyIds: [],
        chainId: 31337,
        worst: 5n,
      });
    }
    const res = await get(a, `ledger.csv?from=${new Date(T0 + 20 * DAY).toISOString()}`);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/csv/);
    assert.match(String(res.headers['content-disposition']), /^attachment; filename="ledger-/);
    const [header, ...rows] = parseRfc4180(res.body);
    const names = header?.map((f) => f.value) ?? [];
    assert.equal(names[0], 'created_at');
    assert.ok(names.includes('tx_hash'));
    assert.ok(
      [header ?? [], ...rows].flat().every((f) => f.quoted),
      'every field quoted',
    );
    // Oldest first, each user as the formula rule writes it (csvRecord.ts): text with no formula a sheet would run.
    assert.deepEqual(
      rows.map((r) => r[names.indexOf('user')]?.value),
      ['\'=HYPERLINK("http://evil.example","x")', "'+1", "'-2", "'@SUM(A1)", 'a,b', 'say "hi"', 'two\nlines'],
    );
  });
});
