// @ts-check
/**
 * DOM helpers. Everything the dashboard shows is built with createElement and textContent, never innerHTML,
 * so a string from the API (a dApp name, a webhook URL, an error reason) can never become markup.
 */

/**
 * @param {string} tag
 * @param {Record<string, unknown> | null} [attrs]
 * @param {...(Node | string | number | null | undefined | false | Array<Node | string | null | undefined | false>)} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2).toLowerCase(), /** @type {EventListener} */ (value));
    } else if (key === 'className') {
      el.className = String(value);
    } else if (key === 'value' && 'value' in el) {
      /** @type {HTMLInputElement} */ (el).value = String(value);
    } else if (key === 'checked' && el instanceof HTMLInputElement) {
      el.checked = Boolean(value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

/**
 * @param {HTMLElement} el
 * @param {Array<unknown>} children
 */
function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.append(child);
    else el.append(document.createTextNode(String(child)));
  }
}

/** @param {HTMLElement} el */
export function clear(el) {
  el.replaceChildren();
  return el;
}

/** Says something to screen readers (the polite live region). @param {string} text */
export function announce(text) {
  const region = document.getElementById('announce');
  if (region === null) return;
  region.textContent = '';
  // A fresh text node on the next frame is announced even when the text repeats.
  requestAnimationFrame(() => {
    region.textContent = text;
  });
}

