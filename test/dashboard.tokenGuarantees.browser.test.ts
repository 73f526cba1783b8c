import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, browserSkip, openDashboardSession, signInToDashboard } from './helpers/dashboardBrowser.js';
import { createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * A dApp's token guarantees in the dashboard (docs/guides/token-mode.md, "The dApp's guarantee"): off by default;
 * turned on with a cap typed in ETH, shown in words with the cap's window and stored in wei (read back through the
 * admin API); enabling without a cap refused with the server's message; turned off, the cap kept. Debian's Chromium
 * through playwright-core, as test/dashboard.browser.test.ts; skipped without it.
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

/** The stored document, through the admin API with the tenant's auth token (not the page's session). */
async function stored(): Promise<unknown> {
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/api/admin/dapps/${tenant.dappId}/token-guarantees`,
    headers: { authorization: `Bearer ${tenant.authToken}` },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.tokenGuarantees;
}

const saveGuarantees = () =>
  Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/token-guarantees') && r.request().method() === 'PUT'),
    page.getByRole('button', { name: 'Save token guarantees' }).click(),
  ]).then(([res]) => res.status());

const state = () => page.locator('#guarantees-state').textContent();

test('token guarantees: off by default; on with a cap, shown and stored in wei; no cap refused with the server message; off keeps the cap', {
  skip,
}, async () => {
  await signInToDashboard({ page, base, tenant });
  await page.goto(`${base}/dashboard/dapps/${tenant.dappId}`);
  await page.locator('#guarantees-form').waitFor();
  assert.match((await state()) ?? '', /^Off \(the default\): a token op that batches its approval is refused/);
  assert.equal(await page.getByLabel('Guarantee token-paid ops that batch their approval').isChecked(), false);
  assert.deepEqual(await stored(), { enabled: false });

  // Ticked without a cap: the server refuses it and says why; nothing stored.
  await page.getByLabel('Guarantee token-paid ops that batch their approval').check();
  assert.equal(await saveGuarantees(), 400);
  await page
    .locator('#guarantees-out')
    .getByText('Not saved: enabling token guarantees requires a cap (no unbounded guarantee)')
    .waitFor();
  assert.deepEqual(await stored(), { enabled: false });

  // On, with 0.05 ETH a week, by label and keyboard: Enter in the cap field saves.
  await page.getByLabel('Cap (ETH the deposit may pay for them)').fill('0.05');
  await page.getByLabel('Cap window', { exact: true }).selectOption('weekly');
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/token-guarantees') && r.request().method() === 'PUT'),
    page.getByLabel('Cap (ETH the deposit may pay for them)').press('Enter'),
  ]);
  assert.equal(res.status(), 200);
  await page.locator('#guarantees-out').getByText('Token guarantees on.').waitFor();
  const cap = { limitWei: '50000000000000000', resets: 'weekly' };
  assert.deepEqual(await stored(), { enabled: true, cap });
  assert.match(
    (await state()) ?? '',
    /^On: the deposit may pay token ops whose charge fails, up to 0\.05 ETH a week\. This window: 0 ETH paid by the deposit, 0 ETH held by ops not settled yet, until /,
  );

  // Kept over a reload, as stored.
  await page.reload();
  await page.locator('#guarantees-form').waitFor();
  assert.equal(await page.getByLabel('Guarantee token-paid ops that batch their approval').isChecked(), true);
  assert.equal(await page.getByLabel('Cap (ETH the deposit may pay for them)').inputValue(), '0.05');
  assert.equal(await page.getByLabel('Cap window', { exact: true }).inputValue(), 'weekly');
  assert.match((await state()) ?? '', /^On: .* up to 0\.05 ETH a week\./);
  await page.screenshot({ path: path.join(ARTIFACTS, 'token-guarantees.png'), fullPage: true });

  // A cap that is no amount is stopped on the page, before any request.
  await page.getByLabel('Cap (ETH the deposit may pay for them)').fill('lots');
  await page.getByRole('button', { name: 'Save token guarantees' }).click();
  await page.locator('#guarantees-out').getByText('The cap is an amount of ETH above 0, e.g. 0.05').waitFor();
  assert.equal(await page.locator('#guarantees-cap').getAttribute('aria-invalid'), 'true');
  assert.deepEqual(await stored(), { enabled: true, cap });

  // Off: the cap is kept for later, and the state says so.
  await page.getByLabel('Cap (ETH the deposit may pay for them)').fill('0.05');
  await page.getByLabel('Guarantee token-paid ops that batch their approval').uncheck();
  assert.equal(await saveGuarantees(), 200);
  await page.locator('#guarantees-out').getByText('Token guarantees off.').waitFor();
  assert.deepEqual(await stored(), { enabled: false, cap });
  assert.match((await state()) ?? '', /^Off \(cap kept: up to 0\.05 ETH a week\)/);

  // At phone width the section fits: nothing wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await page.locator('#guarantees-form').waitFor();
  assert.ok(
    await page.evaluate<boolean>('document.documentElement.scrollWidth <= 390'),
    'the page scrolls sideways at 390 px',
  );
  await page.screenshot({ path: path.join(ARTIFACTS, 'token-guarantees-phone.png'), fullPage: true });
});
