// @ts-check
import { api, query } from './api.js';
import { OUTCOMES, requestChart } from './chart.js';
import { busy, clear, formatEth, formatTime, h, shortAddress, title } from './dom.js';

/**
 * @typedef {{id: string, at: string, dappId: string, chainId: number, method: string, mode: string | null, sender: string | null, outcome: string, errorCode: number | null, reason: string | null, webhook: {allowed: boolean, reason: string | null, latencyMs: number, calls: number} | null, latencyMs: number, policy: Policy | null, userOpHash: string | null, actualCostWei: string | null}} Entry
 * @typedef {{decision: 'passed' | 'denied', rule: string | null, policyId: string | null, policyIds: string[], reserved: Array<{unit: string, amount: string}>, guarantee: boolean}} Policy
 */

/** A reserved amount in its cap's unit: wei as ETH, usd in micro-USD, ops. @param {{unit: string, amount: string}} r */
function reservedAmount(r) {
  if (r.unit === 'wei') return formatEth(r.amount);
  if (r.unit === 'usd') return `${(Number(r.amount) / 1e6).toFixed(4).replace(/\.?0+$/, '')} USD`;
  return `${r.amount} ${r.amount === '1' ? 'op' : 'ops'}`;
}

/**
 * "denied: cap (policy Daily cap)", "reserved 0.0039 ETH + 1 op", "passed", or "—" when no policy was asked; a
 * token-mode op signed in mode 2 (its charge guaranteed by the dApp) reads "guarantee: reserved 0.0039 ETH" or
 * "guarantee: passed". Exported for the tests (test/dashboardApi.test.ts).
 * @param {Policy | null} p @param {Map<string, string>} policyNames
 */
export function policyText(p, policyNames) {
  if (p === null) return '—';
  if (p.decision === 'denied') {
    const name = p.policyId === null ? null : (policyNames.get(p.policyId) ?? p.policyId.slice(0, 8));
    return `denied: ${p.rule ?? 'policy'}${name === null ? '' : ` (policy ${name})`}`;
  }
  const passed = p.reserved.length === 0 ? 'passed' : `reserved ${p.reserved.map(reservedAmount).join(' + ')}`;
  return p.guarantee ? `guarantee: ${passed}` : passed;
}

/** The columns shown per entry (header, class); the rest is in the entry's details row. */
const COLUMNS = /** @type {const} */ ([
  ['Time', 'time'],
  ['dApp', 'dapp'],
  ['Method', 'method'],
  ['Mode', 'mode'],
  ['Sender', 'sender'],
  ['Outcome', 'outcome'],
  ['Reason', 'reason'],
  ['Details', 'more'],
]);

/** The paying mode as the owner names it: "sponsored" (the dApp pays) or "token" (the user pays in ERC-20). */
export function modeText(/** @type {string | null} */ mode) {
  if (mode === 'SPONSORED') return 'sponsored';
  if (mode === 'ERC20') return 'token';
  return mode ?? '—';
}

/** @param {string} k @param {Node | string} v */
const fact = (k, v) => [h('dt', null, k), h('dd', null, v)];
/** "Nov 26" @param {string} iso */
const formatDay = (iso) => new Date(iso).toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
/** "1:08:22 PM" @param {string} iso */
const formatClock = (iso) => new Date(iso).toLocaleTimeString(undefined, { timeStyle: 'medium' });

/**
 * The request log: every paymaster JSON-RPC call of the account's dApps, filterable by dApp, outcome and
 * sender, with a chart of outcomes over time. @param {HTMLElement} main @param {import('./app.js').PageContext} ctx
 */