/** @param {string | null | undefined} iso */
export function formatTime(iso) {
  if (iso === null || iso === undefined) return '—';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** @param {string | null | undefined} address */
export function shortAddress(address) {
  if (address === null || address === undefined) return '—';
  return address.length > 14 ? `${address.slice(0, 8)}…${address.slice(-6)}` : address;
}

/**
 * Copies text; falls back to selecting it when the Clipboard API is unavailable (plain-HTTP hosts).
 * @param {string} text
 * @param {HTMLInputElement | HTMLTextAreaElement} [field]
 */
export async function copyText(text, field) {
  try {
    await navigator.clipboard.writeText(text);
    announce('Copied to the clipboard');
    return true;
  } catch {
    field?.focus();
    field?.select();
    announce('Copy is unavailable here: the text is selected, press Ctrl+C');
    return false;
  }
}

/**
 * A button that copies `get()`; says "Copied" for a moment.
 * @param {() => string} get
 * @param {string} [label]
 * @param {HTMLInputElement | HTMLTextAreaElement} [field]
 */
export function copyButton(get, label = 'Copy', field) {
  const button = h(
    'button',
    {
      type: 'button',
      className: 'secondary',
      onclick: async () => {
        if (await copyText(get(), field)) {
          button.textContent = 'Copied';
          setTimeout(() => {
            button.textContent = label;
          }, 1500);
        }
      },
    },
    label,
  );
  return button;
}

/** A message box: role=alert for errors (read at once), status otherwise.
 * @param {'error' | 'ok' | 'warn' | 'info'} kind
 * @param {...(Node | string)} content
 */
export function notice(kind, ...content) {
  return h(
    'div',
    { className: `notice ${kind}`, role: kind === 'error' || kind === 'warn' ? 'alert' : 'status' },
    ...content,
  );
}

/**
 * A "shown once" box for a new secret, with a copy button.
 * @param {{ title: string, secret: string, hint: string, onDone: () => void }} args
 */
export function secretOnce({ title, secret, hint, onDone }) {
  const field = /** @type {HTMLInputElement} */ (
    h('input', {
      type: 'text',
      readonly: true,
      value: secret,
      className: 'mono',
      'aria-label': title,
      spellcheck: 'false',
    })
  );
  const box = h(
    'section',
    { className: 'secret-once', 'aria-label': title },
    h('h3', null, title),
    h('p', null, hint),
    h(
      'div',
      { className: 'row' },
      field,
      copyButton(() => secret, 'Copy', field),
    ),
    h('button', { type: 'button', onclick: onDone }, 'Done, I stored it'),
  );
  queueMicrotask(() => field.focus());
  return box;
}

/** @param {string} text */
export function title(text) {
  document.title = `${text} · Patron`;
  return h('h1', { tabindex: '-1' }, text);
}

/**
 * Runs an action from a button: disables it meanwhile, shows errors in `out`.
 * @param {HTMLButtonElement | HTMLElement} button
 * @param {HTMLElement} out
 * @param {() => Promise<void>} action
 */
export async function busy(button, out, action) {
  button.setAttribute('disabled', '');
  button.setAttribute('aria-busy', 'true');
  try {
    await action();
  } catch (err) {
    clear(out).append(notice('error', err instanceof Error ? err.message : String(err)));
  } finally {
    button.removeAttribute('disabled');
    button.removeAttribute('aria-busy');
  }
}

/**
 * Wei (a decimal string from the API) as ETH for reading: two significant digits below 1 ETH ("0.0039 ETH"),
 * four decimals above; dust in wei. Display only: amounts are compared and summed as strings by the server.
 * @param {string} wei
 */
export function formatEth(wei) {
  const n = BigInt(wei);
  if (n === 0n) return '0 ETH';
  if (n < 10n ** 12n) return `${n} wei`;
  const eth = Number(n) / 1e18;
  const s = eth >= 1 ? eth.toFixed(4) : eth.toPrecision(2);
  return `${s.includes('.') ? s.replace(/\.?0+$/, '') : s} ETH`;
}

/**
 * USD (a decimal string from the API) for reading: cents from one cent up ("$1,234.57"), two significant digits below
 * ("$0.0042"), so a real cost is never rounded to a "$0.00" that reads like no cost. Where no price was known the API
 * gives null, shown with noPrice, never as $0.
 * @param {string} usd
 */
export function formatUsd(usd) {
  const n = Number(usd);
  if (n === 0) return '$0';
  if (n < 0.01) return `$${n.toPrecision(2)}`;
  return n.toLocaleString('en-US', { style: 'currency', currency: 'USD' });
}

/**
 * What stands in for a USD value that is unknown because no price was (no price source for the chain's native coin,
 * or none fresh): a dash, with why on hover. One look everywhere the dashboard shows USD.
 * @param {string} why
 */
export function noPrice(why) {
  return h('span', { className: 'no-price', title: `No USD price: ${why}` }, '—');
}

/** A duration for reading: "45 min", "7.5 h", "3.2 days". @param {number} seconds */
export function formatDuration(seconds) {
  if (seconds < 3600) return `${Math.max(1, Math.round(seconds / 60))} min`;
  if (seconds < 2 * 86_400) return `${(seconds / 3600).toFixed(1).replace(/\.0$/, '')} h`;
  return `${(seconds / 86_400).toFixed(1).replace(/\.0$/, '')} days`;
}

/** The team roles, least first (src/store/records.ts MEMBER_ROLES). */
const ROLE_RANK = /** @type {Record<string, number>} */ ({ viewer: 0, operator: 1, owner: 2 });

/**
 * Whether `role` may do what needs `needed` (docs/guides/dashboard.md, "Team and roles").
 * @param {string | undefined} role @param {string} needed
 */
export function roleAllows(role, needed) {
  return (ROLE_RANK[role ?? 'viewer'] ?? 0) >= (ROLE_RANK[needed] ?? 2);
}

/**
 * Disables, under `root`, every control marked `data-needs="<role>"` that the signed-in role may not use, with a
 * title saying why; the style sheet hides them too (body[data-role]). Convenience only: the server refuses the call
 * whatever the page shows (src/api/routeRoles.ts).
 * @param {ParentNode} root @param {string | undefined} role
 */
export function applyRole(root, role) {
  for (const el of root.querySelectorAll('[data-needs]')) {
    const needed = el.getAttribute('data-needs') ?? 'owner';
    if (roleAllows(role, needed)) continue;
    if (el.hasAttribute('disabled') && el.getAttribute('data-role-locked') === needed) continue;
    el.setAttribute('disabled', '');
    el.setAttribute('data-role-locked', needed);
    el.setAttribute('title', `Needs the ${needed} role`);
  }
}
