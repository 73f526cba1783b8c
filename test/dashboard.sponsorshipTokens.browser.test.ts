import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, browserSkip, openDashboardSession, signInToDashboard } from './helpers/dashboardBrowser.js';
import { createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * A dApp's sponsorship tokens in the dashboard (docs/guides/sponsorship-tokens.md): a JWK added and tokens required,
 * saved and kept over a reload, stored as entered (read back through the admin API); the server's refusals (a bad
 * PEM, no key left while required) shown next to the form. Debian's Chromium through playwright-core, as
 * test/dashboard.browser.test.ts; skipped without it.
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
    url: `/api/admin/dapps/${tenant.dappId}/sponsorship-tokens`,
    headers: { authorization: `Bearer ${tenant.authToken}` },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.sponsorshipTokens;
}

const saveTokens = () =>
  Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/sponsorship-tokens') && r.request().method() === 'PUT'),
    page.getByRole('button', { name: 'Save sponsorship tokens' }).click(),
  ]).then(([res]) => res.status());

test('sponsorship tokens: a JWK added and required is kept; a bad PEM and an empty required list are refused with the server message', {
  skip,
}, async () => {
  await signInToDashboard({ page, base, tenant });
  await page.goto(`${base}/dashboard/dapps/${tenant.dappId}`);
  await page.locator('#token-form').waitFor();
  assert.deepEqual(await stored(), { required: false, keys: [] });

  // A JWK, by label and keyboard: the id, the kind, the JSON; Enter adds it.
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  await page.getByLabel('Id (yours, unique').fill('backend');
  await page.getByLabel('Kind').selectOption('jwk');
  await page.getByLabel('Public JWK (JSON)').fill(JSON.stringify(jwk));
  await page.getByLabel('Id (yours, unique').press('Enter');
  const row = page.locator('#token-keys li[data-key="backend"]');
  await row.waitFor();
  assert.match((await row.textContent()) ?? '', /backend · JWK · EC P-256 …/);
  await page.getByLabel('Require a sponsorship token on every request').check();
  assert.equal(await saveTokens(), 200);
  await page.getByText('Sponsorship tokens saved.').waitFor();

  await page.reload();
  await page.locator('#token-form').waitFor();
  assert.equal(await page.locator('#tokens-required').isChecked(), true);
  await page.locator('#token-keys li[data-key="backend"]').waitFor();
  assert.deepEqual(await stored(), { required: true, keys: [{ kind: 'jwk', id: 'backend', jwk }] });
  await page.screenshot({ path: path.join(ARTIFACTS, 'sponsorship-tokens.png'), fullPage: true });

  // A PEM that is no public key: the server's message under Save and on the key's row; nothing stored.
  await page.getByLabel('Id (yours, unique').fill('bad');
  await page.getByLabel('Kind').selectOption('pem');
  await page.getByLabel('Public key (PEM').fill('-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----');
  await page.getByLabel('Algorithm').selectOption('ES256');
  await page.getByRole('button', { name: 'Add key' }).click();
  assert.equal(await saveTokens(), 400);
  const pemMessage = 'keys: bad is not a PEM (SPKI) public key for ES256';
  await page.locator('#tokens-out').getByText(`Not saved: ${pemMessage}`).waitFor();
  assert.equal(await page.locator('#token-keys li[data-key="bad"] .field-error').textContent(), pemMessage);
  assert.equal(await page.locator('#token-keys li[data-key="bad"]').getAttribute('aria-invalid'), 'true');
  await page.getByRole('button', { name: 'Remove key bad' }).click();
  assert.equal(await page.locator('#token-keys li[data-key="bad"]').count(), 0);

  // The only key removed while tokens are required: refused, and the stored document is unchanged.
  await page.getByRole('button', { name: 'Remove key backend' }).click();
  assert.equal(await saveTokens(), 400);
  await page.locator('#tokens-out').getByText('must hold a key when tokens are required').waitFor();
  assert.deepEqual(await stored(), { required: true, keys: [{ kind: 'jwk', id: 'backend', jwk }] });

  // At phone width the section fits: nothing wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await page.locator('#token-keys li[data-key="backend"]').waitFor();
  assert.ok(
    await page.evaluate<boolean>('document.documentElement.scrollWidth <= 390'),
    'the page scrolls sideways at 390 px',
  );
  await page.screenshot({ path: path.join(ARTIFACTS, 'sponsorship-tokens-phone.png'), fullPage: true });
});
