import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { ARTIFACTS, browserSkip, cspRefusals, hiddenText, openDashboardSession } from './helpers/dashboardBrowser.js';
import { TEST_PASSWORD } from './helpers/dashboardSession.js';
import { createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * The ledger page (dashboard/assets/pageLedger.js) in a real browser against the real service on 127.0.0.1, at
 * 1280 and 390 px: the spend chart per day and policy with its legend coloured under the page's CSP, the list and
 * its "More", the time column whole at both widths, a sender's and a user's history by clicking them, the CSV link
 * carrying the filters, and a dApp on a chain with no price showing no USD figure. Rows are written through the spend
 * ledger's own writes.
 */
const skip = browserSkip;
const ALICE = '0xa11ce00000000000000000000000000000000001';
const BOB = '0xb0b0000000000000000000000000000000000002';
const DAY = 86_400_000;

let ctx: TestContext;
let tenant: Tenant;
let browser: Browser;
let page: Page;
let base: string;
/** What Chromium refused under the page's CSP, from the first page on. */
let refused: string[];
/** A second dApp of the tenant whose ops settled with no USD price (the test chain has no price source). */
let unpricedDappId: string;
const UNPRICED_OPS = 3;

before(async () => {
  if (skip !== false) return;
  ctx = await createTestContext();
  ({ tenant, base, browser, page } = await openDashboardSession({ ctx, email: 'ledger-owner@example.com' }));
  refused = cspRefusals(page);
  const policy = await ctx.deps.policies.create({ dappId: tenant.dappId, name: 'Daily gas', rules: {} });
  const ledger = ctx.deps.store.spendLedger;
  const now = Date.now();
  // 70 ops over the last 5 days (more than a page of 50): Alice's with the policy, Bob's without, all settled.
  for (let i = 0; i < 70; i++) {
    const id = `31337:0x${i.toString(16).padStart(64, '0')}`;
    const alice = i % 2 === 0;
    await ledger.reserve({
      id,
      dappId: tenant.dappId,
      chainId: 31337,
      userOpHash: id.slice(6),
      charges: [],
      expiresAt: now + 600_000,
      now: now - (i % 5) * DAY - i * 1000,
      item: {
        sender: alice ? ALICE : BOB,
        user: alice ? 'alice@example.com' : 'bob@example.com',
        policyIds: alice ? [policy.id] : [],
        worstCaseWei: 10n ** 15n,
      },
    });
    await ledger.settle({
      id,
      actualWei: 4n * 10n ** 14n + BigInt(i),
      actualUsdMicros: 1_000_000n,
      now,
      included: { txHash: `0x${'ee'.repeat(32)}`, success: true },
    });
  }
  // Settlement prices an op with the chain's native price (settleSlice.ts), and chain 31337 has none here: the
  // ledger keeps no USD value, as these rows.
  assert.equal(ctx.deps.tokenCatalog.snapshot(31337)?.nativeUsdE18, undefined, 'no price source for chain 31337');
  const unpriced = await ctx.deps.accounts.createDapp({
    accountId: tenant.accountId,
    name: 'Unpriced dApp',
    chainIds: [31337],
  });
  unpricedDappId = unpriced.id;
  for (let i = 0; i <= UNPRICED_OPS; i++) {
    const id = `31337:0x${(1000 + i).toString(16).padStart(64, '0')}`;
    await ledger.reserve({
      id,
      dappId: unpricedDappId,
      chainId: 31337,
      userOpHash: id.slice(6),
      charges: [],
      expiresAt: now + 600_000,
      now: now - i * 1000,
      item: { sender: ALICE, user: 'carol@example.com', policyIds: [], worstCaseWei: 10n ** 15n },
    });
    // The last one stays reserved: not settled, so no USD to show either way.
    if (i === UNPRICED_OPS) continue;
    await ledger.settle({
      id,
      actualWei: 3n * 10n ** 14n,
      actualUsdMicros: undefined,
      now,
      block: { number: 42n, hash: `0x${'ab'.repeat(32)}` },
      included: { txHash: `0x${'dd'.repeat(32)}`, success: true },
    });
  }
});
after(async () => {
  if (skip !== false) return;
  await browser?.close();
  await ctx?.close();
});

const rows = () => page.locator('#ledger tbody tr');

/** Polls the list's row count from here (locators, not a page-side predicate, which the dashboard's CSP refuses). */
async function untilRows(n: number): Promise<void> {
  const end = Date.now() + 10_000;
  while ((await rows().count()) !== n) {
    if (Date.now() > end) assert.fail(`the ledger list shows ${await rows().count()} rows, expected ${n}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
/** What the tests read of an element's computed style in the page (the project's TypeScript has no DOM library). */
interface ComputedStyles {
  readonly defaultView: { getComputedStyle(e: unknown): { backgroundColor: string; fill: string } };
}

/** The chart's bar colours as the browser paints them (the style sheet's, whatever sets them). */
async function barFills(): Promise<Set<string>> {
  const fills = await page
    .locator('svg.chart rect.ledger-bar')
    .evaluateAll((els: { ownerDocument: ComputedStyles }[]) =>
      els.map((e) => e.ownerDocument.defaultView.getComputedStyle(e).fill),
    );
  return new Set(fills);
}

const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

async function fits(): Promise<void> {
  const m = await page.evaluate<{ page: number; viewport: number }>(
    '({ page: document.documentElement.scrollWidth, viewport: window.innerWidth })',
  );
  assert.ok(m.page <= m.viewport, `the page (${m.page} px) is no wider than the window (${m.viewport})`);
}

test('the ledger page: chart, list, More, a sender and a user history, CSV', { skip, timeout: 90_000 }, async (t) => {
  await t.test('from the dApp page to its ledger', async () => {
    await page.goto(`${base}/dashboard/login`);
    await page.fill('#email', tenant.email);
    await page.fill('#password', TEST_PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/dashboard\/dapps$/);
    await page.goto(`${base}/dashboard/dapps/${tenant.dappId}`);
    await page.getByRole('link', { name: 'Ledger' }).click();
    await page.waitForURL(/\/ledger$/);
    assert.equal(await page.locator('main h1').textContent(), 'Ledger: Test dApp');
  });

  await t.test('the chart shows settled spend per day, one colour per policy', async () => {
    const chart = page.locator('svg.chart');
    await chart.waitFor();
    assert.equal(await chart.locator('g[data-day]').count(), 5, 'five days');
    assert.equal((await barFills()).size, 2, 'the policy and "no policy"');
    assert.match((await page.locator('ul.legend').textContent()) ?? '', /Daily gas[\s\S]*no policy/);
    assert.match((await page.locator('#ledger-total').textContent()) ?? '', /^70 sponsorships/);
  });

  await t.test("the legend's swatches have their series' colours, which the CSP lets through", async () => {
    const swatches = await page
      .locator('ul.legend .swatch')
      .evaluateAll((els: { ownerDocument: ComputedStyles }[]) =>
        els.map((e) => e.ownerDocument.defaultView.getComputedStyle(e).backgroundColor),
      );
    assert.equal(swatches.length, 2, 'one swatch per series');
    for (const colour of swatches) assert.notEqual(colour, 'rgba(0, 0, 0, 0)', `a coloured swatch: ${swatches}`);
    assert.deepEqual(new Set(swatches), await barFills(), "the swatches' colours are the bars'");
    assert.deepEqual(refused, [], 'nothing refused under the CSP');
  });

  await t.test('the list pages with More', async () => {
    assert.equal(await rows().count(), 50);
    await page.getByRole('button', { name: 'More' }).click();
    // Locators, not a string predicate: the dashboard's CSP (script-src 'self') refuses the eval it needs.
    await untilRows(70);
    assert.equal(await page.getByRole('button', { name: 'More' }).isHidden(), true, 'no more after the last page');
    await fits();
    await shot('ledger-1280');
  });

  await t.test("clicking a sender shows that sender's history, and the CSV link follows", async () => {
    await rows().locator('td.sender button', { hasText: '0xb0b0' }).first().click();
    await untilRows(35);
    assert.match((await page.locator('#ledger-history').textContent()) ?? '', new RegExp(`History of sender ${BOB}`));
    assert.match(page.url(), new RegExp(`sender=${BOB}`));
    const senders = new Set(
      await rows()
        .locator('td.sender button')
        .evaluateAll((bs) => bs.map((b) => b.getAttribute('title'))),
    );
    assert.equal(senders.size, 1);
    const href = await page.locator('#ledger-csv').getAttribute('href');
    assert.ok(href?.includes(`sender=${BOB}`), String(href));
    const csv = await page.evaluate<string, string>((u) => fetch(u).then((r) => r.text()), href ?? '');
    assert.equal(csv.split('\r\n').length, 37, 'the header, 35 rows, the last line end');
  });

  await t.test("a user's history, at 390 px", async () => {
    await page.goto(`${base}/dashboard/dapps/${tenant.dappId}/ledger`);
    await page.setViewportSize({ width: 390, height: 844 });
    await rows().first().waitFor();
    await rows().locator('td.user button', { hasText: 'alice@example.com' }).first().click();
    await untilRows(35);
    assert.match((await page.locator('#ledger-history').textContent()) ?? '', /History of user alice@example.com/);
    const users = new Set(await rows().locator('td.user').allTextContents());
    assert.deepEqual([...users], ['alice@example.com']);
    await fits();
    await shot('ledger-390');
  });
});

/** The ledger of `dappId`, signed in already, at a window of `width` × `height`, once its rows are shown. */
async function openLedger(dappId: string, width: number, height: number): Promise<void> {
  await page.setViewportSize({ width, height });
  await page.goto(`${base}/dashboard/dapps/${dappId}/ledger`);
  await rows().first().waitFor();
}

test('the time column is whole at 1280 × 800 and at 390 × 844', { skip, timeout: 60_000 }, async (t) => {
  for (const [width, height] of [
    [1280, 800],
    [390, 844],
  ] as const) {
    await t.test(`${width} px`, async () => {
      await openLedger(tenant.dappId, width, height);
      await untilRows(50);
      await shot(`ledger-${width}x${height}`);
      for (let i = 0; i < 3; i++) {
        const cell = rows().nth(i).locator('td.time');
        assert.deepEqual(await hiddenText(cell), [], `row ${i}'s time, ${await cell.textContent()}, all shown`);
      }
      if (width === 1280) {
        const head = page.locator('#ledger thead th').first();
        assert.equal(await head.textContent(), 'Time');
        assert.deepEqual(await hiddenText(head), [], 'its heading all shown');
      }
      await fits();
    });
  }
});

