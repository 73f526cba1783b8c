import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { MeeTank } from '../src/store/tenants/meeTankRepository.js';
import { browserSkip, openDashboardSession, signInToDashboard } from './helpers/dashboardBrowser.js';
import { insertTestTank } from './helpers/meeTanks.js';
import { tankTokenFixture } from './helpers/tankToken.js';
import { createTenant, createTestContext, type Tenant, type TestContext, testConfig } from './helpers/testContext.js';

/**
 * A dApp's gas tanks on its dashboard page (dashboard/assets/gasTanks.js): each tank's address, chain, balance read
 * on the dev chain (flagged below its alert), status and the dApp's sponsor URL; another dApp's tank not shown;
 * retiring one (an owner may) updates the row and the store. Debian's Chromium through playwright-core, as
 * test/dashboard.browser.test.ts; skipped without it.
 */
const skip = browserSkip;

let ctx: TestContext;
let tenant: Tenant;
let browser: Browser;
let page: Page;
let base: string;
let mine: MeeTank;
let theirs: MeeTank;

before(async () => {
  if (skip !== false) return;
  const config = testConfig();
  ctx = await createTestContext({ config: { paymaster: { ...config.paymaster, devChain: true } } });
  ({ tenant, base, browser, page } = await openDashboardSession({ ctx }));
  const other = await createTenant(ctx.deps);
  const fx = await tankTokenFixture(ctx.deps, 'dashboard');
  mine = await insertTestTank(ctx.deps.store, tenant.dappId, { token: fx.token, lowBalance: 50_000_000n });
  theirs = await insertTestTank(ctx.deps.store, other.dappId, { token: fx.token });
  await fx.mint(mine.address, 12_250_000n);
});
after(async () => {
  if (skip !== false) return;
  await browser?.close();
  await ctx?.close();
});

test("gas tanks: listed with balance, alert, status and sponsor URL; another dApp's tank absent; retire", {
  skip,
}, async () => {
  await signInToDashboard({ page, base, tenant });
  await page.goto(`${base}/dashboard/dapps/${tenant.dappId}`);
  await page.locator('#tanks-table').waitFor();
  const rows = page.locator('#tanks-table tbody tr');
  assert.equal(await rows.count(), 1);
  const row = page.locator(`tr[data-tank="${mine.id}"]`);
  const text = (await row.textContent()) ?? '';
  assert.match(text, /31337/);
  assert.match(text, /12\.25 \(below the alert at 50\)/);
  assert.match(text, /active/);
  assert.match(text, new RegExp(`${base}/mee/${tenant.dappId}/v1`));
  assert.equal(await page.locator(`tr[data-tank="${theirs.id}"]`).count(), 0);
  assert.equal(((await page.locator('#tanks-h').locator('..').textContent()) ?? '').includes(theirs.address), false);

  page.once('dialog', (d) => void d.accept());
  await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/retire') && r.request().method() === 'POST'),
    row.getByRole('button', { name: 'Retire' }).click(),
  ]);
  await page.locator('#tanks-out .notice.ok').waitFor();
  assert.match((await page.locator(`tr[data-tank="${mine.id}"]`).textContent()) ?? '', /retired/);
  assert.equal((await ctx.deps.store.meeTanks.get(mine.id))?.status, 'retired');
  assert.equal((await ctx.deps.store.meeTanks.get(theirs.id))?.status, 'active');
});
