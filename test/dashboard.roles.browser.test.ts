import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, openDashboardSession } from './helpers/dashboardBrowser.js';
import { createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * The dashboard by role (docs/guides/dashboard.md, "Team and roles") in a real browser (Debian's Chromium through
 * playwright-core): a viewer signs in with the first password an owner was given and sees no control that would
 * change anything; an operator changes a policy but sees no owner control (rotate the key, the team's form); both
 * read the team and the audit log, which shows the operator's change before → after.
 */
const skip = browserSkip;

let ctx: TestContext;
let owner: Tenant;
let browser: Browser;
let base: string;
let policyId: string;
const people: Record<'viewer' | 'operator', { email: string; password: string }> = Object.create(null);

async function asOwner(method: 'POST' | 'GET', url: string, payload?: unknown) {
  const res = await ctx.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${owner.authToken}`, 'content-type': 'application/json' },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

before(async () => {
  if (skip !== false) return;
  ctx = await createTestContext();
  let page: Page;
  ({ tenant: owner, base, browser, page } = await openDashboardSession({ ctx, email: 'owner@example.com' }));
  await page.close();
  const policy = await asOwner('POST', `/api/admin/dapps/${owner.dappId}/policies`, { name: 'Daily', rules: {} });
  policyId = policy.policyId;
  for (const role of ['viewer', 'operator'] as const) {
    const m = await asOwner('POST', '/api/admin/members', { email: `${role}@example.com`, role });
    people[role] = { email: m.email, password: m.initialPassword };
  }
});
after(async () => {
  if (skip !== false) return;
  await browser?.close();
  await ctx?.close();
});

async function signedIn(who: 'viewer' | 'operator'): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${base}/dashboard/login`);
  await page.fill('#email', people[who].email);
  await page.fill('#password', people[who].password);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/dashboard\/dapps$/);
  assert.equal(await page.locator('#who-email').textContent(), `${people[who].email} (${who})`);
  return page;
}

const visible = (page: Page, text: string) => page.getByRole('button', { name: text, exact: true }).isVisible();

test('a viewer sees no control that would change anything; reads the team and the audit log', {
  skip,
  timeout: 90_000,
}, async () => {
  const page = await signedIn('viewer');
  assert.equal(await visible(page, 'Create dApp'), false, 'no dApp creation');
  await page.goto(`${base}/dashboard/dapps/${owner.dappId}`);
  await page.locator('#policies tr', { hasText: 'Daily' }).waitFor();
  for (const control of ['Rename', 'Rotate API key', 'Create policy', 'Save restrictions', 'Register webhook']) {
    assert.equal(await visible(page, control), false, `${control} is hidden from a viewer`);
  }
  const row = page.locator('#policies tr', { hasText: 'Daily' });
  assert.equal(await row.getByRole('button', { name: /Deactivate policy/ }).isVisible(), false);
  assert.equal(await row.getByRole('button', { name: /Delete policy/ }).isVisible(), false);
  // Hidden and disabled: Enter in a field cannot submit a form through a hidden button either.
  const locked = await page.locator('[data-needs][data-role-locked]').count();
  assert.ok(locked >= 5, `${locked} controls locked`);
  assert.ok((await page.locator('button[data-needs="operator"]:not([disabled])').count()) === 0);

  await page.goto(`${base}/dashboard/team`);
  await page.locator('#members tbody tr').nth(2).waitFor();
  assert.equal(await page.locator('#members tbody tr').count(), 3);
  assert.equal(await page.locator('#member-email').count(), 0, 'no form to add a member');
  assert.equal(
    await page
      .locator('#members')
      .getByRole('button', { name: /Remove/ })
      .count(),
    0,
  );
  await page.screenshot({ path: 'test-artifacts/dashboard/roles-viewer-team.png' });

  await page.goto(`${base}/dashboard/audit`);
  await page.locator('#audit-log tr[data-action="member.add"]').first().waitFor();
  assert.equal(await page.locator('#audit-log tr[data-action="member.add"]').count(), 2);
  assert.equal(await page.locator('#audit-log tr[data-action="policy.create"]').count(), 1);
  await page.context().close();
});

test('an operator changes a policy, sees no owner control, and finds the change in the audit log', {
  skip,
  timeout: 90_000,
}, async () => {
  const page = await signedIn('operator');
  assert.equal(await visible(page, 'Create dApp'), false, "creating a dApp is the owner's");
  await page.goto(`${base}/dashboard/dapps/${owner.dappId}`);
  const row = page.locator('#policies tr', { hasText: 'Daily' });
  await row.waitFor();
  assert.equal(await visible(page, 'Rotate API key'), false, "rotating the key is the owner's");
  assert.equal(await visible(page, 'Create policy'), true);
  assert.equal(await visible(page, 'Rename'), true);
  await row.getByRole('button', { name: 'Deactivate policy Daily' }).click();
  await page.locator('#policies tr', { hasText: 'inactive' }).waitFor();
  assert.equal((await ctx.deps.policies.get({ dappId: owner.dappId, policyId })).active, false);

  await page.goto(`${base}/dashboard/team`);
  await page.locator('#members tbody tr').first().waitFor();
  assert.equal(await page.locator('#member-email').count(), 0, "the team is the owner's");

  await page.goto(`${base}/dashboard/audit`);
  const change = page.locator('#audit-log tr[data-action="policy.update"]');
  await change.waitFor();
  assert.match((await change.locator('td').nth(1).textContent()) ?? '', /operator@example\.com/);
  assert.equal(await change.locator('td').nth(3).textContent(), policyId);
  assert.match((await change.locator('[data-field="active"]').textContent()) ?? '', /^active: true → false$/);
  await page.screenshot({ path: 'test-artifacts/dashboard/roles-operator-audit.png' });
  await page.context().close();
});
