// @ts-check
import { api } from './api.js';
import { busy, clear, copyButton, formatTime, h, notice, title } from './dom.js';
import { renderGasTanks } from './gasTanks.js';
import { renderKeyRestrictions } from './keyRestrictions.js';
import { chainPicker, pickedChains, servedChains } from './pageDapps.js';
import { renderEvents } from './pageEvents.js';
import { renderPolicies } from './pagePolicies.js';
import { renderWebhooks } from './pageWebhooks.js';
import { renderSponsorshipTokens } from './sponsorshipTokens.js';
import { renderTokenGuarantees } from './tokenGuarantees.js';

/**
 * @typedef {{dappId: string, name: string, chainIds: number[], apiKey: string, createdAt: string, updatedAt: string}} Dapp
 */

/** @param {string} key */
const masked = (key) => `${key.slice(0, 7)}${'•'.repeat(12)}`;

/**
 * One dApp: rename, chains, API key (shown on request, rotatable), the paymaster URLs with SDK snippets, who may
 * use the key, its sponsorship tokens and token guarantees, and its webhooks and sponsorship policies. @param {HTMLElement} main @param {import('./app.js').PageContext} ctx
 */
export async function renderDapp(main, ctx) {
  const dappId = ctx.params[0] ?? '';
  const path = `/api/admin/dapps/${encodeURIComponent(dappId)}`;
  /** @type {[Dapp, Array<{chainId: number, embedded?: boolean}>]} */
  const [initial, chains] = await Promise.all([api('GET', path), servedChains()]);
  let dapp = initial;
  let revealed = false;
  const out = h('div', { className: 'messages' });
  if (ctx.search.get('created') === '1')
    out.append(notice('ok', `Created "${dapp.name}". Its paymaster URL is below.`));
  const heading = title(dapp.name);

  // Rename.
  const name = /** @type {HTMLInputElement} */ (
    h('input', { id: 'rename', name: 'name', value: dapp.name, required: true, maxlength: '100' })
  );
  const save = h('button', { type: 'submit', 'data-needs': 'operator' }, 'Rename');
  const renameForm = h(
    'form',
    {
      className: 'row-form',
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        void busy(save, out, async () => {
          dapp = await api('PATCH', path, { name: name.value });
          heading.textContent = dapp.name;
          document.title = `${dapp.name} · Patron`;
          clear(out).append(notice('ok', 'Renamed.'));
        });
      },
    },
    h('label', { for: 'rename' }, 'Name'),
    name,
    save,
  );

  // Chains.
  const picker = chainPicker({ chains, selected: dapp.chainIds, idPrefix: 'chain' });
  const saveChains = h('button', { type: 'submit', 'data-needs': 'operator' }, 'Save chains');
  const chainsForm = h(
    'form',
    {
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        void busy(saveChains, out, async () => {
          const chainIds = pickedChains(picker);
          if (chainIds.length === 0) {
            clear(out).append(notice('error', 'A dApp serves at least one chain.'));
            return;
          }
          dapp = await api('PATCH', path, { chainIds });
          renderKey();
          clear(out).append(notice('ok', `Chains saved: ${dapp.chainIds.join(', ')}.`));
        });
      },
    },
    picker,
    saveChains,
  );

  // API key and paymaster URLs.
  const keyBox = h('div');
  const renderKey = () => {
    const origin = location.origin;
    const url = (/** @type {number} */ chainId, /** @type {string} */ key) => `${origin}/api/v1/${chainId}/${key}`;
    const show = h(
      'button',
      { type: 'button', className: 'secondary', 'aria-pressed': String(revealed) },
      revealed ? 'Hide' : 'Show',
    );
    show.addEventListener('click', () => {
      revealed = !revealed;
      renderKey();
    });
    const rotate = h('button', { type: 'button', className: 'danger', 'data-needs': 'owner' }, 'Rotate API key');
    rotate.addEventListener('click', () => {
      if (!confirm('Replace the API key? Every paymaster URL with the old key stops working at once.')) return;
      void busy(rotate, out, async () => {
        dapp = await api('POST', `${path}/rotate-key`);
        revealed = true;
        renderKey();
        clear(out).append(notice('ok', 'New API key: update your paymaster URLs.'));
      });
    });
    const first = dapp.chainIds[0] ?? 1;
    clear(keyBox).append(
      h(
        'div',
        { className: 'row' },
        h('span', { className: 'mono', id: 'api-key' }, revealed ? dapp.apiKey : masked(dapp.apiKey)),
        show,
        copyButton(() => dapp.apiKey, 'Copy key'),
        rotate,
      ),
      h('h3', null, 'Paymaster URL'),
      h(
        'p',
        { className: 'hint' },
        'Paste it as the paymasterUrl of your smart account SDK. It carries the API key: keep it in your app, not in public repositories.',
      ),
      h(
        'ul',
        { className: 'urls' },
        dapp.chainIds.map((id) =>
          h(
            'li',
            null,
            h(
              'span',
              { className: 'mono', 'data-chain': String(id) },
              url(id, revealed ? dapp.apiKey : masked(dapp.apiKey)),
            ),
            ' ',
            copyButton(() => url(id, dapp.apiKey), `Copy URL for chain ${id}`),
          ),
        ),
      ),
      h('h3', null, 'SDK snippet'),
      snippets(url(first, revealed ? dapp.apiKey : '<API key>'), first),
    );
  };
  renderKey();

  const hooks = h('div');
  const policies = h('div');
  const restrictions = h('div');
  const tokens = h('div');
  const guarantees = h('div');
  const events = h('div');
  const tanks = h('div');
  await Promise.all([
    renderEvents(events, { dappId, out }),
    renderWebhooks(hooks, { dappId, out }),
    renderPolicies(policies, { dappId, out }),
    renderKeyRestrictions(restrictions, { dappId, out }),
    renderSponsorshipTokens(tokens, { dappId }),
    renderTokenGuarantees(guarantees, { dappId }),
    renderGasTanks(tanks, { dappId }),
  ]);

  main.append(
    h('p', null, h('a', { href: `${ctx.base}/dapps`, 'data-link': true }, '← All dApps')),
    heading,
    out,
    h(
      'p',
      { className: 'hint' },
      `Created ${formatTime(dapp.createdAt)} · id `,
      h('span', { className: 'mono' }, dapp.dappId),
      ' · ',
      h('a', { href: `${ctx.base}/log?dappId=${dapp.dappId}`, 'data-link': true }, 'Request log'),
      ' · ',
      h('a', { href: `${ctx.base}/dapps/${dapp.dappId}/ledger`, 'data-link': true }, 'Ledger'),
    ),
    h('section', { 'aria-labelledby': 'key-h' }, h('h2', { id: 'key-h' }, 'API key'), keyBox),
    restrictions,
    tokens,
    guarantees,
    tanks,
    h(
      'section',
      { 'aria-labelledby': 'settings-h' },
      h('h2', { id: 'settings-h' }, 'Settings'),
      renameForm,
      chainsForm,
    ),
    hooks,
    h('section', { 'aria-label': 'Lifecycle events' }, events),
    policies,
  );
}

