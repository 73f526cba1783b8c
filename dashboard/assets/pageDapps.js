// @ts-check
import { api } from './api.js';
import { busy, clear, formatTime, h, notice, title } from './dom.js';

/** @returns {Promise<Array<{chainId: number, embedded?: boolean}>>} */
export async function servedChains() {
  const res = await fetch('/api/chains', { headers: { accept: 'application/json' } });
  /** @type {{ chains?: unknown }} */
  const body = await res.json();
  const list = Array.isArray(body.chains) ? body.chains : [];
  return list.filter(
    (/** @type {unknown} */ c) =>
      typeof c === 'object' && c !== null && typeof (/** @type {{chainId?: unknown}} */ (c).chainId) === 'number',
  );
}

/**
 * Checkboxes for chain ids: every chain this Patron serves, plus any the dApp lists that it does not.
 * @param {{ chains: Array<{chainId: number, embedded?: boolean}>, selected: number[], idPrefix: string }} args
 */
export function chainPicker({ chains, selected, idPrefix }) {
  const ids = [...new Set([...chains.map((c) => c.chainId), ...selected])].sort((a, b) => a - b);
  const served = new Set(chains.map((c) => c.chainId));
  return h(
    'fieldset',
    { className: 'chains' },
    h('legend', null, 'Chains'),
    ids.map((id) =>
      h(
        'label',
        { className: 'check' },
        h('input', {
          type: 'checkbox',
          name: 'chain',
          value: String(id),
          id: `${idPrefix}-${id}`,
          checked: selected.includes(id),
        }),
        ` ${id}`,
        chains.find((c) => c.chainId === id)?.embedded ? ' (dev chain)' : '',
        served.has(id) ? '' : ' (not served by this Patron)',
      ),
    ),
  );
}

/** @param {HTMLElement} fieldset */
export function pickedChains(fieldset) {
  return [...fieldset.querySelectorAll('input[name="chain"]:checked')].map((el) =>
    Number(/** @type {HTMLInputElement} */ (el).value),
  );
}

/** The dApps of the account, and a form to create one. @param {HTMLElement} main @param {import('./app.js').PageContext} ctx */
export async function renderDapps(main, ctx) {
  const [dapps, chains] = await Promise.all([api('GET', '/api/admin/dapps'), servedChains()]);
  const out = h('div', { className: 'messages' });
  const name = /** @type {HTMLInputElement} */ (
    h('input', { id: 'dapp-name', name: 'name', required: true, maxlength: '100' })
  );
  const picker = chainPicker({
    chains,
    selected: chains.length === 1 && chains[0] ? [chains[0].chainId] : [],
    idPrefix: 'new-chain',
  });
  const create = h('button', { type: 'submit', 'data-needs': 'owner' }, 'Create dApp');
  const form = h(
    'form',
    {
      className: 'card',
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        void busy(create, out, async () => {
          const chainIds = pickedChains(picker);
          if (chainIds.length === 0) {
            clear(out).append(notice('error', 'Pick at least one chain.'));
            return;
          }
          const dapp = await api('POST', '/api/admin/dapps', { name: name.value, chainIds });
          ctx.navigate(`/dapps/${dapp.dappId}?created=1`);
        });
      },
    },
    h('h2', null, 'New dApp'),
    h('label', { for: 'dapp-name' }, 'Name'),
    name,
    picker,
    create,
  );
  main.append(
    title('dApps'),
    out,
    /** @type {Array<{dappId: string, name: string, chainIds: number[], createdAt: string}>} */ (dapps).length === 0
      ? h('p', null, 'No dApp yet: create one below to get an API key and a paymaster URL.')
      : h(
          'div',
          { className: 'table-wrap' },
          h(
            'table',
            { id: 'dapps' },
            h('caption', { className: 'visually-hidden' }, 'Your dApps'),
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                h('th', { scope: 'col' }, 'Name'),
                h('th', { scope: 'col' }, 'Chains'),
                h('th', { scope: 'col' }, 'Created'),
              ),
            ),
            h(
              'tbody',
              null,
              dapps.map((/** @type {{dappId: string, name: string, chainIds: number[], createdAt: string}} */ d) =>
                h(
                  'tr',
                  null,
                  h('td', null, h('a', { href: `${ctx.base}/dapps/${d.dappId}`, 'data-link': true }, d.name)),
                  h('td', null, d.chainIds.join(', ')),
                  h('td', null, formatTime(d.createdAt)),
                ),
              ),
            ),
          ),
        ),
    form,
  );
}
