// @ts-check
import { ApiError, api } from './api.js';
import { busy, clear, h, notice, title } from './dom.js';

/** Sign-in with email and password. @param {HTMLElement} main @param {import('./app.js').PageContext} ctx */
export function renderLogin(main, ctx) {
  const out = h('div', { className: 'messages' });
  if (ctx.search.get('expired') === '1') out.append(notice('warn', 'Your session has expired. Sign in again.'));
  if (ctx.search.get('signedOut') === '1') out.append(notice('ok', 'You are signed out.'));
  const email = /** @type {HTMLInputElement} */ (
    h('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'username', required: true })
  );
  const password = /** @type {HTMLInputElement} */ (
    h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true })
  );
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    {
      className: 'card narrow',
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        void busy(submit, out, async () => {
          try {
            const s = await api('POST', '/api/admin/session', { email: email.value, password: password.value });
            ctx.setSession(s);
            const next = ctx.search.get('next');
            ctx.navigate(next?.startsWith('/') && !next.startsWith('//') && next !== '/login' ? next : '/dapps', true);
          } catch (err) {
            password.value = '';
            if (err instanceof ApiError && err.status === 429) {
              clear(out).append(notice('error', err.message));
            } else {
              throw err;
            }
          }
        });
      },
    },
    h('label', { for: 'email' }, 'Email'),
    email,
    h('label', { for: 'password' }, 'Password'),
    password,
    submit,
    h(
      'p',
      { className: 'hint' },
      'Set or reset a password with ',
      h('code', null, 'patron account set-password --email …'),
      '.',
    ),
  );
  main.append(title('Sign in to Patron'), out, form);
  if (ctx.session !== null) ctx.navigate('/dapps', true);
}