export async function renderLog(main, ctx) {
  /** @type {Array<{dappId: string, name: string}>} */
  const dapps = await api('GET', '/api/admin/dapps');
  const names = new Map(dapps.map((d) => [d.dappId, d.name]));
  /** Policy id → name, read per dApp the first time one of its entries names a policy. */
  const policyNames = new Map();
  const policiesRead = new Set();
  /** @param {Entry[]} entries */
  const readPolicyNames = async (entries) => {
    const wanted = new Set(entries.filter((e) => e.policy?.policyId).map((e) => e.dappId));
    await Promise.all(
      [...wanted]
        .filter((d) => !policiesRead.has(d))
        .map(async (dappId) => {
          policiesRead.add(dappId);
          /** @type {Array<{policyId: string, name: string}>} */
          const list = await api('GET', `/api/admin/dapps/${encodeURIComponent(dappId)}/policies`).catch(() => []);
          for (const p of list) policyNames.set(p.policyId, p.name);
        }),
    );
  };
  const filters = {
    dappId: ctx.search.get('dappId') ?? '',
    outcome: ctx.search.get('outcome') ?? '',
    sender: ctx.search.get('sender') ?? '',
    range: ctx.search.get('range') ?? '24h',
  };
  const out = h('div', { className: 'messages' });
  const chartBox = h('div', { className: 'chart-box' });
  const tbody = h('tbody');
  const more = h('button', { type: 'button', className: 'secondary', hidden: true }, 'Load older requests');
  /** @type {string | null} */
  let cursor = null;

  const dappSelect = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { id: 'f-dapp', name: 'dappId' },
      h('option', { value: '' }, 'All dApps'),
      dapps.map((d) => h('option', { value: d.dappId }, d.name)),
    )
  );
  dappSelect.value = filters.dappId;
  const outcomeSelect = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { id: 'f-outcome', name: 'outcome' },
      h('option', { value: '' }, 'All outcomes'),
      OUTCOMES.map((o) => h('option', { value: o }, o)),
    )
  );
  outcomeSelect.value = filters.outcome;
  const sender = /** @type {HTMLInputElement} */ (
    h('input', {
      id: 'f-sender',
      name: 'sender',
      placeholder: '0x…',
      value: filters.sender,
      pattern: '0x[0-9a-fA-F]{40}',
      title: 'An address: 0x and 40 hex digits',
      className: 'mono',
    })
  );
  const range = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { id: 'f-range', name: 'range' },
      h('option', { value: '1h' }, 'Last hour'),
      h('option', { value: '24h' }, 'Last 24 hours'),
      h('option', { value: '7d' }, 'Last 7 days'),
    )
  );
  range.value = filters.range;

  /** @param {Entry} e */
  const webhookText = (e) =>
    e.webhook === null
      ? '—'
      : `${e.webhook.allowed ? 'allowed' : `refused${e.webhook.reason ? ` (${e.webhook.reason})` : ''}`} · ${e.webhook.latencyMs} ms`;
  /** @param {Entry} e */
  const reasonText = (e) => (e.errorCode === null ? '' : `${e.errorCode} `) + (e.reason ?? '');
  let rowSeq = 0;

  /**
   * One entry: a compact row (the columns that fit at 1280 px, long text cut with the whole of it on hover) and a
   * details row under it, opened by its button, with every field in full. Below 640 px the stylesheet turns both
   * into cards whose text wraps.
   * @param {Entry} e
   */
  const rows = (e) => {
    const detailsId = `log-details-${++rowSeq}`;
    const dapp = names.get(e.dappId) ?? e.dappId.slice(0, 8);
    const reason = reasonText(e);
    const cell = (
      /** @type {string} */ label,
      /** @type {Record<string, unknown>} */ attrs,
      /** @type {any[]} */ ...c
    ) =>
      // One wrapper per cell: on a phone the cell's label and this value are the two halves of a card's line.
      h('td', { 'data-label': label, ...attrs }, h('span', { className: 'v' }, ...c));
    const toggle = h(
      'button',
      {
        type: 'button',
        className: 'secondary small',
        'aria-expanded': 'false',
        'aria-controls': detailsId,
        'aria-label': `Details of the ${e.outcome} ${e.method} call at ${formatTime(e.at)}`,
      },
      'Details',
    );
    const details = h(
      'tr',
      { className: 'details', id: detailsId, hidden: true },
      h(
        'td',
        { colspan: String(COLUMNS.length) },
        h(
          'dl',
          { className: 'facts' },
          fact('Time', formatTime(e.at)),
          fact('dApp', dapp),
          fact('Chain', String(e.chainId)),
          fact('Method', h('span', { className: 'mono' }, e.method)),
          fact('Mode', modeText(e.mode)),
          fact('Sender', h('span', { className: 'mono sender-full' }, e.sender ?? '—')),
          fact('Outcome', e.outcome),
          fact('Reason', h('span', { className: 'reason-full' }, reason === '' ? '—' : reason)),
          fact('Webhook', h('span', { className: 'webhook' }, webhookText(e))),
          fact(
            'Policy',
            h(
              'span',
              { className: 'policy', 'data-decision': e.policy?.decision ?? '' },
              policyText(e.policy, policyNames),
            ),
          ),
          fact(
            'Actual cost',
            h(
              'span',
              { className: 'cost' },
              e.userOpHash === null ? '—' : e.actualCostWei === null ? 'not settled yet' : formatEth(e.actualCostWei),
            ),
          ),
          e.userOpHash === null ? null : fact('userOpHash', h('span', { className: 'mono' }, e.userOpHash)),
          fact('Latency', h('span', { className: 'latency' }, `${e.latencyMs} ms`)),
        ),
      ),
    );
    toggle.addEventListener('click', () => {
      const open = details.hidden;
      details.hidden = !open;
      toggle.setAttribute('aria-expanded', String(open));
      toggle.textContent = open ? 'Hide' : 'Details';
    });
    const entry = h(
      'tr',
      { className: 'entry', 'data-outcome': e.outcome },
      cell(
        'Time',
        { className: 'time', title: formatTime(e.at) },
        h('span', { className: 'line' }, formatDay(e.at)),
        h('span', { className: 'line' }, formatClock(e.at)),
      ),
      cell(
        'dApp',
        { className: 'dapp', title: `${dapp} · chain ${e.chainId}` },
        h('span', { className: 'line' }, dapp),
        h('span', { className: 'line sub' }, `chain ${e.chainId}`),
      ),
      cell('Method', { className: 'method', title: e.method }, h('span', { className: 'mono' }, e.method)),
      cell('Mode', { className: 'mode', 'data-mode': e.mode ?? '', title: modeText(e.mode) }, modeText(e.mode)),
      cell(
        'Sender',
        { className: 'sender', title: e.sender ?? '' },
        h('span', { className: 'mono' }, shortAddress(e.sender)),
      ),
      cell(
        'Outcome',
        { className: 'outcome', title: e.outcome },
        h('span', { className: `badge ${e.outcome}` }, e.outcome),
      ),
      cell(
        'Reason',
        { className: 'reason', ...(reason === '' ? {} : { title: reason }) },
        h('span', { className: 'clamp' }, reason === '' ? '—' : reason),
      ),
      cell('', { className: 'more' }, toggle),
    );
    return [entry, details];
  };

  const loadEntries = async (/** @type {boolean} */ append) => {
    const data = await api(
      'GET',
      `/api/admin/request-log${query({ dappId: filters.dappId, outcome: filters.outcome, sender: filters.sender, before: append ? cursor : undefined, limit: 50 })}`,
    );
    await readPolicyNames(data.entries);
    if (!append) clear(tbody);
    tbody.append(...data.entries.flatMap(rows));
    if (tbody.childElementCount === 0)
      tbody.append(h('tr', null, h('td', { colspan: String(COLUMNS.length) }, 'No requests match.')));
    cursor = data.nextCursor;
    more.hidden = cursor === null;
  };
  const loadChart = async () => {
    const stats = await api(
      'GET',
      `/api/admin/request-log/stats${query({ dappId: filters.dappId, range: filters.range })}`,
    );
    const legend = h(
      'ul',
      { className: 'legend' },
      OUTCOMES.map((o) => h('li', null, h('span', { className: `swatch ${o}`, 'aria-hidden': 'true' }), o)),
    );
    clear(chartBox).append(requestChart(stats), legend);
  };

  more.addEventListener('click', () => busy(more, out, () => loadEntries(true)));
  const apply = h('button', { type: 'submit' }, 'Apply');
  const refresh = h('button', { type: 'button', className: 'secondary' }, 'Refresh');
  const reload = () => Promise.all([loadEntries(false), loadChart()]).then(() => undefined);
  refresh.addEventListener('click', () => busy(refresh, out, reload));
  const form = h(
    'form',
    {
      className: 'filters',
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        filters.dappId = dappSelect.value;
        filters.outcome = outcomeSelect.value;
        filters.sender = sender.value.trim();
        filters.range = range.value;
        history.replaceState(null, '', `${ctx.base}/log${query(filters)}`);
        void busy(apply, out, reload);
      },
    },
    h('div', null, h('label', { for: 'f-dapp' }, 'dApp'), dappSelect),
    h('div', null, h('label', { for: 'f-outcome' }, 'Outcome'), outcomeSelect),
    h('div', null, h('label', { for: 'f-sender' }, 'Sender'), sender),
    h('div', null, h('label', { for: 'f-range' }, 'Chart range'), range),
    h('div', { className: 'buttons' }, apply, refresh),
  );

  await reload();
  main.append(
    title('Request log'),
    h(
      'p',
      { className: 'hint' },
      'Every paymaster JSON-RPC call of your dApps. Mode: sponsored (your dApp pays the gas) or token (the user pays in an ERC-20). Outcomes: sponsored (signed paymasterAndData), quoted (a token quote or an ERC-7677 stub), denied (your webhook, a policy, your token guarantees, the signing bounds or the paymaster\'s solvency said no), error (anything else). A cut-off reason shows in full on hover; Details opens the whole entry (webhook, policy, actual cost, latency). Policy: what the request reserved against your caps, or the rule that denied it; "guarantee" marks a token-paid op that batches its approval, whose charge your dApp guarantees (its token guarantees on), the reserved amounts then including the guarantees\' cap. Actual cost: what the EntryPoint charged once the op was included.',
    ),
    out,
    form,
    h('section', { 'aria-labelledby': 'chart-h' }, h('h2', { id: 'chart-h' }, 'Requests over time'), chartBox),
    h(
      'section',
      { 'aria-labelledby': 'entries-h' },
      h('h2', { id: 'entries-h' }, 'Requests'),
      h(
        'div',
        { className: 'table-wrap' },
        h(
          'table',
          { id: 'log', className: 'log-table' },
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
