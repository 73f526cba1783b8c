// @ts-check
import { api } from './api.js';
import { busy, clear, formatTime, h, notice, secretOnce } from './dom.js';

/**
 * @typedef {{webhookId: string, webhookUrl: string, requestType: 'GET' | 'POST', active: boolean, includeOperation?: true, createdAt: string, updatedAt: string}} Webhook
 */

const SAMPLE = JSON.stringify({ patronTest: true, num: 2 }, null, 2);

/** A human line for a test verdict. @param {{verified: boolean, reason?: string, status?: number, latencyMs: number}} v */
function verdictText(v) {
  const status = v.status === undefined ? 'no HTTP status' : `HTTP ${v.status}`;
  const what = v.verified
    ? 'Verified: the webhook would allow sponsorship'
    : v.reason === 'denied'
      ? 'Denied: the webhook answered arePoliciesVerified = false'
      : `Failed (${v.reason}): Patron would refuse sponsorship`;
  return `${what} · ${status} · ${v.latencyMs} ms`;
}

/**
 * The webhooks of one dApp (spec §6): list, register, activate/deactivate, delete, show/rotate the signing
 * secret, and a test call with sample webhookData.
 * @param {HTMLElement} root @param {{ dappId: string, out: HTMLElement }} args
 */
export async function renderWebhooks(root, { dappId, out }) {
  const base = `/api/admin/dapps/${encodeURIComponent(dappId)}/webhooks`;
  const list = h('div');
  const secretBox = h('div');
  const testResult = h('div', { id: 'test-result', role: 'status', 'aria-live': 'polite' });
  const data = /** @type {HTMLTextAreaElement} */ (
    h('textarea', { id: 'test-data', rows: '4', className: 'mono', spellcheck: 'false' })
  );
  data.value = SAMPLE;

  const load = async () => {
    /** @type {Webhook[]} */
    const hooks = await api('GET', base);
    clear(list).append(
      hooks.length === 0
        ? h('p', null, 'No webhook: every sponsorship request of this dApp is approved without conditions.')
        : h(
            'div',
            { className: 'table-wrap' },
            h(
              'table',
              { id: 'webhooks' },
              h('caption', { className: 'visually-hidden' }, 'Webhooks'),
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  h('th', { scope: 'col' }, 'URL'),
                  h('th', { scope: 'col' }, 'Method'),
                  h('th', { scope: 'col' }, 'Status'),
                  h('th', { scope: 'col' }, 'Registered'),
                  h('th', { scope: 'col' }, 'Actions'),
                ),
              ),
              h('tbody', null, hooks.map(row)),
            ),
          ),
    );
  };

  /** @param {Webhook} w */
  const row = (w) => {
    const label = (/** @type {string} */ what) => `${what} ${w.webhookUrl}`;
    const toggle = h(
      'button',
      {
        type: 'button',
        className: 'secondary',
        'aria-label': label(w.active ? 'Deactivate' : 'Activate'),
        'data-needs': 'operator',
      },
      w.active ? 'Deactivate' : 'Activate',
    );
    toggle.addEventListener('click', () =>
      busy(toggle, out, async () => {
        await api('PATCH', `${base}/${w.webhookId}`, { active: !w.active });
        clear(out).append(notice('ok', `${w.active ? 'Deactivated' : 'Activated'} ${w.webhookUrl}`));
        await load();
      }),
    );
    // includeOperation (docs/guides/webhooks.md, "Webhooks"): POST webhooks only, so GET rows get no button.
    const withOp = w.includeOperation === true;
    const opToggle =
      w.requestType === 'POST'
        ? h(
            'button',
            {
              type: 'button',
              className: 'secondary',
              'aria-label': label(withOp ? 'Stop sending the operation to' : 'Send the operation to'),
            },
            withOp ? 'Data only' : 'Include operation',
          )
        : null;
    opToggle?.addEventListener('click', () =>
      busy(opToggle, out, async () => {
        await api('PATCH', `${base}/${w.webhookId}`, { includeOperation: !withOp });
        clear(out).append(notice('ok', `${withOp ? 'Data only for' : 'The operation is sent to'} ${w.webhookUrl}`));
        await load();
      }),
    );
    const test = h(
      'button',
      { type: 'button', 'aria-label': label('Send a test call to'), 'data-needs': 'operator' },
      'Send test',
    );
    test.addEventListener('click', () =>
      busy(test, testResult, async () => {
        /** @type {unknown} */
        let webhookData;
        try {
          webhookData = JSON.parse(data.value);
        } catch {
          clear(testResult).append(notice('error', 'The test webhookData is not valid JSON.'));
          return;
        }
        if (typeof webhookData !== 'object' || webhookData === null || Array.isArray(webhookData)) {
          clear(testResult).append(notice('error', 'The test webhookData must be a JSON object.'));
          return;
        }
        clear(testResult).append(h('p', { className: 'loading' }, `Calling ${w.webhookUrl}…`));
        const v = await api('POST', `${base}/${w.webhookId}/test`, { webhookData });
        clear(testResult).append(
          notice(
            v.verified ? 'ok' : 'error',
            h('strong', { 'data-verdict': v.verified ? 'verified' : v.reason }, verdictText(v)),
            h('br'),
            h('span', { className: 'hint' }, `${w.requestType} ${w.webhookUrl}`),
          ),
        );
      }),
    );
    const reveal = h(
      'button',
      {
        type: 'button',
        className: 'secondary',
        'aria-label': label('Show the signing secret of'),
        'data-needs': 'owner',
      },
      'Show secret',
    );
    reveal.addEventListener('click', () =>
      busy(reveal, out, async () => {
        const { signingSecret } = await api('POST', `${base}/${w.webhookId}/reveal-secret`);
        showSecret(
          'Signing secret',
          signingSecret,
          'Verify Patron’s calls with it (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature).',
        );
      }),
    );
    const rotate = h(
      'button',
      {
        type: 'button',
        className: 'secondary',
        'aria-label': label('Rotate the signing secret of'),
        'data-needs': 'owner',
      },
      'Rotate secret',
    );
    rotate.addEventListener('click', () => {
      if (!confirm('Replace the signing secret? Patron signs with the new one from now on.')) return;
      void busy(rotate, out, async () => {
        const { signingSecret } = await api('POST', `${base}/${w.webhookId}/rotate-secret`);
        showSecret(
          'New signing secret',
          signingSecret,
          'Patron signs every call with it from now on; update your receiver.',
        );
      });
    });
    const del = h(
      'button',
      { type: 'button', className: 'danger', 'aria-label': label('Delete'), 'data-needs': 'operator' },
      'Delete',
    );
    del.addEventListener('click', () => {
      if (!confirm(`Delete the webhook ${w.webhookUrl}? Its conditions stop applying at once.`)) return;
      void busy(del, out, async () => {
        await api('DELETE', `${base}/${w.webhookId}`);
        clear(out).append(notice('ok', `Deleted ${w.webhookUrl}`));
        await load();
      });
    });
    return h(
      'tr',
      null,
      h('td', { className: 'mono wrap' }, w.webhookUrl),
      h('td', null, w.requestType, withOp ? h('span', { className: 'hint' }, ' + operation') : null),
      h(
        'td',
        null,
        h('span', { className: `badge ${w.active ? 'sponsored' : 'muted'}` }, w.active ? 'active' : 'inactive'),
      ),
      h('td', null, formatTime(w.createdAt)),
      h('td', { className: 'actions' }, test, toggle, opToggle, reveal, rotate, del),
    );
  };

  /** @param {string} titleText @param {string} secret @param {string} hint */
  const showSecret = (titleText, secret, hint) => {
    clear(secretBox).append(secretOnce({ title: titleText, secret, hint, onDone: () => clear(secretBox) }));
  };

  const url = /** @type {HTMLInputElement} */ (
    h('input', {
      id: 'webhook-url',
      name: 'webhookUrl',
      type: 'url',
      required: true,
      placeholder: 'https://example.com/patron-webhook',
      maxlength: '2048',
    })
  );
  const method = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { id: 'webhook-method', name: 'requestType' },
      h('option', { value: 'POST' }, 'POST'),
      h('option', { value: 'GET' }, 'GET'),
    )
  );
  const includeOp = /** @type {HTMLInputElement} */ (
    h('input', { id: 'webhook-include-op', name: 'includeOperation', type: 'checkbox' })
  );
  const register = h('button', { type: 'submit', 'data-needs': 'operator' }, 'Register webhook');
  const form = h(
    'form',
    {
      className: 'row-form',
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        void busy(register, out, async () => {
          const created = await api('POST', base, {
            webhookUrl: url.value,
            requestType: method.value,
            ...(includeOp.checked ? { includeOperation: true } : {}),
          });
          url.value = '';
          clear(out).append(notice('ok', `Registered ${created.webhookUrl}`));
          showSecret(
            'Signing secret of the new webhook',
            created.signingSecret,
            'Verify Patron’s calls with it (Standard Webhooks). You can show it again later.',
          );
          await load();
        });
      },
    },
    h('label', { for: 'webhook-url' }, 'Webhook URL'),
    url,
    h('label', { for: 'webhook-method' }, 'Method'),
    method,
    includeOp,
    h(
      'label',
      { for: 'webhook-include-op', title: 'POST only: the op, its final gas and worst-case cost' },
      'Include the operation',
    ),
    register,
  );

  await load();
  root.append(
    h(
      'section',
      { 'aria-labelledby': 'hooks-h' },
      h('h2', { id: 'hooks-h' }, 'Webhooks'),
      h(
        'p',
        { className: 'hint' },
        'Every active webhook is asked before each sponsorship; all must answer {"arePoliciesVerified": true}.',
      ),
      form,
      secretBox,
      list,
      h('label', { for: 'test-data' }, 'webhookData for test calls (JSON)'),
      data,
      testResult,
    ),
  );
}
