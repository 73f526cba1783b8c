// @ts-check
import { api } from './api.js';
import { busy, clear, h, notice } from './dom.js';

/**
 * @typedef {{kind: 'jwk', id: string, jwk: Record<string, unknown>}
 *   | {kind: 'pem', id: string, pem: string, alg: string}
 *   | {kind: 'jwksUrl', id: string, url: string}
 *   | {kind: 'address', id: string, address: string}} TokenKey
 * @typedef {{required: boolean, keys: TokenKey[]}} TokenSettings
 */

const KINDS = [
  ['jwk', 'JWK (public key as JSON)'],
  ['pem', 'PEM (SPKI public key)'],
  ['jwksUrl', 'JWKS URL of your backend'],
  ['address', 'EIP-712 voucher signer address'],
];
const KIND_NAMES = { jwk: 'JWK', pem: 'PEM', jwksUrl: 'JWKS URL', address: 'EIP-712 signer' };
const ALGORITHMS = ['ES256', 'EdDSA', 'RS256'];

/**
 * A few characters that tell two keys apart at a glance. A PEM's header line is the same for every key (and a
 * P-256 body starts with the same 36 characters), so its body's last characters are shown instead.
 * @param {TokenKey} k
 */
export function fingerprint(k) {
  if (k.kind === 'jwk') {
    const type = [k.jwk.kty, k.jwk.crv].filter((v) => typeof v === 'string').join(' ');
    const material = k.jwk.x ?? k.jwk.n;
    const tail = typeof material === 'string' ? `…${material.slice(-8)}` : '';
    return typeof k.jwk.kid === 'string' ? `${type} · kid ${k.jwk.kid}` : `${type} ${tail}`.trim();
  }
  if (k.kind === 'pem') {
    const body = k.pem.replace(/-----[^-]+-----/g, '').replace(/\s/g, '');
    return `${k.alg} · …${body.slice(-12)}`;
  }
  return k.kind === 'jwksUrl' ? k.url : k.address;
}

/**
 * A dApp's sponsorship tokens (docs/guides/sponsorship-tokens.md): the keys that verify its backend's tokens and
 * whether every sponsorship must carry one. Adding and removing edit the list here; Save PUTs the whole document,
 * and the server (the one judge) answers with its message, shown under Save and on the key it names.
 * @param {HTMLElement} root @param {{ dappId: string }} args
 */
