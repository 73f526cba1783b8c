// @ts-check
import { api } from './api.js';
import { busy, clear, copyButton, formatTime, h, notice, shortAddress } from './dom.js';

/**
 * @typedef {{id: string, dappId: string, chainId: number, address: string, token: string, tokenDecimals: number,
 *   meeVersion: string, owner: string, signerKind: string, status: 'active' | 'retired', lowBalance: string | null,
 *   sponsorPath: string, createdAt: string, retiredAt: string | null}} Tank
 * @typedef {Tank & {balance: string | null}} TankWithBalance
 */

/**
 * Base units as whole tokens, exactly (no float): "12250000" with 6 decimals → "12.25".
 * @param {string} units @param {number} decimals
 */
export function formatUnits(units, decimals) {
  if (decimals === 0) return units;
  const digits = units.padStart(decimals + 1, '0');
  const fraction = digits.slice(-decimals).replace(/0+$/, '');
  return `${digits.slice(0, -decimals)}${fraction === '' ? '' : `.${fraction}`}`;
}

/** @param {TankWithBalance} t */
function balanceCell(t) {
  if (t.balance === null) return h('td', { className: 'muted' }, 'unknown (chain not readable)');
  const low = t.lowBalance !== null && BigInt(t.balance) < BigInt(t.lowBalance);
  return h(
    'td',
    { className: low ? 'warn' : null },
    formatUnits(t.balance, t.tokenDecimals),
    low ? ` (below the alert at ${formatUnits(t.lowBalance ?? '0', t.tokenDecimals)})` : '',
  );
}

/**
 * A dApp's Biconomy MEE gas tanks (docs/guides/mee-gas-tanks.md): each tank's address, chain, token, balance (read
 * on chain by the server), status, and the sponsor URL a dApp gives abstractjs as `sponsorshipOptions.url`. Tanks are
 * created by the server operator (`patron tank create`); an operator of the team may retire one here.
 * @param {HTMLElement} root @param {{ dappId: string }} args
 */
export async function renderGasTanks(root, { dappId }) {
  const base = `/api/admin/dapps/${encodeURIComponent(dappId)}/mee-tanks`;
  const out = h('div', { className: 'messages', id: 'tanks-out' });
  const body = h('div');
  const load = async () => {
    /** @type {{tanks: Tank[]}} */
    const { tanks } = await api('GET', base);
    /** @type {TankWithBalance[]} */
    const full = await Promise.all(tanks.map((t) => api('GET', `${base}/${encodeURIComponent(t.id)}`)));
    if (full.length === 0) {
      clear(body).append(
        h('p', { id: 'tanks-empty' }, 'No gas tanks yet. The server operator creates them with patron tank create.'),
      );
      return;
    }
    const rows = full.map((t) => {
      const sponsorUrl = `${location.origin}${t.sponsorPath}`;
      const retire = h(
        'button',
        {
          type: 'button',
          className: 'secondary',
          'data-needs': 'operator',
          onclick: () =>
            void busy(retire, out, async () => {
              if (!confirm(`Retire gas tank ${t.address}? Patron will sign nothing more from it.`)) return;
              await api('POST', `${base}/${encodeURIComponent(t.id)}/retire`);
              // The table first, then the word that it is done: what the notice says is already on screen.
              await load();
              clear(out).append(notice('ok', `Gas tank ${t.address} retired.`));
            }),
        },
        'Retire',
      );
      return h(
        'tr',
        { 'data-tank': t.id },
        h('td', { className: 'mono', title: t.address }, shortAddress(t.address)),
        h('td', null, String(t.chainId)),
        h('td', { className: 'mono', title: t.token }, shortAddress(t.token)),
        balanceCell(t),
        h('td', null, t.status === 'active' ? 'active' : `retired ${formatTime(t.retiredAt ?? t.createdAt)}`),
        h(
          'td',
          null,
          h('span', { className: 'mono' }, sponsorUrl),
          ' ',
          copyButton(() => sponsorUrl),
        ),
        h('td', null, t.status === 'active' ? retire : ''),
      );
    });
    clear(body).append(
      h(
        'table',
        { id: 'tanks-table' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ...['Address', 'Chain', 'Token', 'Balance', 'Status', 'Sponsor URL', ''].map((c) =>
              h('th', { scope: 'col' }, c),
            ),
          ),
        ),
        h('tbody', null, ...rows),
      ),
    );
  };
  await load();
  clear(root).append(
    h(
      'section',
      { 'aria-labelledby': 'tanks-h' },
      h('h2', { id: 'tanks-h' }, 'Gas tanks'),
      h(
        'p',
        { className: 'hint' },
        "Biconomy MEE sponsorship: each tank is a Nexus account holding a token that pays the MEE node for this dApp's sponsored supertransactions. Give abstractjs the sponsor URL as sponsorshipOptions.url and the tank as sponsorshipOptions.gasTank.",
      ),
      body,
      out,
    ),
  );
}
