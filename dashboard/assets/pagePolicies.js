// @ts-check
import { api, query } from './api.js';
import { busy, clear, formatTime, h, notice } from './dom.js';
import { policyForm } from './policyForm.js';
import { rulesSummary } from './policyRules.js';

/**
 * @typedef {{policyId: string, dappId: string, name: string, active: boolean, rules: Record<string, unknown>, createdAt: string, updatedAt: string}} Policy
 * @typedef {{scope: 'dapp' | 'sender' | 'user', unit: 'wei' | 'usd' | 'ops', resets: string, limit: string, used: string, reserved: string, windowStart: string, windowEnd: string | null}} CapUsage
 */

/** "1.5 USD", "100 ops", "1000 wei". @param {string} amount @param {string} unit */
const withUnit = (amount, unit) => (unit === 'usd' ? `${amount} USD` : `${amount} ${unit}`);

/**
 * The sponsorship policies of one dApp (docs/guides/policies.md): list, create and edit in a form over every
 * rule (policyForm.js; the server checks, and its message shows beside the field it names), activate/deactivate,
 * delete, and each cap's current window (used, reserved, limit, when it resets).
 * @param {HTMLElement} root @param {{ dappId: string, out: HTMLElement }} args
 */
export async function renderPolicies(root, { dappId, out }) {
  const base = `/api/admin/dapps/${encodeURIComponent(dappId)}/policies`;
  const list = h('div');
  const usageBox = h('div', { id: 'policy-usage', role: 'region', 'aria-label': 'Policy usage' });
  const formOut = h('div', { className: 'messages', id: 'policy-form-result' });
  /** @type {Policy | null} the policy being edited, or null when the form creates one */
  let editing = null;
  /** Policy id → its delete action, shared by the list's button and the form's. */
  const deleters = new Map();

  const load = async () => {
    /** @type {Policy[]} */
    const policies = await api('GET', base);
    clear(list).append(
      policies.length === 0
        ? h('p', null, 'No policy: requests are sponsored under the webhooks and signing bounds alone.')
        : h(
            'div',
            { className: 'table-wrap' },
            h(
              'table',
              { id: 'policies' },
              h('caption', { className: 'visually-hidden' }, 'Policies'),
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  ...['Name', 'Status', 'Rules', 'Updated', 'Actions'].map((c) => h('th', { scope: 'col' }, c)),
                ),
              ),
              h('tbody', null, policies.map(row)),
            ),
          ),
    );
  };

  /** @param {Policy} p */
  const row = (p) => {
    const label = (/** @type {string} */ what) => `${what} policy ${p.name}`;
    const button = (
      /** @type {string} */ text,
      /** @type {string} */ aria,
      className = 'secondary',
      /** @type {string | undefined} */ needs = 'operator',
    ) => h('button', { type: 'button', className, 'aria-label': label(aria), 'data-needs': needs }, text);
    const usage = button('Usage', 'Show the usage of', 'secondary', undefined);
    usage.addEventListener('click', () => busy(usage, out, () => showUsage(p)));
    const edit = button('Edit', 'Edit');
    edit.addEventListener('click', () => startEdit(p));
    const remove = async () => {
      await api('DELETE', `${base}/${p.policyId}`);
      clear(out).append(notice('ok', `Deleted policy ${p.name}`));
      if (editing?.policyId === p.policyId) stopEdit();
      clear(usageBox);
      await load();
    };
    deleters.set(p.policyId, remove);
    const toggle = button(p.active ? 'Deactivate' : 'Activate', p.active ? 'Deactivate' : 'Activate');
    toggle.addEventListener('click', () =>
      busy(toggle, out, async () => {
        await api('PATCH', `${base}/${p.policyId}`, { active: !p.active });
        clear(out).append(notice('ok', `${p.active ? 'Deactivated' : 'Activated'} policy ${p.name}`));
        await load();
      }),
    );
    const del = button('Delete', 'Delete', 'danger');
    del.addEventListener('click', () => {
      if (!confirm(`Delete the policy "${p.name}"? Its rules stop applying at once.`)) return;
      void busy(del, out, remove);
    });
    return h(
      'tr',
      { 'data-policy': p.policyId },
      h('td', null, p.name),
      h(
        'td',
        null,
        h('span', { className: `badge ${p.active ? 'sponsored' : 'muted'}` }, p.active ? 'active' : 'inactive'),
      ),
      h(
        'td',
        { className: 'wrap rules' },
        h(
          'ul',
          { className: 'plain' },
          rulesSummary(p.rules).map((r) => h('li', null, r)),
        ),
      ),
      h('td', null, formatTime(p.updatedAt)),
      h('td', { className: 'actions' }, usage, edit, toggle, del),
    );
  };

  // Usage of one policy: the dApp-wide caps, and a sender's or a user's (a token's sub) caps when one is given.
  const sender = /** @type {HTMLInputElement} */ (
    h('input', { id: 'usage-sender', name: 'sender', placeholder: '0x… (per-sender caps)', maxlength: '42' })
  );
  const user = /** @type {HTMLInputElement} */ (
    h('input', { id: 'usage-user', name: 'user', placeholder: 'token sub (per-user caps)', maxlength: '256' })
  );
  /** @param {Policy} p */
  const showUsage = async (p) => {
    const data = await api(
      'GET',
      `${base}/${p.policyId}/usage${query({ sender: sender.value.trim(), user: user.value })}`,
    );
    /** @type {CapUsage[]} */
    const caps = data.caps;
    const refresh = h('button', { type: 'button', className: 'secondary' }, 'Refresh');
    refresh.addEventListener('click', () => busy(refresh, out, () => showUsage(p)));
    clear(usageBox).append(
      h(
        'h3',
        null,
        `Usage of ${p.name}${data.sender === null ? '' : ` for ${data.sender}`}${data.user === null ? '' : ` for user ${data.user}`}`,
      ),
      caps.length === 0
        ? h(
            'p',
            null,
            'No cap to show (per-op caps have no window; per-sender caps need a sender, per-user caps a user).',
          )
        : h(
            'div',
            { className: 'table-wrap' },
            h(
              'table',
              { id: 'usage' },
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  ...['Scope', 'Used', 'Reserved', 'Limit', 'Resets'].map((c) => h('th', { scope: 'col' }, c)),
                ),
              ),
              h(
                'tbody',
                null,
                caps.map((c) =>
                  h(
                    'tr',
                    { 'data-scope': c.scope },
                    h('td', null, c.scope === 'dapp' ? 'dApp' : c.scope),
                    h('td', { className: 'used' }, withUnit(c.used, c.unit)),
                    h('td', { className: 'reserved' }, withUnit(c.reserved, c.unit)),
                    h('td', { className: 'limit' }, withUnit(c.limit, c.unit)),
                    h('td', null, c.windowEnd === null ? 'never' : `${c.resets}, at ${formatTime(c.windowEnd)}`),
                  ),
                ),
              ),
            ),
          ),
      h(
        'p',
        null,
        h('label', { for: 'usage-sender' }, 'Sender '),
        sender,
        ' ',
        h('label', { for: 'usage-user' }, 'User '),
        user,
        ' ',
        refresh,
      ),
    );
  };

  // The create / edit form.
  const editor = policyForm({
    onSubmit: (body) =>
      busy(editor.submit, formOut, async () => {
        clear(formOut);
        try {
          const saved =
            editing === null ? await api('POST', base, body) : await api('PATCH', `${base}/${editing.policyId}`, body);
          clear(formOut).append(notice('ok', `${editing === null ? 'Created' : 'Saved'} policy ${saved.name}`));
          stopEdit();
          await load();
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          // Beside the field the server names, and above as well, where the result of every save is read.
          const placed = editor.showError(message);
          clear(formOut).append(notice('error', placed ? `Not saved: ${message} (see the field)` : message));
        }
      }),
    onDelete: () => {
      const p = editing;
      const remove = p === null ? undefined : deleters.get(p.policyId);
      if (p === null || remove === undefined) return;
      if (!confirm(`Delete the policy "${p.name}"? Its rules stop applying at once.`)) return;
      void busy(editor.form, formOut, remove);
    },
  });
  editor.edit(null);

  /** @param {Policy} p */
  const startEdit = (p) => {
    editing = p;
    editor.edit(p);
    clear(formOut);
    editor.form.scrollIntoView({ block: 'start' });
  };
  const stopEdit = () => {
    editing = null;
    editor.edit(null);
  };
  editor.cancel.addEventListener('click', () => {
    stopEdit();
    clear(formOut);
  });
  editor.form.append(formOut);
  const form = editor.form;

  await load();
  root.append(
    h(
      'section',
      { 'aria-labelledby': 'policies-h' },
      h('h2', { id: 'policies-h' }, 'Policies'),
      h(
        'p',
        { className: 'hint' },
        'Every policy that applies to a request (active, in its time window, on its chain) must pass its rules; ' +
          'with policies of which none applies, requests are refused, so deactivating the only one stops ' +
          'sponsorship. Each field of the form is one rule; the same rules as JSON are under "Advanced" ' +
          '(docs/guides/policies.md).',
      ),
      list,
      usageBox,
      form,
    ),
  );
}
