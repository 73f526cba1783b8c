// @ts-check
import { h } from './dom.js';

/**
 * The policy editor's pieces (policyForm.js): a labelled field with its own error line, and the repeated rows of
 * caps and contracts. A row keeps its fields so that a server message naming `caps.1.limit` finds its place.
 *
 * @typedef {import('./policyRules.js').CapValues} CapValues
 * @typedef {import('./policyRules.js').ContractValues} ContractValues
 * @typedef {{ wrap: HTMLElement, control: HTMLElement, error: HTMLElement }} Field
 * @typedef {{ el: HTMLElement, fields: Record<string, Field>, row: Field, read: () => any }} Row
 */

const SCOPES = /** @type {const} */ ([
  ['dapp', 'the whole dApp'],
  ['sender', 'each sender'],
  ['user', 'each user (token sub)'],
  ['op', 'each op'],
]);
const UNITS = /** @type {const} */ ([
  ['wei', 'wei (gas paid)'],
  ['usd', 'USD (gas paid)'],
  ['ops', 'ops (count)'],
]);
const RESETS = ['never', 'hourly', 'daily', 'weekly', 'monthly'];
const LIMIT_HINT = { wei: 'e.g. 10000000000000000 (0.01 ETH)', usd: 'e.g. 5 or 2.50', ops: 'e.g. 100' };

/**
 * A labelled field with its own error line (shown when the server names it), linked for screen readers.
 * @param {{ id: string, label: string, control: HTMLElement, hint?: string }} args @returns {Field}
 */
export function field({ id, label, control, hint }) {
  const error = h('p', { className: 'field-error', id: `${id}-error`, hidden: true });
  const hintEl = hint === undefined ? null : h('p', { className: 'hint field-hint', id: `${id}-hint` }, hint);
  control.id = id;
  if (hintEl !== null) control.setAttribute('aria-describedby', hintEl.id);
  const wrap = h(
    'div',
    { className: 'field' },
    control instanceof HTMLInputElement && control.type === 'checkbox'
      ? h('label', { className: 'check', for: id }, control, ` ${label}`)
      : [h('label', { for: id }, label), control],
    hintEl,
    error,
  );
  return { wrap, control, error };
}

/** @param {Record<string, unknown>} attrs */
const input = (attrs) => /** @type {HTMLInputElement} */ (h('input', attrs));

/** @param {ReadonlyArray<readonly [string, string]>} options @param {string} value */
function select(options, value) {
  const s = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      null,
      options.map(([k, t]) => h('option', { value: k }, t)),
    )
  );
  s.value = value;
  return s;
}

/**
 * A row's frame: a fieldset titled "Cap 2", its fields, a remove button, the row's own error line.
 * @param {{ n: number, word: string, position: number, fields: Record<string, Field>, onRemove: () => void }} args
 */
function frame({ n, word, position, fields, onRemove }) {
  const remove = h(
    'button',
    { type: 'button', className: 'secondary small', 'aria-label': `Remove ${word} ${position}` },
    'Remove',
  );
  remove.addEventListener('click', onRemove);
  const error = h('p', { className: 'field-error', hidden: true, id: `policy-${word}-${n}-error` });
  const el = h(
    'fieldset',
    { className: `${word}-row` },
    h('legend', null, `${word[0]?.toUpperCase()}${word.slice(1)} ${position}`),
    h(
      'div',
      { className: 'row-fields' },
      Object.values(fields).map((f) => f.wrap),
      remove,
    ),
    error,
  );
  return { el, row: { wrap: el, control: el, error } };
}

/**
 * One cap: what it counts for, its unit, limit and reset. `n` keeps ids unique; `position` is what the owner reads.
 * @param {{ n: number, position: number, values: Partial<CapValues>, onRemove: () => void }} args @returns {Row}
 */
export function capRow({ n, position, values: v, onRemove }) {
  const scope = select(SCOPES, v.scope ?? 'sender');
  const unit = select(UNITS, v.unit ?? 'usd');
  const resets = select(
    RESETS.map((r) => [r, r]),
    v.resets ?? 'daily',
  );
  const limit = input({ inputmode: 'decimal', value: v.limit ?? '' });
  const fields = {
    scope: field({ id: `policy-cap-${n}-scope`, label: 'Counts for', control: scope }),
    unit: field({ id: `policy-cap-${n}-unit`, label: 'Unit', control: unit }),
    limit: field({ id: `policy-cap-${n}-limit`, label: 'Limit', control: limit }),
    resets: field({ id: `policy-cap-${n}-resets`, label: 'Resets', control: resets }),
  };
  const sync = () => {
    limit.placeholder = LIMIT_HINT[/** @type {'wei' | 'usd' | 'ops'} */ (unit.value)] ?? '';
    // A per-op cap has no window: it bounds each op on its own.
    resets.disabled = scope.value === 'op';
  };
  scope.addEventListener('change', sync);
  unit.addEventListener('change', sync);
  sync();
  const { el, row } = frame({ n, word: 'cap', position, fields, onRemove });
  return {
    el,
    fields,
    row,
    read: () => ({ scope: scope.value, unit: unit.value, limit: limit.value.trim(), resets: resets.value }),
  };
}

/**
 * One contract of the allowlist: its address and, optionally, the methods allowed.
 * @param {{ n: number, position: number, values: Partial<ContractValues>, onRemove: () => void }} args @returns {Row}
 */
export function contractRow({ n, position, values: v, onRemove }) {
  const address = input({ className: 'mono', placeholder: '0x…', value: v.address ?? '' });
  const selectors = input({ className: 'mono', placeholder: 'any method, or 0xa9059cbb, …', value: v.selectors ?? '' });
  const fields = {
    address: field({ id: `policy-contract-${n}-address`, label: 'Contract address', control: address }),
    selectors: field({ id: `policy-contract-${n}-selectors`, label: 'Methods (selectors)', control: selectors }),
  };
  const { el, row } = frame({ n, word: 'contract', position, fields, onRemove });
  return { el, fields, row, read: () => ({ address: address.value, selectors: selectors.value }) };
}

/** After a removal: "Cap 1", "Cap 2", … again, and the remove buttons' names with them. @param {Row[]} list @param {string} word */
export function renumber(list, word) {
  list.forEach((r, i) => {
    const legend = r.el.querySelector('legend');
    if (legend !== null) legend.textContent = `${word[0]?.toUpperCase()}${word.slice(1)} ${i + 1}`;
    r.el.querySelector('.row-fields > button')?.setAttribute('aria-label', `Remove ${word} ${i + 1}`);
  });
}
