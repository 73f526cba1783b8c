import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { hexToBytes } from 'viem';
import { browserSkip, openDashboardSession } from './helpers/dashboardBrowser.js';
import { TEST_PASSWORD } from './helpers/dashboardSession.js';
import { fixtureChainRuntime, KEYS, type PatronFixture, startPatronFixture } from './helpers/patronPaymasterV06.js';
import { createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * The policy editor's gating rules (dashboard/assets/policyGatingRows.js) in a real browser (Debian's Chromium
 * through playwright-core, as test/dashboard.browser.test.ts): an owner creates a policy requiring an ERC-1155
 * token, is told beside the field what the server refuses, then edits the policy without losing the rule.
 */
const skip = browserSkip;

let fx: PatronFixture;
let ctx: TestContext;
let tenant: Tenant;
let browser: Browser;
let page: Page;
let base: string;

before(async () => {
  if (skip !== false) return;
  fx = await startPatronFixture();
  ctx = await createTestContext({ chains: [fixtureChainRuntime(fx)], signerKey: hexToBytes(KEYS.signer) });
  ({ tenant, base, browser, page } = await openDashboardSession({ ctx, email: 'gating@example.com' }));
});
after(async () => {
  if (skip !== false) return;
  await browser?.close();
  await ctx?.close();
  await fx?.close();
});

const NFT = '0x1111111111111111111111111111111111111111';

test('an owner creates a policy with a gating rule in the form', { skip, timeout: 60_000 }, async () => {
  await page.goto(`${base}/dashboard/login`);
  await page.fill('#email', tenant.email);
  await page.fill('#password', TEST_PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/dashboard\/dapps$/);
  const [dapp] = await ctx.deps.accounts.listDapps(tenant.accountId);
  assert.ok(dapp);
  await page.goto(`${base}/dashboard/dapps/${dapp.id}`);
  await page.locator('#policy-form').waitFor();

  await page.fill('#policy-name', 'Holders');
  await page
    .locator('#policy-caps .cap-row')
    .first()
    .getByRole('button', { name: /Remove cap/ })
    .click();
  assert.equal(await page.locator('#policy-nft-contract').isVisible(), false, 'the NFT fields wait for the checkbox');
  await page.check('#policy-nft-on');
  await page.selectOption('#policy-nft-standard', 'erc1155');
  await page.fill('#policy-nft-contract', NFT);
  await page.fill('#policy-nft-min-count', '2');
  await page.click('text=Create policy');
  // The server refuses an ERC-1155 rule without its token id: the message lands beside that field.
  const error = page.locator('#policy-nft-token-id-error');
  await error.waitFor();
  assert.equal(await error.textContent(), 'an erc1155 rule names the tokenId it counts');
  assert.deepEqual(await ctx.deps.policies.list(dapp.id), [], 'nothing was created');

  await page.fill('#policy-nft-token-id', '7');
  await page.check('#policy-balance-on');
  await page.fill('#policy-balance-token', 'native');
  await page.fill('#policy-balance-min', '1000');
  await page.selectOption('#policy-balance-subject', 'user');
  await page.click('text=Create policy');
  await page.locator('#policies tr', { hasText: 'Holders' }).waitFor();
  assert.equal(
    await page.locator('#policies tr', { hasText: 'Holders' }).locator('td.rules').textContent(),
    'sender holds ≥ 2 ERC-1155' + 'user balance ≥ 1000 wei',
  );
  const [created] = await ctx.deps.policies.list(dapp.id);
  assert.deepEqual(created?.rules, {
    nft: { standard: 'erc1155', contract: NFT, tokenId: '7', minCount: '2' },
    minBalance: { token: 'native', min: '1000', subject: 'user' },
  });

  // Editing loads the gating rules into the form, and saving keeps them.
  await page.getByRole('button', { name: 'Edit policy Holders' }).click();
  assert.equal(await page.isChecked('#policy-nft-on'), true);
  assert.equal(await page.inputValue('#policy-nft-token-id'), '7');
  assert.equal(await page.inputValue('#policy-balance-subject'), 'user');
  await page.fill('#policy-nft-min-count', '3');
  await page.click('text=Save policy');
  await page.getByText('Saved policy Holders').waitFor();
  const [edited] = await ctx.deps.policies.list(dapp.id);
  assert.deepEqual(edited?.rules, {
    nft: { standard: 'erc1155', contract: NFT, tokenId: '7', minCount: '3' },
    minBalance: { token: 'native', min: '1000', subject: 'user' },
  });
});
