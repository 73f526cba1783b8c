// @ts-check
import { api, query } from './api.js';
import { busy, formatTime, h, notice, title } from './dom.js';

/**
 * The audit log (docs/guides/dashboard.md, "Audit log"): who changed what, newest first, with each change's fields
 * before → after. Every member reads it; the server gives only this team's rows.
 * @param {HTMLElement} main @param {import('./app.js').PageContext} _ctx
 */
export async function renderAudit(main, _ctx) {
  const out = h('div', { className: 'messages' });
  const body = h('tbody');
  const more = h('button', { type: 'button', className: 'secondary', hidden: true }, 'Load older changes');
  /** @type {string | null} */
  let cursor = null;

  const load = async () => {
    /** @type {{ entries: AuditEntry[], nextCursor: string | null }} */
    const page = await api('GET', `/api/admin/audit-log${query({ limit: 50, before: cursor })}`);
    body.append(...page.entries.map(row));
    cursor = page.nextCursor;
    more.hidden = cursor === null;
  };
  more.addEventListener('click', () => busy(more, out, load));

  await load();
  main.append(
    title('Audit log'),
    h('p', null, 'Every change made through the dashboard or the admin API, newest first. Secrets are never shown.'),
    out,
    h(
      'div',
      { className: 'table-wrap' },
      h(
        'table',
        { id: 'audit-log' },
        h('caption', { className: 'visually-hidden' }, 'Audit log'),
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            h('th', { scope: 'col' }, 'When'),
            h('th', { scope: 'col' }, 'Who'),
            h('th', { scope: 'col' }, 'Action'),
            h('th', { scope: 'col' }, 'Target'),
            h('th', { scope: 'col' }, 'Change'),
          ),
        ),
        body,
      ),
    ),
    body.childElementCount === 0 ? notice('info', 'No changes yet.') : '',
    more,
  );
}

/**
 * @typedef {{ id: string, at: string, dappId: string | null, memberEmail: string, authTokenId: string | null,
 *   action: string, targetId: string | null, before: unknown, after: unknown, requestId: string | null }} AuditEntry
 */

/** @param {AuditEntry} e */
function row(e) {
  return h(
    'tr',
    { 'data-action': e.action },
    h('td', null, formatTime(e.at)),
    h('td', null, e.memberEmail, e.authTokenId === null ? '' : h('span', { className: 'muted' }, ' (auth token)')),
    h('td', { className: 'mono' }, e.action),
    h('td', { className: 'mono wrap' }, e.targetId ?? ''),
    h('td', { className: 'diff wrap' }, diff(e.before, e.after)),
  );
}

/** @param {unknown} v */
const show = (v) => (v === undefined ? '—' : JSON.stringify(v));

/**
 * The fields that differ, one line each: `field: before → after` (a whole document when one side is none).
 * @param {unknown} before @param {unknown} after
 */
function diff(before, after) {
  const isDoc = (/** @type {unknown} */ v) => typeof v === 'object' && v !== null && !Array.isArray(v);
  // A creation (nothing before) or a deletion (nothing after): each field against nothing.
  if (before === null && isDoc(after)) return diff({}, after);
  if (isDoc(before) && after === null) return diff(before, {});
  if (!isDoc(before) || !isDoc(after)) {
    if (before === null && after === null) return '';
    return h('div', null, h('del', null, show(before ?? undefined)), ' → ', h('ins', null, show(after ?? undefined)));
  }
  const b = /** @type {Record<string, unknown>} */ (before);
  const a = /** @type {Record<string, unknown>} */ (after);
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].filter(
    (k) => JSON.stringify(b[k]) !== JSON.stringify(a[k]),
  );
  if (keys.length === 0) return h('span', { className: 'muted' }, 'no field changed');
  return keys.map((k) =>
    h('div', { 'data-field': k }, `${k}: `, h('del', null, show(b[k])), ' → ', h('ins', null, show(a[k]))),
  );
}
