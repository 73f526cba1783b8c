import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, browserSkip, openDashboardSession, signInToDashboard } from './helpers/dashboardBrowser.js';
import { createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';
import { randomSender, signThrough, userCapInstance } from './helpers/userCapGate.js';

/**
 * Caps per end user in the dashboard (issue 23): the policy form's scope select offers `user`, the list sums it up,
 * and the usage panel reads one user's caps (a sponsorship token's `sub`) after two of their wallets were signed
 * for. Debian's Chromium through playwright-core, as test/dashboard.browser.test.ts; skipped without it.
 */
const skip = browserSkip;

let ctx: TestContext;
let tenant: Tenant;
let browser: Browser;
let page: Page;
let base: string;

before(async () => {
  if (skip !== false) return;
  ctx = await createTestContext();
  ({ tenant, base, browser, page } = await openDashboardSession({ ctx }));
});
after(async () => {
  if (skip !== false) return;
  await browser?.close();
  await ctx?.close();
});

test('a per-user cap: created in the form, summed up in the list, its usage read for one user', { skip }, async () => {
  await signInToDashboard({ page, base, tenant });
  await page.goto(`${base}/dashboard/dapps/${tenant.dappId}`);
  await page.locator('#policy-form').waitFor();

  const cap = page.locator('#policy-caps .cap-row').first();
  await page.fill('#policy-name', 'Per person');
  await cap.getByLabel('Counts for').selectOption('user');
  await cap.getByLabel('Unit').selectOption('ops');
  await cap.getByLabel('Resets').selectOption('daily');
  await cap.getByLabel('Limit').fill('3');
  await page.click('text=Create policy');
  const row = page.locator('#policies tr', { hasText: 'Per person' });
  await row.waitFor();
  assert.equal(await row.locator('td.rules').textContent(), 'per user ≤ 3 ops daily');
  const [created] = await ctx.deps.policies.list(tenant.dappId);
  assert.deepEqual(created?.rules, { caps: [{ scope: 'user', unit: 'ops', resets: 'daily', limit: '3' }] });

  // One user, two wallets, through the policy gate over this app's store.
  const { gate } = userCapInstance(ctx.deps.store);
  const user = 'user|42@example.com';
  for (const sender of [randomSender(), randomSender()]) {
    assert.equal(await signThrough({ gate, dappId: tenant.dappId, sender, user, worstCaseWei: 1n }), 'ok');
  }

  await page.getByRole('button', { name: 'Show the usage of policy Per person' }).click();
  await page.getByText('per-user caps a user').waitFor();
  await page.fill('#usage-user', user);
  await page.locator('#policy-usage').getByRole('button', { name: 'Refresh' }).click();
  const usage = page.locator('#usage tr[data-scope="user"]');
  await usage.waitFor();
  assert.deepEqual(
    [
      await usage.locator('td').first().textContent(),
      await usage.locator('.used').textContent(),
      await usage.locator('.reserved').textContent(),
      await usage.locator('.limit').textContent(),
    ],
    ['user', '0 ops', '2 ops', '3 ops'],
  );
  assert.match((await page.locator('#policy-usage h3').textContent()) ?? '', /for user user\|42@example\.com/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'policy-user-usage.png'), fullPage: true });
});
