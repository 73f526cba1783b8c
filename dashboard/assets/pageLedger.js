// @ts-check
import { api, query } from './api.js';
import { busy, clear, formatEth, formatTime, formatUsd, h, noPrice, shortAddress, title } from './dom.js';
import { ledgerChart, seriesClasses } from './ledgerChart.js';

/**
 * A dApp's itemized ledger (docs/guides/ledger.md): spend per day per policy as a chart, the filters, the list with
 * a cursor "More", and a sender's or a user's history (clicking one filters by it), with the CSV of what is shown.
 * @typedef {{id: string, chainId: number, sender: string | null, user: string | null, policyIds: string[] | null, mode: string, status: string, reservedWei: string | null, actualWei: string | null, actualUsd: string | null, userOpHash: string | null, txHash: string | null, blockNumber: number | null, createdAt: string}} Item
 * @typedef {{day?: string, policyId?: string | null, count: number, settledWei: string, settledUsd: string | null, settledWithoutPrice: number}} Group
 */

const FILTERS = /** @type {const} */ (['from', 'to', 'policyId', 'sender', 'user', 'status', 'chainId']);
/**
 * The list's columns (header, class). Their widths are the style sheet's (.ledger-table col.col-*), so the table is
 * as wide as its box at 1280 px; below 640 px each row is a card of label and value pairs (table.cards).
 */
const COLUMNS = /** @type {const} */ ([
  ['Time', 'time'],
  ['Status', 'status'],
  ['Sender', 'sender'],
  ['User', 'user'],
  ['Policies', 'policies'],
  ['Reserved', 'reserved'],
  ['Actual', 'actual'],
  ['USD', 'usd'],
  ['Transaction', 'tx'],
]);
const STATUSES = ['reserved', 'included', 'reverted', 'expired', 'superseded', 'paid_by_user'];
const DAY_MS = 86_400_000;
/** "Dec 3, 2026" @param {string} iso */
const formatDay = (iso) => new Date(iso).toLocaleDateString(undefined, { dateStyle: 'medium' });
/** "7:54:07 AM" @param {string} iso */
const formatClock = (iso) => new Date(iso).toLocaleTimeString(undefined, { timeStyle: 'medium' });

