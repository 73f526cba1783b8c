// @ts-check
import { h } from './dom.js';
import { capRow, contractRow, field, renumber } from './policyFormRows.js';
import { gatingSection } from './policyGatingRows.js';
import { fieldForPath, formValuesOf, readRules } from './policyRules.js';

/**
 * The policy editor: a form over every rule a policy holds (src/policies/policySchema.ts: chains, time window,
 * sender lists, contract allowlist, account deployment, gas-price ceiling, caps). The server validates; its message
 * ("Invalid rules.caps.0.unit: …") names the field, and the form shows it next to that field. The rules as JSON
 * stay available under "Advanced", as a secondary way in.
 *
 * @typedef {import('./policyRules.js').FormValues} FormValues
 * @typedef {import('./policyRules.js').CapValues} CapValues
 * @typedef {import('./policyRules.js').ContractValues} ContractValues
 */

/** @typedef {import('./policyFormRows.js').Field} Field @typedef {import('./policyFormRows.js').Row} Row */

/**
 * @param {{ onSubmit: (values: { name: string, active: boolean, rules: Record<string, unknown> }) => Promise<void>, onDelete: () => void }} args
 */
export function policyForm({ onSubmit, onDelete }) {
  /** @type {Field[]} the fixed fields that can carry an error (the rows' own are in `caps` and `contracts`) */
  const all = [];
  /** @param {Field} f */
  const keep = (f) => {
    all.push(f);
    return f;
  };
  const input = (/** @type {Record<string, unknown>} */ attrs) => /** @type {HTMLInputElement} */ (h('input', attrs));
  const name = keep(field({ id: 'policy-name', label: 'Name', control: input({ name: 'name', maxlength: '100' }) }));
  const active = keep(
    field({
      id: 'policy-active',
      label: 'Active (its rules apply to requests)',
      control: input({ type: 'checkbox', checked: true }),
    }),
  );
  const chains = keep(
    field({
      id: 'policy-chains',
      label: 'Chains',
      control: input({ inputmode: 'numeric', placeholder: 'all of the dApp’s chains' }),
      hint: 'Chain ids, separated by commas; empty: every chain of the dApp.',
    }),
  );
  const startsAt = keep(
    field({ id: 'policy-starts', label: 'Applies from', control: input({ type: 'datetime-local', step: '1' }) }),
  );
  const endsAt = keep(
    field({
      id: 'policy-ends',
      label: 'Until',
      control: input({ type: 'datetime-local', step: '1' }),
      hint: 'In your browser’s time zone; empty: no start or no end.',
    }),
  );
  const area = (/** @type {string} */ placeholder) =>
    h('textarea', { rows: '3', className: 'mono', spellcheck: 'false', placeholder });
  const allow = keep(
    field({
      id: 'policy-allow',
      label: 'Only these senders',
      control: area('0x… one address per line'),
      hint: 'Empty: any sender.',
    }),
  );
  const block = keep(field({ id: 'policy-block', label: 'Never these senders', control: area('0x… one per line') }));
  const deploy = keep(
    field({
      id: 'policy-deploy',
      label: 'Sponsor ops that deploy their account (initCode)',
      control: input({ type: 'checkbox', checked: true }),
    }),
  );
  const maxFee = keep(
    field({
      id: 'policy-max-fee',
      label: 'Max fee per gas (wei)',
      control: input({ inputmode: 'numeric', placeholder: 'no ceiling beyond the signing bounds' }),
      hint: '1 gwei is 1000000000 wei.',
    }),
  );

  // The gating rules (NFT, attestation, balance): their own section, sent beside the rules above.
  const gating = gatingSection();
  /** @param {FormValues} v */
  const rulesOf = (v) => ({ ...readRules(v), ...gating.read() });

  // Repeated rows: caps and contracts. Each row keeps its fields so a server error finds its place by index.
  /** @type {Row[]} */
  let caps = [];
  /** @type {Row[]} */
  let contracts = [];
  const capsBox = h('div', { className: 'rows', id: 'policy-caps' });
  const contractsBox = h('div', { className: 'rows', id: 'policy-contracts' });
  const capsField = keep({
    wrap: capsBox,
    control: capsBox,
    error: h('p', { className: 'field-error', hidden: true }),
  });
  const contractsField = keep({
    wrap: contractsBox,
    control: contractsBox,
    error: h('p', { className: 'field-error', hidden: true }),
  });
  let rowSeq = 0;

  /** @param {Partial<CapValues>} [v] */
  const addCap = (v = {}) => {
    const entry = capRow({
      n: ++rowSeq,
      position: caps.length + 1,
      values: v,
      onRemove: () => {
        caps = caps.filter((c) => c !== entry);
        entry.el.remove();
        renumber(caps, 'cap');
      },
    });
    caps.push(entry);
    capsBox.append(entry.el);
    return entry;
  };
  /** @param {Partial<ContractValues>} [v] */
  const addContract = (v = {}) => {
    const entry = contractRow({
      n: ++rowSeq,
      position: contracts.length + 1,
      values: v,
      onRemove: () => {
        contracts = contracts.filter((c) => c !== entry);
        entry.el.remove();
        renumber(contracts, 'contract');
      },
    });
    contracts.push(entry);
    contractsBox.append(entry.el);
    return entry;
  };

  const addCapButton = h('button', { type: 'button', className: 'secondary', id: 'policy-add-cap' }, 'Add a cap');
  addCapButton.addEventListener('click', () => addCap().fields.limit.control.focus());
  const addContractButton = h(
    'button',
    { type: 'button', className: 'secondary', id: 'policy-add-contract' },
    'Add a contract',
  );
  addContractButton.addEventListener('click', () => addContract().fields.address.control.focus());

  /** @returns {FormValues} */
  const values = () => ({
    name: /** @type {HTMLInputElement} */ (name.control).value,
    active: /** @type {HTMLInputElement} */ (active.control).checked,
    chains: /** @type {HTMLInputElement} */ (chains.control).value,
    startsAt: /** @type {HTMLInputElement} */ (startsAt.control).value,
    endsAt: /** @type {HTMLInputElement} */ (endsAt.control).value,
    allow: /** @type {HTMLTextAreaElement} */ (allow.control).value,
    block: /** @type {HTMLTextAreaElement} */ (block.control).value,
    sponsorDeployment: /** @type {HTMLInputElement} */ (deploy.control).checked,
    maxFeePerGas: /** @type {HTMLInputElement} */ (maxFee.control).value,
    caps: caps.map((c) => c.read()),
    contracts: contracts.map((c) => c.read()),
  });

  // Advanced: the same rules as JSON, read from the form when opened, loadable back into it.
  const json = /** @type {HTMLTextAreaElement} */ (
    h('textarea', { rows: '10', className: 'mono', spellcheck: 'false' })
  );
  const jsonField = keep(field({ id: 'policy-rules-json', label: 'Rules (JSON)', control: json }));
  const loadJson = h(
    'button',
    { type: 'button', className: 'secondary', id: 'policy-load-json' },
    'Load into the form',
  );
  const advanced = h(
    'details',
    { className: 'advanced' },
    h('summary', null, 'Advanced: the rules as JSON'),
    h(
      'p',
      { className: 'hint' },
      'What the form sends. Paste rules here and load them into the form to edit them there.',
    ),
    jsonField.wrap,
    loadJson,
  );
  advanced.addEventListener('toggle', () => {
    if (/** @type {HTMLDetailsElement} */ (advanced).open) json.value = JSON.stringify(rulesOf(values()), null, 2);
  });

  const legend = h('h3', null, 'New policy');
  const submit = h('button', { type: 'submit', 'data-needs': 'operator' }, 'Create policy');
  const cancel = h('button', { type: 'button', className: 'secondary', hidden: true }, 'Cancel edit');
  const remove = h(
    'button',
    { type: 'button', className: 'danger', hidden: true, id: 'policy-delete' },
    'Delete policy',
  );
  remove.addEventListener('click', onDelete);

  /** Fills the form: a policy's values, or the defaults of a new one. @param {FormValues} v */
  const fill = (v) => {
    clearErrors();
    /** @type {HTMLInputElement} */ (name.control).value = v.name;
    /** @type {HTMLInputElement} */ (active.control).checked = v.active;
    /** @type {HTMLInputElement} */ (chains.control).value = v.chains;
    /** @type {HTMLInputElement} */ (startsAt.control).value = v.startsAt;
    /** @type {HTMLInputElement} */ (endsAt.control).value = v.endsAt;
    /** @type {HTMLTextAreaElement} */ (allow.control).value = v.allow;
    /** @type {HTMLTextAreaElement} */ (block.control).value = v.block;
    /** @type {HTMLInputElement} */ (deploy.control).checked = v.sponsorDeployment;
    /** @type {HTMLInputElement} */ (maxFee.control).value = v.maxFeePerGas;
    for (const r of [...caps, ...contracts]) r.el.remove();
    caps = [];
    contracts = [];
    for (const c of v.caps) addCap(c);
    for (const c of v.contracts) addContract(c);
  };

  /** @param {Field} f */
  const clearError = (f) => {
    f.error.hidden = true;
    f.error.textContent = '';
    f.control.removeAttribute('aria-invalid');
    const described = (f.control.getAttribute('aria-describedby') ?? '').split(' ').filter((x) => x !== f.error.id);
    if (described.length === 0) f.control.removeAttribute('aria-describedby');
    else f.control.setAttribute('aria-describedby', described.join(' '));
  };
  const clearErrors = () => {
    const rows = [...caps, ...contracts].flatMap((r) => [r.row, ...Object.values(r.fields)]);
    for (const f of [...all, ...rows, ...gating.fields]) clearError(f);
  };

  /**
   * Puts the server's message next to the field it names; false when it names none (the caller shows it above).
   * @param {string} message
   */
  const showError = (message) => {
    const found = fieldForPath(message);
    if (found === undefined) return false;
    const { path, text } = found;
    /** @type {Field | undefined} */
    let target;
    const [head, index, leaf] = path;
    if (head === 'name') target = name;
    else if (head === 'chainIds') target = chains;
    else if (head === 'startsAt') target = startsAt;
    else if (head === 'endsAt') target = endsAt;
    else if (head === 'senders') target = path[1] === 'block' ? block : allow;
    else if (head === 'sponsorDeployment') target = deploy;
    else if (head === 'maxFeePerGas') target = maxFee;
    else if (head === 'nft' || head === 'attestation' || head === 'minBalance') target = gating.fieldFor(path);
    else if (head === 'caps' || head === 'contracts') {
      const row = (head === 'caps' ? caps : contracts)[Number(index)];
      target = row === undefined ? (head === 'caps' ? capsField : contractsField) : (row.fields[leaf ?? ''] ?? row.row);
    }
    if (target === undefined) return false;
    target.error.textContent = text;
    target.error.hidden = false;
    target.control.setAttribute('aria-invalid', 'true');
    const described = (target.control.getAttribute('aria-describedby') ?? '').split(' ').filter((x) => x !== '');
    target.control.setAttribute('aria-describedby', [...described, target.error.id].join(' '));
    const focusable =
      target.control instanceof HTMLFieldSetElement
        ? /** @type {HTMLElement | null} */ (target.control.querySelector('select, input'))
        : target.control;
    focusable?.focus();
    return true;
  };

  loadJson.addEventListener('click', () => {
    clearError(jsonField);
    /** @type {unknown} */
    let parsed;
    try {
      parsed = JSON.parse(json.value);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      jsonField.error.textContent = 'Not a JSON object: the rules are one object, like {"caps": [...]}.';
      jsonField.error.hidden = false;
      json.setAttribute('aria-invalid', 'true');
      return;
    }
    const current = values();
    fill(
      formValuesOf({
        name: current.name,
        active: current.active,
        rules: /** @type {Record<string, unknown>} */ (parsed),
      }),
    );
    gating.fill(/** @type {Record<string, unknown>} */ (parsed));
  });

  const form = h(
    'form',
    {
      id: 'policy-form',
      noValidate: true,
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        clearErrors();
        const v = values();
        void onSubmit({ name: v.name, active: v.active, rules: rulesOf(v) });
      },
    },
    legend,
    name.wrap,
    active.wrap,
    h(
      'fieldset',
      { className: 'group' },
      h('legend', null, 'Where and when'),
      chains.wrap,
      h('div', { className: 'row-fields' }, startsAt.wrap, endsAt.wrap),
    ),
    h('fieldset', { className: 'group' }, h('legend', null, 'Senders'), allow.wrap, block.wrap),
    h(
      'fieldset',
      { className: 'group' },
      h('legend', null, 'Caps'),
      h(
        'p',
        { className: 'hint' },
        'What this policy lets be spent: per dApp, per sender or per user (the sponsorship token’s sub, across ' +
          'their wallets; a request without a token is denied) in a window that resets (UTC calendar), or per op. ' +
          'One cap per scope, unit and reset.',
      ),
      capsBox,
      capsField.error,
      addCapButton,
    ),
    h(
      'fieldset',
      { className: 'group' },
      h('legend', null, 'Contracts the account may call'),
      h('p', { className: 'hint' }, 'None: any call. With some, an op calling anything else is refused.'),
      contractsBox,
      contractsField.error,
      addContractButton,
    ),
    h('fieldset', { className: 'group' }, h('legend', null, 'Gas'), deploy.wrap, maxFee.wrap),
    gating.el,
    advanced,
    h('p', { className: 'form-buttons' }, submit, ' ', cancel, ' ', remove),
  );

  return {
    form,
    /** @param {{ name: string, active: boolean, rules: Record<string, unknown> } | null} p null: a new policy */
    edit(p) {
      fill(formValuesOf(p ?? { name: '', active: true, rules: NEW_POLICY_RULES }));
      gating.fill(p?.rules ?? {});
      legend.textContent = p === null ? 'New policy' : `Edit policy ${p.name}`;
      submit.textContent = p === null ? 'Create policy' : 'Save policy';
      cancel.hidden = p === null;
      remove.hidden = p === null;
      /** @type {HTMLDetailsElement} */ (advanced).open = false;
      if (p !== null) name.control.focus();
    },
    cancel,
    submit,
    showError,
    clearErrors,
  };
}

/** A new policy starts with one per-sender daily USD cap: the commonest first rule. */
const NEW_POLICY_RULES = { caps: [{ scope: 'sender', unit: 'usd', limit: '5', resets: 'daily' }] };