export async function renderSponsorshipTokens(root, { dappId }) {
  const path = `/api/admin/dapps/${encodeURIComponent(dappId)}/sponsorship-tokens`;
  /** @type {{sponsorshipTokens: TokenSettings}} */
  const { sponsorshipTokens } = await api('GET', path);
  /** @type {TokenKey[]} */
  let keys = [...sponsorshipTokens.keys];
  const out = h('div', { className: 'messages', id: 'tokens-out' });
  const list = h('ul', { className: 'plain token-keys', id: 'token-keys', 'aria-labelledby': 'token-keys-h' });

  /** @param {{ failedId?: string, text?: string }} [mark] the key the server's message names */
  const renderList = (mark = {}) => {
    clear(list).append(
      ...(keys.length === 0 ? [h('li', { className: 'hint' }, 'No key registered: tokens are ignored.')] : []),
      ...keys.map((k) => {
        const remove = h(
          'button',
          { type: 'button', className: 'danger small', 'aria-label': `Remove key ${k.id}` },
          'Remove',
        );
        remove.addEventListener('click', () => {
          keys = keys.filter((x) => x !== k);
          renderList();
          clear(out).append(notice('info', `Key ${k.id} removed here: Save to apply.`));
        });
        const failed = mark.failedId === k.id;
        return h(
          'li',
          { 'data-key': k.id, ...(failed ? { 'aria-invalid': 'true' } : {}) },
          h('span', { className: 'mono' }, k.id),
          ` · ${KIND_NAMES[k.kind]} · `,
          h('span', { className: 'mono fingerprint' }, fingerprint(k)),
          ' ',
          remove,
          failed ? h('p', { className: 'field-error' }, mark.text ?? '') : null,
        );
      }),
    );
  };
  renderList();

  // The "Add a key" form: the fields of the chosen kind only.
  const id = /** @type {HTMLInputElement} */ (
    h('input', { id: 'token-key-id', required: true, maxlength: '200', spellcheck: 'false' })
  );
  const kind = /** @type {HTMLSelectElement} */ (
    h('select', { id: 'token-key-kind' }, ...KINDS.map(([v, label]) => h('option', { value: v }, label)))
  );
  const jwk = /** @type {HTMLTextAreaElement} */ (
    h('textarea', {
      id: 'token-key-jwk',
      rows: '4',
      className: 'mono',
      spellcheck: 'false',
      'aria-describedby': 'token-key-jwk-error',
    })
  );
  const jwkError = h('p', { className: 'field-error', id: 'token-key-jwk-error', hidden: true });
  const pem = /** @type {HTMLTextAreaElement} */ (
    h('textarea', { id: 'token-key-pem', rows: '5', className: 'mono', spellcheck: 'false' })
  );
  const alg = /** @type {HTMLSelectElement} */ (
    h('select', { id: 'token-key-alg' }, ...ALGORITHMS.map((a) => h('option', { value: a }, a)))
  );
  const url = /** @type {HTMLInputElement} */ (
    h('input', { id: 'token-key-url', type: 'url', placeholder: 'https://app.example.com/.well-known/jwks.json' })
  );
  const address = /** @type {HTMLInputElement} */ (
    h('input', { id: 'token-key-address', className: 'mono', spellcheck: 'false', placeholder: '0x…' })
  );
  const groups = {
    jwk: h('div', null, h('label', { for: 'token-key-jwk' }, 'Public JWK (JSON)'), jwk, jwkError),
    pem: h(
      'div',
      null,
      h('label', { for: 'token-key-pem' }, 'Public key (PEM, -----BEGIN PUBLIC KEY-----)'),
      pem,
      h('label', { for: 'token-key-alg' }, 'Algorithm'),
      alg,
    ),
    jwksUrl: h('div', null, h('label', { for: 'token-key-url' }, 'JWKS URL'), url),
    address: h('div', null, h('label', { for: 'token-key-address' }, 'Signer address'), address),
  };
  const showKind = () => {
    for (const [k, group] of Object.entries(groups)) group.hidden = k !== kind.value;
  };
  kind.addEventListener('change', showKind);
  showKind();

  /** The key the form describes, or a message for the field that is wrong. @returns {TokenKey | string} */
  const readKey = () => {
    const keyId = id.value.trim();
    if (kind.value === 'pem') return { kind: 'pem', id: keyId, pem: pem.value.trim(), alg: alg.value };
    if (kind.value === 'jwksUrl') return { kind: 'jwksUrl', id: keyId, url: url.value.trim() };
    if (kind.value === 'address') return { kind: 'address', id: keyId, address: address.value.trim() };
    try {
      /** @type {unknown} */
      const parsed = JSON.parse(jwk.value);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        return 'The JWK must be a JSON object';
      return { kind: 'jwk', id: keyId, jwk: /** @type {Record<string, unknown>} */ (parsed) };
    } catch {
      return 'The JWK is not valid JSON';
    }
  };
  const addForm = h(
    'form',
    {
      id: 'token-add-form',
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        jwkError.hidden = true;
        jwk.removeAttribute('aria-invalid');
        const key = readKey();
        if (typeof key === 'string') {
          jwkError.textContent = key;
          jwkError.hidden = false;
          jwk.setAttribute('aria-invalid', 'true');
          jwk.focus();
          return;
        }
        keys = [...keys, key];
        renderList();
        for (const field of [id, jwk, pem, url, address]) field.value = '';
        clear(out).append(notice('info', `Key ${key.id} added here: Save to apply.`));
      },
    },
    h(
      'fieldset',
      { className: 'group' },
      h('legend', null, 'Add a key'),
      h('label', { for: 'token-key-id' }, 'Id (yours, unique: for example backend-2026)'),
      id,
      h('label', { for: 'token-key-kind' }, 'Kind'),
      kind,
      ...Object.values(groups),
      h('button', { type: 'submit', className: 'secondary' }, 'Add key'),
    ),
  );

  const required = /** @type {HTMLInputElement} */ (
    h('input', { type: 'checkbox', id: 'tokens-required', checked: sponsorshipTokens.required })
  );
  const save = h('button', { type: 'submit', 'data-needs': 'operator' }, 'Save sponsorship tokens');
  const saveForm = h(
    'form',
    {
      id: 'token-form',
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        void busy(save, out, async () => {
          try {
            /** @type {{sponsorshipTokens: TokenSettings}} */
            const saved = await api('PUT', path, { required: required.checked, keys });
            keys = [...saved.sponsorshipTokens.keys];
            required.checked = saved.sponsorshipTokens.required;
            renderList();
            clear(out).append(notice('ok', 'Sponsorship tokens saved.'));
          } catch (err) {
            const message = err instanceof Error ? err.message : String(err);
            // "keys: <id> …" names one key: the message goes on its row too.
            const named = keys.find(
              (k) => message.startsWith(`keys: ${k.id} `) || message.startsWith(`keys: ${k.id}'`),
            );
            renderList(named === undefined ? {} : { failedId: named.id, text: message });
            clear(out).append(notice('error', `Not saved: ${message}`));
          }
        });
      },
    },
    h('label', { className: 'check' }, required, ' Require a sponsorship token on every request'),
    save,
    out,
  );

  clear(root).append(
    h(
      'section',
      { 'aria-labelledby': 'tokens-h' },
      h('h2', { id: 'tokens-h' }, 'Sponsorship tokens'),
      h(
        'p',
        { className: 'hint' },
        'Keys that verify the short-lived tokens your backend issues per end user. Unticked, a token is checked when a call carries one; ticked, a call without one is refused.',
      ),
      h('h3', { id: 'token-keys-h' }, 'Registered keys'),
      list,
      addForm,
      saveForm,
    ),
  );
}