/** The titles (hover texts) in `where`. */
const titles = (where: Locator) =>
  where.locator('[title]').evaluateAll((els: { title: string }[]) => els.map((e) => e.title));

test('a dApp on a chain with no price shows no USD figure, never $0', { skip, timeout: 60_000 }, async () => {
  await openLedger(unpricedDappId, 1280, 800);
  await untilRows(UNPRICED_OPS + 1);
  await page.locator('#ledger-total').waitFor();
  await shot('ledger-no-price-1280x800');
  const main = (await page.locator('main').textContent()) ?? '';
  assert.doesNotMatch(main, /\$\s?0(?:\.0*)?(?![\d.]*[1-9])/, 'no "$0" anywhere on the page');
  // The USD column by its heading, whatever classes its cells carry.
  const column = (await page.locator('#ledger thead th').allTextContents()).indexOf('USD') + 1;
  assert.ok(column > 0, 'a USD column');
  const settled = rows().filter({ has: page.locator('td.status', { hasText: 'included' }) });
  assert.equal(await settled.count(), UNPRICED_OPS);
  for (let i = 0; i < UNPRICED_OPS; i++) {
    const cell = settled.nth(i).locator(`td:nth-child(${column})`);
    assert.equal((await cell.textContent())?.trim(), '—');
    assert.match((await titles(cell)).join(' '), /no USD price/i, 'a title says why');
  }
  const total = page.locator('#ledger-total');
  assert.match((await total.textContent()) ?? '', /^4 sponsorships, 0\.0009 ETH settled \(USD —\)/);
  assert.match((await titles(total)).join(' '), /no USD price/i, 'a title says why');
});