/** @param {HTMLElement} main @param {import('./app.js').PageContext} ctx */
export async function renderLedger(main, ctx) {
  const dappId = ctx.params[0] ?? '';
  const path = `/api/admin/dapps/${encodeURIComponent(dappId)}`;
  const [dapp, policies] = await Promise.all([api('GET', path), api('GET', `${path}/policies`).catch(() => [])]);
  /** @type {Map<string, string>} */
  const names = new Map(policies.map((/** @type {{policyId: string, name: string}} */ p) => [p.policyId, p.name]));
  /** @type {Record<string, string>} */
  const filters = Object.fromEntries(FILTERS.map((k) => [k, ctx.search.get(k) ?? '']));
  const out = h('div', { 'aria-live': 'polite' });
  const tbody = h('tbody');
  const chartBox = h('div', { className: 'chart-box' });
  const csv = h('a', { id: 'ledger-csv', download: '' }, 'Download CSV');
  const more = h('button', { type: 'button', className: 'secondary', hidden: true }, 'More');
  const historyNote = h('p', { id: 'ledger-history', className: 'hint' });
  /** @type {string | null} */
  let cursor = null;

  const input = (/** @type {string} */ k, /** @type {Record<string, unknown>} */ attrs) =>
    h('input', { id: `l-${k}`, name: k, value: filters[k] ?? '', ...attrs });
  /** @type {Record<string, HTMLInputElement | HTMLSelectElement>} */
  const fields = /** @type {Record<string, HTMLInputElement | HTMLSelectElement>} */ (
    /** @type {unknown} */ ({
      from: input('from', { type: 'date' }),
      to: input('to', { type: 'date' }),
      sender: input('sender', { placeholder: '0x…', spellcheck: false }),
      user: input('user', { placeholder: 'end-user id' }),
      chainId: input('chainId', { inputMode: 'numeric' }),
      policyId: h(
        'select',
        { id: 'l-policyId' },
        h('option', { value: '' }, 'All'),
        ...policies.map((/** @type {{policyId: string, name: string}} */ p) =>
          h('option', { value: p.policyId, selected: p.policyId === filters.policyId }, p.name),
        ),
      ),
      status: h(
        'select',
        { id: 'l-status' },
        h('option', { value: '' }, 'All'),
        ...STATUSES.map((s) => h('option', { value: s, selected: s === filters.status }, s)),
      ),
    })
  );

  const filterQuery = () => Object.fromEntries(FILTERS.map((k) => [k, filters[k] ?? '']));
  const setFilter = (/** @type {string} */ k, /** @type {string} */ v) => {
    filters[k] = v;
    const field = fields[k];
    if (field !== undefined) field.value = v;
    history.replaceState(null, '', `${ctx.base}/dapps/${dappId}/ledger${query(filterQuery())}`);
    void busy(apply, out, reload);
  };
  const pick = (/** @type {'sender' | 'user'} */ k, /** @type {string | null} */ v) =>
    v === null
      ? '—'
      : h(
          'button',
          {
            type: 'button',
            className: k === 'sender' ? 'link mono' : 'link',
            title: `${k === 'sender' ? 'Sender' : 'User'} ${v}: show this history`,
            onclick: () => setFilter(k, v),
          },
          k === 'sender' ? shortAddress(v) : v,
        );

  /** One cell: its column's class and, for the phone's cards, its label. */
  const cell = (
    /** @type {(typeof COLUMNS)[number]} */ [label, key],
    /** @type {Record<string, unknown>} */ attrs,
    /** @type {Array<Node | string>} */ ...content
  ) => h('td', { className: key, 'data-label': label, ...attrs }, ...content);
  const [cTime, cStatus, cSender, cUser, cPolicies, cReserved, cActual, cUsd, cTx] = COLUMNS;

  const row = (/** @type {Item} */ i) => {
    const policyNames = (i.policyIds ?? []).map((p) => names.get(p) ?? p.slice(0, 8)).join(', ') || '—';
    return h(
      'tr',
      { 'data-id': i.id },
      // Day and clock on two lines: the column stays narrow and neither is cut.
      cell(
        cTime,
        { title: formatTime(i.createdAt) },
        h(
          'span',
          { className: 'v' },
          h('span', { className: 'line' }, formatDay(i.createdAt)),
          h('span', { className: 'line' }, formatClock(i.createdAt)),
        ),
      ),
      cell(cStatus, {}, i.status),
      cell(cSender, {}, pick('sender', i.sender)),
      cell(cUser, { title: i.user ?? '' }, pick('user', i.user)),
      cell(cPolicies, { title: policyNames }, policyNames),
      cell(cReserved, {}, i.reservedWei === null ? '—' : formatEth(i.reservedWei)),
      cell(cActual, {}, i.actualWei === null ? '—' : formatEth(i.actualWei)),
      // Not settled: nothing to price yet. Settled with no USD value: no price was known, which is not $0.
      cell(
        cUsd,
        {},
        i.actualUsd !== null
          ? formatUsd(i.actualUsd)
          : i.actualWei === null
            ? '—'
            : noPrice(`settlement knew no price for chain ${i.chainId}'s native coin`),
      ),
      cell(
        cTx,
        { title: i.txHash ?? '' },
        i.txHash === null
          ? '—'
          : h(
              'span',
              { className: 'v mono' },
              h('span', { className: 'line' }, `${i.txHash.slice(0, 10)}…`),
              i.blockNumber === null ? null : h('span', { className: 'line' }, `#${i.blockNumber}`),
            ),
      ),
    );
  };

  const loadItems = async (/** @type {boolean} */ append) => {
    const page = await api(
      'GET',
      `${path}/ledger${query({ ...filterQuery(), ...isoRange(), limit: 50, cursor: append ? cursor : null })}`,
    );
    if (!append) clear(tbody);
    tbody.append(...page.items.map(row));
    if (tbody.childElementCount === 0)
      tbody.append(h('tr', null, h('td', { colSpan: COLUMNS.length }, 'No sponsorship matches.')));
    cursor = page.nextCursor;
    more.hidden = cursor === null;
  };

  /** The date inputs as the API's ISO days, `to` made inclusive (the API's is exclusive). */
  const isoRange = () => ({
    from: filters.from || null,
    to: filters.to ? new Date(Date.parse(filters.to) + DAY_MS).toISOString().slice(0, 10) : null,
  });

  const loadChart = async () => {
    // The last 30 days unless a range is chosen.
    const range = isoRange();
    const from = range.from ?? new Date(Date.now() - 29 * DAY_MS).toISOString().slice(0, 10);
    const stats = await api(
      'GET',
      `${path}/ledger/stats${query({ ...filterQuery(), ...range, from, groupBy: 'day,policy' })}`,
    );
    /** @type {Group[]} */
    const groups = stats.groups;
    const days = [...new Set(groups.map((g) => g.day ?? ''))].sort();
    const series = [...new Set(groups.map((g) => g.policyId ?? ''))];
    const seriesNames = new Map(series.map((k) => [k, k === '' ? 'no policy' : (names.get(k) ?? k.slice(0, 8))]));
    const byKey = new Map(groups.map((g) => [`${g.day}|${g.policyId ?? ''}`, Number(BigInt(g.settledWei)) / 1e18]));
    const classes = seriesClasses(series);
    const legend = h(
      'ul',
      { className: 'legend' },
      series.map((k) =>
        h(
          'li',
          null,
          h('span', { className: `swatch ledger-swatch ${classes.get(k) ?? ''}` }),
          ` ${seriesNames.get(k)}`,
        ),
      ),
    );
    /** @type {Group} */
    const t = stats.total;
    const unpriced = `${t.settledWithoutPrice} settled ${t.settledWithoutPrice === 1 ? 'op' : 'ops'}`;
    const total = h(
      'p',
      { id: 'ledger-total', className: 'hint' },
      `${t.count} sponsorships, ${formatEth(t.settledWei)} settled (`,
      t.settledUsd === null
        ? ['USD ', noPrice(`settlement knew no price for ${unpriced} (their chain has no price source, or none fresh)`)]
        : formatUsd(t.settledUsd),
      t.settledUsd !== null && t.settledWithoutPrice > 0 ? ` and ${unpriced} with no USD price, not counted` : '',
      `) since ${from}.`,
    );
    clear(chartBox).append(
      days.length === 0
        ? h('p', { className: 'hint' }, 'Nothing settled in this range.')
        : ledgerChart({ days, series, names: seriesNames, value: (d, k) => byKey.get(`${d}|${k}`) ?? 0, unit: 'ETH' }),
      legend,
      total,
    );
  };

  const reload = async () => {
    csv.setAttribute('href', `${path}/ledger.csv${query({ ...filterQuery(), ...isoRange() })}`);
    const who = filters.sender ? `sender ${filters.sender}` : filters.user ? `user ${filters.user}` : '';
    historyNote.textContent = who === '' ? '' : `History of ${who}.`;
    await Promise.all([loadItems(false), loadChart()]);
  };

  more.addEventListener('click', () => busy(more, out, () => loadItems(true)));
  const apply = h('button', { type: 'submit' }, 'Apply');
  const form = h(
    'form',
    {
      className: 'filters',
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        for (const k of FILTERS) filters[k] = fields[k]?.value.trim() ?? '';
        history.replaceState(null, '', `${ctx.base}/dapps/${dappId}/ledger${query(filterQuery())}`);
        void busy(apply, out, reload);
      },
    },
    ...[
      ['from', 'From'],
      ['to', 'To'],
      ['policyId', 'Policy'],
      ['status', 'Status'],
      ['sender', 'Sender'],
      ['user', 'User'],
      ['chainId', 'Chain'],
    ].map(([k, label]) => h('div', null, h('label', { for: `l-${k}` }, label), fields[k ?? ''])),
    h('div', { className: 'buttons' }, apply),
  );

  await reload();
  main.append(
    title(`Ledger: ${dapp.name}`),
    h('p', null, h('a', { href: `${ctx.base}/dapps/${dappId}`, 'data-link': true }, `← ${dapp.name}`)),
    h(
      'p',
      { className: 'hint' },
      'Every sponsorship signed for this dApp: its status (reserved until the chain includes it or passes its window), the worst case reserved, what it really cost and its USD value at that moment, and the transaction. Click a sender or a user to see their history.',
    ),
    out,
    form,
    h('p', null, csv),
    h(
      'section',
      { 'aria-labelledby': 'ledger-chart-h' },
      h('h2', { id: 'ledger-chart-h' }, 'Settled spend per day and policy'),
      chartBox,
    ),
    h(
      'section',
      { 'aria-labelledby': 'ledger-items-h' },
      h('h2', { id: 'ledger-items-h' }, 'Sponsorships'),
      historyNote,
      h(
        'div',
        { className: 'table-wrap' },
        h(
          'table',
          { id: 'ledger', className: 'ledger-table cards' },
          h(
            'colgroup',
            null,
            COLUMNS.map(([, key]) => h('col', { className: `col-${key}` })),
          ),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              COLUMNS.map(([c, key]) => h('th', { scope: 'col', className: key }, c)),
            ),
          ),
          tbody,
        ),
      ),
      more,
    ),
  );
}
