import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { setTenantPassword, TEST_PASSWORD } from './dashboardSession.js';
import { createTenant, type Tenant, type TestContext } from './testContext.js';

/**
 * What every dashboard browser test shares: Debian's Chromium through playwright-core (PATRON_CHROMIUM to use
 * another), skipped with a reason when it is missing, screenshots under test-artifacts/dashboard/, and a page at the
 * desktop size the tests check first (1280 × 860).
 */
export const CHROMIUM = process.env.PATRON_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = path.resolve(import.meta.dirname, '..', '..', 'test-artifacts', 'dashboard');
export const browserSkip: false | string = fs.existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is missing: install Debian's chromium (.ci/run does) to run the browser tests`;

/** Chromium launched headless, and one page of a 1280 × 860 context with a 15 s default timeout. */
export async function openDashboardBrowser(): Promise<{ browser: Browser; page: Page }> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Flags for a closed network and a container: no sandbox (root), no GPU, no background fetches.
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
  page.setDefaultTimeout(15_000);
  return { browser, page };
}

/**
 * What a dashboard browser test starts from: a tenant of `ctx` that can sign in with the test password, the app
 * listening on 127.0.0.1, and Chromium's page (openDashboardBrowser).
 */
export async function openDashboardSession(args: { ctx: TestContext; email?: string }): Promise<{
  tenant: Tenant;
  base: string;
  browser: Browser;
  page: Page;
}> {
  const { ctx } = args;
  const tenant = await createTenant(ctx.deps, ...(args.email === undefined ? [] : [args.email]));
  await setTenantPassword(ctx.deps, tenant);
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  return { tenant, base, ...(await openDashboardBrowser()) };
}

/** Signs the tenant in the way a person does (the dashboard sends an anonymous visitor to sign-in), then its dApps. */
export async function signInToDashboard(args: { page: Page; base: string; tenant: Tenant }): Promise<void> {
  const { page } = args;
  await page.goto(`${args.base}/dashboard`);
  await page.waitForURL(/\/dashboard\/login$/);
  await page.fill('#email', args.tenant.email);
  await page.fill('#password', TEST_PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/dashboard\/dapps$/);
}

/**
 * Collects what Chromium reports refusing under the page's Content Security Policy ("Refused to apply inline style
 * because it violates…"): it says so on the console, which playwright passes on as console messages.
 */
export function cspRefusals(page: Page): string[] {
  const refused: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/.test(m.text())) refused.push(m.text());
  });
  return refused;
}