/** @param {string} paymasterUrl @param {number} chainId */
function snippets(paymasterUrl, chainId) {
  const biconomy = `import { createSmartAccountClient, PaymasterMode } from '@biconomy/account';

const smartAccount = await createSmartAccountClient({
  signer,                      // the user's signer (viem WalletClient or ethers Signer)
  chainId: ${chainId},
  bundlerUrl,                  // your ERC-4337 bundler
  paymasterUrl: '${paymasterUrl}',
});

const { waitForTxHash } = await smartAccount.sendTransaction(tx, {
  paymasterServiceData: {
    mode: PaymasterMode.SPONSORED,
    webhookData: { /* what your webhook checks */ },
  },
});`;
  const viem = `import { http } from 'viem';
import { createBundlerClient, createPaymasterClient } from 'viem/account-abstraction';

const paymaster = createPaymasterClient({ transport: http('${paymasterUrl}') });
const bundlerClient = createBundlerClient({
  account,                     // an EntryPoint v0.6 smart account
  transport: http(bundlerUrl),
  paymaster,
  paymasterContext: { mode: 'SPONSORED', sponsorshipInfo: { webhookData: {} } },
});`;
  const block = (/** @type {string} */ label, /** @type {string} */ code) => {
    const area = /** @type {HTMLTextAreaElement} */ (
      h('textarea', {
        readonly: true,
        rows: String(code.split('\n').length),
        className: 'mono code',
        'aria-label': label,
        spellcheck: 'false',
      })
    );
    area.value = code;
    return h(
      'details',
      null,
      h('summary', null, label),
      area,
      copyButton(() => code, 'Copy snippet', area),
    );
  };
  return h(
    'div',
    null,
    block('Biconomy SDK (@biconomy/account 4)', biconomy),
    block("viem's paymaster client (ERC-7677)", viem),
  );
}
