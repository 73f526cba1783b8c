// @ts-check
import { api } from './api.js';
import { busy, clear, h, notice } from './dom.js';

/**
 * @typedef {{origins?: string[], allowNoOrigin?: boolean, cidrs?: string[], methods?: string[]}} Restrictions
 */

const FAMILIES = [
  ['sponsorship', 'Sponsorship (the dApp pays)'],
  ['tokenQuotes', 'Token quotes and token-paid ops'],
  ['dryRun', 'Dry run (pm_validateSponsorshipPolicies)'],
];

/** One entry a line (commas too). @param {string} text */
const lines = (text) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');

/**
 * Who may use the dApp's API key (docs/guides/security-keys.md): allowed origins, client IP ranges and method
 * families, saved as the whole set with PUT (empty fields: no rule).
 * @param {HTMLElement} root @param {{ dappId: string, out: HTMLElement }} args
 */
export async function renderKeyRestrictions(root, { dappId, out }) {
  const path = `/api/admin/dapps/${encodeURIComponent(dappId)}/restrictions`;
  /** @type {{restrictions: Restrictions}} */
  const { restrictions } = await api('GET', path);
  const area = (/** @type {string} */ id, /** @type {string[] | undefined} */ value) => {
    const el = /** @type {HTMLTextAreaElement} */ (
      h('textarea', { id, rows: '3', className: 'mono', spellcheck: 'false' })
    );
    el.value = (value ?? []).join('\n');
    return el;
  };
  const origins = area('key-origins', restrictions.origins);
  const cidrs = area('key-cidrs', restrictions.cidrs);
  const noOrigin = /** @type {HTMLInputElement} */ (
    h('input', { type: 'checkbox', id: 'key-no-origin', checked: restrictions.allowNoOrigin === true })
  );
  const boxes = FAMILIES.map(([id, label]) => {
    const box = /** @type {HTMLInputElement} */ (
      h('input', {
        type: 'checkbox',
        id: `key-method-${id}`,
        value: id,
        checked: restrictions.methods?.includes(id ?? '') === true,
      })
    );
    return { box, row: h('label', { className: 'check' }, box, ` ${label ?? ''}`) };
  });
  const save = h('button', { type: 'submit', 'data-needs': 'operator' }, 'Save restrictions');
  const form = h(
    'form',
    {
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        void busy(save, out, async () => {
          const o = lines(origins.value);
          const c = lines(cidrs.value);
          const m = boxes.filter((b) => b.box.checked).map((b) => b.box.value);
          /** @type {Restrictions} */
          const body = {
            ...(o.length === 0 ? {} : { origins: o, ...(noOrigin.checked ? { allowNoOrigin: true } : {}) }),
            ...(c.length === 0 ? {} : { cidrs: c }),
            ...(m.length === 0 ? {} : { methods: m }),
          };
          /** @type {{restrictions: Restrictions}} */
          const saved = await api('PUT', path, body);
          origins.value = (saved.restrictions.origins ?? []).join('\n');
          cidrs.value = (saved.restrictions.cidrs ?? []).join('\n');
          clear(out).append(notice('ok', 'Key restrictions saved.'));
        });
      },
    },
    h('label', { for: 'key-origins' }, 'Allowed origins (one a line: https://app.example.com, *.example.com)'),
    origins,
    h('label', { className: 'check' }, noOrigin, ' Also allow calls without an Origin (scripts, servers)'),
    h('label', { for: 'key-cidrs' }, 'Allowed client IP ranges (one a line: 203.0.113.0/24, 2001:db8::/32)'),
    cidrs,
    h(
      'fieldset',
      { className: 'chains' },
      h('legend', null, 'Allowed method families (none checked: all)'),
      ...boxes.map((b) => b.row),
    ),
    save,
  );
  clear(root).append(
    h(
      'section',
      { 'aria-labelledby': 'restrict-h' },
      h('h2', { id: 'restrict-h' }, 'Who may use the key'),
      h(
        'p',
        { className: 'hint' },
        'Empty: anyone holding the key. Browsers send their Origin and pages cannot change it; scripts can write any, so an origin list keeps the key off other websites, not off scripts.',
      ),
      form,
    ),
  );
}
