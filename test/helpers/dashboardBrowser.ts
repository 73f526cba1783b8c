import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
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
 * The little of the DOM that hiddenText reads in the page, typed here: the project's TypeScript has no DOM library
 * (src must not reach for browser globals), and playwright's own element types resolve to nothing without it.
 */
interface Rect {
  readonly left: number;
  readonly right: number;
  readonly width: number;
  readonly height: number;
}
interface PageNode {
  readonly textContent: string | null;
  readonly parentElement: PageElement | null;
}
interface PageElement extends PageNode {
  readonly tagName: string;
  readonly clientLeft: number;
  readonly clientWidth: number;
  readonly scrollWidth: number;
  readonly ownerDocument: PageDocument;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): Rect;
  querySelectorAll(selector: string): Iterable<PageElement>;
}
interface PageDocument {
  readonly documentElement: { readonly clientWidth: number };
  readonly defaultView: { getComputedStyle(e: PageElement): { overflowX: string; display: string } } | null;
  createTreeWalker(root: PageElement, whatToShow: number): { nextNode(): PageNode | null };
  createRange(): { selectNodeContents(n: PageNode): void; getBoundingClientRect(): Rect };
}

/**
 * The ways `locator`'s text is not all on screen; empty when it is. Each text node's extent must lie inside the window
 * and inside every ancestor that clips it (a cell that cuts with an ellipsis, a table wrapper that scrolls sideways),
 * and no element in it may hold more than its box shows (scrollWidth). A text with no box (a column hidden by the
 * style sheet) counts as hidden. Runs in the page through the DevTools protocol, which the dashboard's CSP allows.
 */
export function hiddenText(locator: Locator): Promise<string[]> {
  // No named function inside: tsx keeps names with a helper (__name) that the page does not have.
  return locator.evaluate((el: PageElement) => {
    const doc = el.ownerDocument;
    const view = doc.defaultView;
    if (view === null) throw new Error('the element is in no window');
    const problems: string[] = [];
    const SHOW_TEXT = 4; // NodeFilter.SHOW_TEXT
    const walker = doc.createTreeWalker(el, SHOW_TEXT);
    let shown = 0;
    for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
      const text = (n.textContent ?? '').trim();
      if (text === '') continue;
      const range = doc.createRange();
      range.selectNodeContents(n);
      const r = range.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) {
        problems.push(`"${text}" has no box`);
        continue;
      }
      shown++;
      const clips = [{ name: 'the window', left: 0, right: doc.documentElement.clientWidth }];
      for (let a = n.parentElement; a !== null; a = a.parentElement) {
        if (view.getComputedStyle(a).overflowX === 'visible') continue;
        const left = a.getBoundingClientRect().left + a.clientLeft;
        clips.push({ name: `${a.tagName}.${a.getAttribute('class')}`, left, right: left + a.clientWidth });
      }
      for (const c of clips) {
        if (r.left < c.left - 0.5 || r.right > c.right + 0.5)
          problems.push(
            `"${text}" (${r.left.toFixed(0)}-${r.right.toFixed(0)} px) is cut by ${c.name} (${c.left.toFixed(0)}-${c.right.toFixed(0)} px)`,
          );
      }
    }
    if (shown === 0) problems.push(`no text of ${el.tagName}.${el.getAttribute('class')} is shown`);
    for (const e of [el, ...el.querySelectorAll('*')]) {
      const display = view.getComputedStyle(e).display;
      if (display === 'inline' || display === 'contents' || display === 'none') continue;
      if (e.scrollWidth > e.clientWidth)
        problems.push(`${e.tagName}.${e.getAttribute('class')} holds ${e.scrollWidth} px in ${e.clientWidth}`);
    }
    return problems;
  });
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
