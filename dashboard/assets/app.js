// @ts-check
import { api, onSessionExpired, setCsrfToken } from './api.js';
import { announce, applyRole, clear, h, notice } from './dom.js';
import { renderAccount } from './pageAccount.js';
import { renderAudit } from './pageAudit.js';
import { renderDapp } from './pageDapp.js';
import { renderDapps } from './pageDapps.js';
import { renderLedger } from './pageLedger.js';
import { renderLog } from './pageLog.js';
import { renderLogin } from './pageLogin.js';
import { renderStatus } from './pageStatus.js';
import { renderTeam } from './pageTeam.js';

/**
 * The dashboard shell: a tiny History-API router, the signed-in header, and session handling. Pages are
 * functions that fill <main>; each gets the route's parameters and a `navigate` function.
 */
const base = document.documentElement.dataset.base ?? '/dashboard';
const main = /** @type {HTMLElement} */ (document.getElementById('main'));
const top = /** @type {HTMLElement} */ (document.getElementById('top'));

/**
 * @typedef {{ memberId: string, email: string, role: 'owner' | 'operator' | 'viewer', createdAt: string }} Member
 * @typedef {{ account: { accountId: string, email: string, createdAt: string }, member: Member, csrfToken: string, expiresAt: string }} Session
 * @typedef {{ params: string[], navigate: (path: string, replace?: boolean) => void, base: string, session: Session | null, setSession: (s: Session | null) => void, search: URLSearchParams }} PageContext
 */

/** @type {Session | null} */
let session = null;
let renderSeq = 0;

/** @type {Array<[RegExp, (main: HTMLElement, ctx: PageContext) => Promise<void> | void, string]>} */
const ROUTES = [
  [/^\/login$/, renderLogin, ''],
  [/^\/account$/, renderAccount, 'account'],
  [/^\/dapps$/, renderDapps, 'dapps'],
  [/^\/dapps\/([0-9a-fA-F-]{36})$/, renderDapp, 'dapps'],
  [/^\/dapps\/([0-9a-fA-F-]{36})\/ledger$/, renderLedger, 'dapps'],
  [/^\/log$/, renderLog, 'log'],
  [/^\/status$/, renderStatus, 'status'],
  [/^\/team$/, renderTeam, 'team'],
  [/^\/audit$/, renderAudit, 'audit'],
];

/** @param {string} path a path below the base, like "/dapps"; @param {boolean} [replace] */
function navigate(path, replace = false) {
  const url = `${base}${path}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  void render();
}

/** @param {Session | null} s */
function setSession(s) {
  session = s;
  setCsrfToken(s?.csrfToken ?? null);
  top.hidden = s === null;
  const who = document.getElementById('who-email');
  if (who !== null) who.textContent = s === null ? '' : `${s.member.email} (${s.member.role})`;
  // The style sheet hides, and applyRole disables, what this role cannot do (the server refuses it anyway).
  if (s === null) delete document.body.dataset.role;
  else document.body.dataset.role = s.member.role;
}

// Pages add rows and forms after their first render (a list reloaded after a change): each gets the role gate too.
new MutationObserver(() => applyRole(main, session?.member.role)).observe(main, {
  childList: true,
  subtree: true,
  attributes: true,
  attributeFilter: ['disabled'],
});

async function render() {
  const seq = ++renderSeq;
  const path = location.pathname.startsWith(base) ? location.pathname.slice(base.length) || '/' : '/';
  const search = new URLSearchParams(location.search);
  if (path === '/' || path === '') return navigate(session === null ? '/login' : '/dapps', true);
  const route = ROUTES.find(([re]) => re.test(path));
  if (route === undefined) {
    clear(main).append(h('h1', { tabindex: '-1' }, 'Not found'), notice('warn', 'No such page.'));
    return;
  }
  const [re, page, nav] = route;
  if (session === null && page !== renderLogin) {
    return navigate(`/login?next=${encodeURIComponent(path)}`, true);
  }
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.getAttribute('data-nav') === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const params = (re.exec(path) ?? []).slice(1);
  clear(main).append(h('p', { className: 'loading' }, 'Loading…'));
  try {
    const fresh = h('div');
    await page(fresh, { params, navigate, base, session, setSession, search });
    if (seq !== renderSeq) return; // a newer navigation won
    clear(main).append(...fresh.childNodes);
    main.querySelector('h1')?.focus();
  } catch (err) {
    if (seq !== renderSeq) return;
    clear(main).append(
      h('h1', { tabindex: '-1' }, 'Something went wrong'),
      notice('error', err instanceof Error ? err.message : String(err)),
    );
  }
}

// Links marked data-link stay in the page (no reload); modified clicks keep their usual meaning.
document.addEventListener('click', (e) => {
  const a = e.target instanceof Element ? e.target.closest('a[data-link]') : null;
  if (a === null || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const href = a.getAttribute('href') ?? '';
  if (!href.startsWith(base)) return;
  e.preventDefault();
  navigate(href.slice(base.length));
});
window.addEventListener('popstate', () => void render());

document.getElementById('sign-out')?.addEventListener('click', async () => {
  try {
    await api('DELETE', '/api/admin/session');
  } finally {
    setSession(null);
    announce('Signed out');
    navigate('/login?signedOut=1');
  }
});

// Any 401 from the API means the session is gone (expired, signed out elsewhere, password changed).
onSessionExpired(() => {
  if (session === null) return;
  setSession(null);
  const here = location.pathname.slice(base.length);
  navigate(`/login?expired=1&next=${encodeURIComponent(here)}`, true);
});

async function boot() {
  try {
    setSession(await api('GET', '/api/admin/session'));
  } catch {
    setSession(null);
  }
  await render();
}

void boot();
