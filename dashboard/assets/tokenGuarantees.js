// @ts-check
import { api } from './api.js';
import { busy, clear, formatEth, formatTime, h, notice } from './dom.js';

/**
 * @typedef {{limitWei: string, resets: string}} GuaranteeCap
 * @typedef {{enabled: boolean, cap?: GuaranteeCap}} TokenGuarantees
 * @typedef {{limitWei: string, resets: string, usedWei: string, reservedWei: string, windowStart: string, windowEnd?: string}} Usage
 * @typedef {{dappId: string, tokenGuarantees: TokenGuarantees, usage: Usage | null}} GuaranteesView
 */

const RESETS = [
  ['daily', 'a day'],
  ['weekly', 'a week'],
  ['monthly', 'a month'],
  ['hourly', 'an hour'],
  ['never', 'in all (never resets)'],
];
const PER = Object.fromEntries(RESETS);

/**
 * ETH as typed ("0.05") to wei as a decimal string, exactly (no float): undefined for what is not a positive amount
 * with at most 18 decimals. The server checks the wei it gets again; this only spares a round trip.
 * @param {string} text
 */
export function ethToWei(text) {
  const m = /^(\d{1,59})(?:\.(\d{1,18}))?$/.exec(text.trim());
  if (m === null) return undefined;
  const wei = BigInt(m[1] ?? '0') * 10n ** 18n + BigInt((m[2] ?? '').padEnd(18, '0'));
  return wei > 0n ? wei.toString() : undefined;
}

/** Wei as the ETH a person typed, exactly ("50000000000000000" → "0.05"). @param {string} wei */
function weiToEth(wei) {
  const digits = wei.padStart(19, '0');
  const fraction = digits.slice(-18).replace(/0+$/, '');
  return `${digits.slice(0, -18)}${fraction === '' ? '' : `.${fraction}`}`;
}

/** What the setting is, in words, with the cap's current window. @param {GuaranteesView} v */
function stateText(v) {
  const g = v.tokenGuarantees;
  const cap = g.cap === undefined ? '' : `up to ${formatEth(g.cap.limitWei)} ${PER[g.cap.resets] ?? g.cap.resets}`;
  const head = g.enabled
    ? `On: the deposit may pay token ops whose charge fails, ${cap}.`
    : `Off${g.cap === undefined ? ' (the default)' : ` (cap kept: ${cap})`}: a token op that batches its approval is refused; users approve the paymaster first.`;
  const u = v.usage;
  if (u === null) return head;
  const until = u.windowEnd === undefined ? '' : `, until ${formatTime(u.windowEnd)}`;
  return `${head} This window: ${formatEth(u.usedWei)} paid by the deposit, ${formatEth(u.reservedWei)} held by ops not settled yet${until}.`;
}

/**
 * A dApp's token guarantees (docs/guides/token-mode.md, "The dApp's guarantee"): whether Patron signs the token
 * mode's mode 2 for it, whose gas the paymaster's deposit pays when the user's charge fails, and the cap on that per
 * window. Off by default; Save PUTs the whole document, and the server (the one judge) answers with its message.
 * @param {HTMLElement} root @param {{ dappId: string }} args
 */
export async function renderTokenGuarantees(root, { dappId }) {
  const path = `/api/admin/dapps/${encodeURIComponent(dappId)}/token-guarantees`;
  /** @type {GuaranteesView} */
  let view = await api('GET', path);
  const out = h('div', { className: 'messages', id: 'guarantees-out' });
  const state = h('p', { id: 'guarantees-state' });
  const enabled = /** @type {HTMLInputElement} */ (
    h('input', { type: 'checkbox', id: 'guarantees-enabled', checked: view.tokenGuarantees.enabled })
  );
  const capEth = /** @type {HTMLInputElement} */ (
    h('input', {
      id: 'guarantees-cap',
      inputMode: 'decimal',
      placeholder: '0.05',
      spellcheck: 'false',
      'aria-describedby': 'guarantees-cap-hint',
      value: view.tokenGuarantees.cap === undefined ? '' : weiToEth(view.tokenGuarantees.cap.limitWei),
    })
  );
  const resets = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { id: 'guarantees-resets' },
      ...RESETS.map(([v, label]) =>
        h('option', { value: v, selected: v === (view.tokenGuarantees.cap?.resets ?? 'daily') }, label ?? ''),
      ),
    )
  );
  const show = () => {
    state.textContent = stateText(view);
  };
  show();
  const save = h('button', { type: 'submit', 'data-needs': 'operator' }, 'Save token guarantees');
  const form = h(
    'form',
    {
      id: 'guarantees-form',
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        void busy(save, out, async () => {
          const typed = capEth.value.trim();
          const limitWei = typed === '' ? undefined : ethToWei(typed);
          if (typed !== '' && limitWei === undefined) {
            capEth.setAttribute('aria-invalid', 'true');
            clear(out).append(notice('error', 'The cap is an amount of ETH above 0, e.g. 0.05'));
            return;
          }
          capEth.removeAttribute('aria-invalid');
          /** @type {TokenGuarantees} */
          const body = {
            enabled: enabled.checked,
            ...(limitWei === undefined ? {} : { cap: { limitWei, resets: resets.value } }),
          };
          try {
            view = await api('PUT', path, body);
          } catch (err) {
            clear(out).append(notice('error', `Not saved: ${err instanceof Error ? err.message : String(err)}`));
            return;
          }
          show();
          clear(out).append(
            notice('ok', view.tokenGuarantees.enabled ? 'Token guarantees on.' : 'Token guarantees off.'),
          );
        });
      },
    },
    h('label', { className: 'check' }, enabled, ' Guarantee token-paid ops that batch their approval (mode 2)'),
    h('label', { for: 'guarantees-cap' }, 'Cap (ETH the deposit may pay for them)'),
    capEth,
    h(
      'p',
      { className: 'hint', id: 'guarantees-cap-hint' },
      'Required to turn them on. Each guaranteed op holds its worst case against the cap until it settles: released when the user paid, its real cost when the deposit did.',
    ),
    h('label', { for: 'guarantees-resets' }, 'Cap window'),
    resets,
    save,
    out,
  );
  clear(root).append(
    h(
      'section',
      { 'aria-labelledby': 'guarantees-h' },
      h('h2', { id: 'guarantees-h' }, 'Token guarantees'),
      h(
        'p',
        { className: 'hint' },
        'A user paying gas in a token whose first op batches its approval can make that charge fail after the op runs (their own account code moves the tokens away), and then your paymaster deposit pays the gas. Off, such an op is refused and the user approves the paymaster first (or pays with a permit). On, each such op may cost the deposit up to its worst case (at most the signing bound maxOpCostWei), and all of them together at most the cap per window.',
      ),
      state,
      form,
    ),
  );
}
