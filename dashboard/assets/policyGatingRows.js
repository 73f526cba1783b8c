// @ts-check
import { h } from './dom.js';
import { field } from './policyFormRows.js';

/**
 * The policy editor's gating rules (docs/guides/policies.md, "Gating rules"): an NFT, an EAS attestation, a minimum
 * balance, each turned on by its checkbox. `read` gives the rules the form sends beside the others; `fill` loads a
 * policy's (so editing a policy never drops them); `fieldFor` finds the field a server message names
 * ("Invalid rules.nft.tokenId: …").
 *
 * @typedef {import('./policyFormRows.js').Field} Field
 */

/** @param {Record<string, unknown>} attrs */
const input = (attrs) => /** @type {HTMLInputElement} */ (h('input', attrs));

/** @param {ReadonlyArray<readonly [string, string]>} options */
const select = (options) =>
  /** @type {HTMLSelectElement} */ (
    h(
      'select',
      null,
      options.map(([k, t]) => h('option', { value: k }, t)),
    )
  );

const SUBJECTS = /** @type {const} */ ([
  ['sender', 'the sender (smart account)'],
  ['user', 'the user’s address (sponsorship token)'],
]);

/** @param {unknown} v */
const text = (v) => (v === undefined || v === null ? '' : String(v));

export function gatingSection() {
  const nftOn = field({
    id: 'policy-nft-on',
    label: 'Require an NFT',
    control: input({ type: 'checkbox' }),
  });
  const nft = {
    standard: field({
      id: 'policy-nft-standard',
      label: 'Standard',
      control: select([
        ['erc721', 'ERC-721'],
        ['erc1155', 'ERC-1155'],
      ]),
    }),
    contract: field({
      id: 'policy-nft-contract',
      label: 'NFT contract',
      control: input({ className: 'mono', placeholder: '0x…' }),
    }),
    tokenId: field({
      id: 'policy-nft-token-id',
      label: 'Token id (ERC-1155)',
      control: input({ inputmode: 'numeric' }),
    }),
    minCount: field({
      id: 'policy-nft-min-count',
      label: 'At least',
      control: input({ inputmode: 'numeric', placeholder: '1' }),
    }),
    subject: field({ id: 'policy-nft-subject', label: 'Held by', control: select(SUBJECTS) }),
  };
  const attOn = field({
    id: 'policy-attestation-on',
    label: 'Require an EAS attestation',
    control: input({ type: 'checkbox' }),
  });
  const att = {
    eas: field({ id: 'policy-attestation-eas', label: 'EAS contract', control: input({ className: 'mono' }) }),
    schema: field({
      id: 'policy-attestation-schema',
      label: 'Schema UID',
      control: input({ className: 'mono', placeholder: '0x… (32 bytes)' }),
    }),
    attesters: field({
      id: 'policy-attestation-attesters',
      label: 'Trusted attesters',
      control: h('textarea', { rows: '2', className: 'mono', spellcheck: 'false', placeholder: '0x… one per line' }),
    }),
    maxAgeSeconds: field({
      id: 'policy-attestation-max-age',
      label: 'Made at most (seconds ago)',
      control: input({ inputmode: 'numeric', placeholder: 'any age' }),
    }),
    subject: field({ id: 'policy-attestation-subject', label: 'Made to', control: select(SUBJECTS) }),
  };
  const balOn = field({
    id: 'policy-balance-on',
    label: 'Require a minimum balance',
    control: input({ type: 'checkbox' }),
  });
  const bal = {
    token: field({
      id: 'policy-balance-token',
      label: 'Token',
      control: input({ className: 'mono', placeholder: '0x… (ERC-20) or native' }),
    }),
    min: field({
      id: 'policy-balance-min',
      label: 'At least (base units)',
      control: input({ inputmode: 'numeric', placeholder: 'e.g. 5000000 (5 USDC)' }),
    }),
    subject: field({ id: 'policy-balance-subject', label: 'Held by', control: select(SUBJECTS) }),
  };

  /** @param {Field} f */
  const value = (f) => /** @type {HTMLInputElement} */ (f.control).value.trim();
  /** @param {Field} f @param {unknown} v */
  const set = (f, v) => {
    /** @type {HTMLInputElement} */ (f.control).value = text(v);
  };
  /** @param {Field} f */
  const on = (f) => /** @type {HTMLInputElement} */ (f.control).checked;

  /** @param {Field} toggle @param {Record<string, Field>} fields */
  const group = (toggle, fields) => {
    const box = h(
      'div',
      { className: 'row-fields' },
      Object.values(fields).map((f) => f.wrap),
    );
    // style, not `hidden`: the stylesheet's display of .row-fields would override the attribute.
    const sync = () => {
      box.style.display = on(toggle) ? '' : 'none';
    };
    toggle.control.addEventListener('change', sync);
    return { el: h('div', null, toggle.wrap, box), sync };
  };
  const groups = [group(nftOn, nft), group(attOn, att), group(balOn, bal)];
  for (const g of groups) g.sync();
  const syncNft = () => {
    // ERC-721 counts the whole collection: the token id is ERC-1155's.
    nft.tokenId.wrap.style.display = value(nft.standard) === 'erc1155' ? '' : 'none';
  };
  nft.standard.control.addEventListener('change', syncNft);

  const el = h(
    'fieldset',
    { className: 'group', id: 'policy-gating' },
    h('legend', null, 'Gating: what the sender must hold'),
    h(
      'p',
      { className: 'hint' },
      'Read on the request’s chain after the other rules, cached for PATRON_GATING_CACHE_SECONDS. ' +
        'An attestation is named by the request (attestationUid in the paymaster context).',
    ),
    groups.map((g) => g.el),
  );

  /** @param {Record<string, unknown>} extra */
  const withSubject = (extra, /** @type {Field} */ subject) =>
    value(subject) === 'sender' ? extra : { ...extra, subject: value(subject) };

  return {
    el,
    /** Every field that can carry a server error. */
    fields: [nftOn, ...Object.values(nft), attOn, ...Object.values(att), balOn, ...Object.values(bal)],
    /** @returns {Record<string, unknown>} */
    read() {
      /** @type {Record<string, unknown>} */
      const rules = {};
      if (on(nftOn)) {
        const standard = value(nft.standard);
        rules.nft = withSubject(
          {
            standard,
            contract: value(nft.contract),
            ...(standard === 'erc1155' && value(nft.tokenId) !== '' ? { tokenId: value(nft.tokenId) } : {}),
            ...(value(nft.minCount) === '' ? {} : { minCount: value(nft.minCount) }),
          },
          nft.subject,
        );
      }
      if (on(attOn)) {
        const age = value(att.maxAgeSeconds);
        rules.attestation = withSubject(
          {
            eas: value(att.eas),
            schema: value(att.schema),
            attesters: value(att.attesters)
              .split(/[\s,]+/)
              .filter((a) => a !== ''),
            // A number when it reads as one; else as typed, for the server to name.
            ...(age === '' ? {} : { maxAgeSeconds: /^\d+$/.test(age) ? Number(age) : age }),
          },
          att.subject,
        );
      }
      if (on(balOn)) {
        rules.minBalance = withSubject({ token: value(bal.token), min: value(bal.min) }, bal.subject);
      }
      return rules;
    },
    /** @param {Record<string, unknown>} rules */
    fill(rules) {
      const n = /** @type {Record<string, unknown> | undefined} */ (rules.nft);
      const a = /** @type {Record<string, unknown> | undefined} */ (rules.attestation);
      const b = /** @type {Record<string, unknown> | undefined} */ (rules.minBalance);
      /** @type {HTMLInputElement} */ (nftOn.control).checked = n !== undefined;
      set(nft.standard, n?.standard ?? 'erc721');
      set(nft.contract, n?.contract);
      set(nft.tokenId, n?.tokenId);
      set(nft.minCount, n?.minCount);
      set(nft.subject, n?.subject ?? 'sender');
      /** @type {HTMLInputElement} */ (attOn.control).checked = a !== undefined;
      set(att.eas, a?.eas);
      set(att.schema, a?.schema);
      set(att.attesters, Array.isArray(a?.attesters) ? a.attesters.join('\n') : '');
      set(att.maxAgeSeconds, a?.maxAgeSeconds);
      set(att.subject, a?.subject ?? 'sender');
      /** @type {HTMLInputElement} */ (balOn.control).checked = b !== undefined;
      set(bal.token, b?.token);
      set(bal.min, b?.min);
      set(bal.subject, b?.subject ?? 'sender');
      for (const g of groups) g.sync();
      syncNft();
    },
    /** The field a server message's path names (`nft.tokenId`), or undefined. @param {string[]} path */
    fieldFor(path) {
      const [head, leaf] = path;
      /** @type {Record<string, Record<string, Field>>} */
      const byRule = { nft, attestation: att, minBalance: bal };
      const toggles = { nft: nftOn, attestation: attOn, minBalance: balOn };
      const rule = byRule[head ?? ''];
      if (rule === undefined) return undefined;
      return rule[leaf ?? ''] ?? toggles[/** @type {'nft' | 'attestation' | 'minBalance'} */ (head)];
    },
  };
}
