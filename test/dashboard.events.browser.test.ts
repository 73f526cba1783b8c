import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, browserSkip, hiddenText, openDashboardSession } from './helpers/dashboardBrowser.js';
import { TEST_PASSWORD } from './helpers/dashboardSession.js';
import { createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';
import { answer, type Receiver, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The dApp page's lifecycle events in a real Chromium (skipped without one, as test/dashboard.browser.test.ts):
 * set the endpoint (the secret shown once), reveal it on request, rotate it, and the delivery log with an event
 * that failed against a receiver answering 503, replayed from its row once the receiver is back; then the log's
 * state column, whole at 1280 × 800 and at 390 × 844 (a phone).
 */
const skip = browserSkip;

let ctx: TestContext;
let tenant: Tenant;
let receiver: Receiver;
let browser: Browser;
let page: Page;
let base: string;

before(async () => {
  if (skip !== false) return;
  ctx = await createTestContext({ eventDelivery: { intervalMs: 0, maxAttempts: 1 } });
  ({ tenant, base, browser, page } = await openDashboardSession({ ctx, email: 'events@example.com' }));
  receiver = await startReceiver(answer({ error: 'down' }, 503));
  page.on('dialog', (d) => void d.accept());
});
after(async () => {
  if (skip !== false) return;
  await browser?.close();
  await receiver?.close();
  await ctx?.close();
});

test('an owner sets the event endpoint, handles its secret and replays a failed event', {
  skip,
  timeout: 90_000,
}, async () => {
  await page.goto(`${base}/dashboard/login`);
  await page.fill('#email', tenant.email);
  await page.fill('#password', TEST_PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/dashboard\/dapps$/);
  await page.goto(`${base}/dashboard/dapps/${tenant.dappId}`);
  await page.getByText('No event yet.').waitFor();

  // Set: the secret is shown once, and is the one events are signed with.
  // By its label, as a screen reader finds it: the label names the input (for=, not a literal htmlFor attribute).
  await page.getByLabel('Event endpoint URL').fill(receiver.url('/events'));
  await page.click('#event-endpoint-form button[type=submit]');
  const shown = page.locator('section.secret-once input');
  await shown.waitFor();
  const secret = await shown.inputValue();
  assert.equal(secret, (await ctx.deps.lifecycleEvents.endpoints.get(tenant.dappId))?.signingSecret);
  await page.getByRole('button', { name: 'Done, I stored it' }).click();
  assert.equal(await page.locator('section.secret-once').count(), 0);

  // Reveal on request; rotate makes a new one.
  await page.click('#event-reveal');
  assert.equal(await page.locator('section.secret-once input').inputValue(), secret);
  await page.getByRole('button', { name: 'Done, I stored it' }).click();
  await page.click('#event-rotate');
  await page.getByText('A new signing secret is in use').waitFor();
  const rotated = await page.locator('section.secret-once input').inputValue();
  assert.notEqual(rotated, secret);
  assert.equal(rotated, (await ctx.deps.lifecycleEvents.endpoints.get(tenant.dappId))?.signingSecret);
  await page.getByRole('button', { name: 'Done, I stored it' }).click();

  // An event the receiver refused (503, one attempt allowed): failed, with its error, in the log.
  await ctx.deps.store.lifecycleEvents.append([
    {
      id: 'evt_browser_1',
      dappId: tenant.dappId,
      type: 'sponsorship.signed',
      opKey: 'op-browser',
      payload: JSON.stringify({ type: 'sponsorship.signed', data: {} }),
      createdAt: Date.now(),
    },
  ]);
  assert.equal(await ctx.deps.lifecycleEvents.deliverer.runOnce(), 0);
  await page.reload();
  const row = page.locator('#event-log tr[data-event="evt_browser_1"]');
  await row.waitFor();
  assert.match((await row.textContent()) ?? '', /sponsorship\.signed.*failed.*1.*HTTP 503/);

  // The receiver is back: Replay from the row, then the deliverer sends it.
  receiver.handler = answer({ ok: true });
  await row.getByRole('button', { name: 'Replay evt_browser_1' }).click();
  await page.getByText('is sent again').waitFor();
  // The log is fetched again after the message shows: wait for the row as it comes back, not the one before.
  await page.locator('#event-log tr[data-event="evt_browser_1"]', { hasText: 'pending' }).waitFor();
  assert.equal(await ctx.deps.lifecycleEvents.deliverer.runOnce(), 1);
  await page.reload();
  assert.match((await page.locator('#event-log tr[data-event="evt_browser_1"]').textContent()) ?? '', /delivered/);
});

test("the delivery log's state is whole at 1280 × 800 and at 390 × 844", { skip, timeout: 60_000 }, async (t) => {
  for (const [width, height] of [
    [1280, 800],
    [390, 844],
  ] as const) {
    await t.test(`${width} px`, async () => {
      await page.setViewportSize({ width, height });
      await page.goto(`${base}/dashboard/dapps/${tenant.dappId}`);
      const row = page.locator('#event-log tr[data-event="evt_browser_1"]');
      await row.waitFor();
      // The log itself: the whole dApp page is several screens long at 390 px.
      await page.locator('#event-log').screenshot({ path: path.join(ARTIFACTS, `events-${width}x${height}.png`) });
      // The state cell by its class (state-delivered), as the page has always marked it.
      const state = row.locator('td[class*="state-"]');
      assert.equal((await state.textContent())?.trim(), 'delivered');
      assert.deepEqual(await hiddenText(state), [], 'the state all shown');
    });
  }
});
