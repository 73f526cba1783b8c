// @ts-check
import { api } from './api.js';
import { announce, busy, clear, formatTime, h, notice, roleAllows, secretOnce, title } from './dom.js';

/**
 * The team (docs/guides/dashboard.md, "Team and roles"): every member sees who is in it and with which role; an
 * owner adds members (their first password shown once), changes roles and removes members. The server keeps the
 * last owner and refuses everything else below the owner role.
 * @param {HTMLElement} main @param {import('./app.js').PageContext} ctx
 */
export async function renderTeam(main, ctx) {
  const me = ctx.session?.member;
  const isOwner = roleAllows(me?.role, 'owner');
  const out = h('div', { className: 'messages' });
  const listBox = h('div');
  const newBox = h('div');
  const ROLES = ['viewer', 'operator', 'owner'];

  /** @param {import('./app.js').Member} m */
  const row = (m) => {
    const you = m.memberId === me?.memberId ? ' (you)' : '';
    const select = /** @type {HTMLSelectElement} */ (
      h(
        'select',
        { 'aria-label': `Role of ${m.email}`, 'data-needs': 'owner' },
        ROLES.map((r) => h('option', { value: r, selected: r === m.role }, r)),
      )
    );
    select.value = m.role;
    const save = h('button', { type: 'button', className: 'secondary', 'data-needs': 'owner' }, 'Change role');
    save.addEventListener('click', () =>
      busy(save, out, async () => {
        await api('PATCH', `/api/admin/members/${encodeURIComponent(m.memberId)}`, { role: select.value });
        clear(out).append(notice('ok', `${m.email} is now ${select.value}`));
        await load();
      }),
    );
    const remove = h(
      'button',
      { type: 'button', className: 'danger', 'aria-label': `Remove ${m.email}`, 'data-needs': 'owner' },
      'Remove',
    );
    remove.addEventListener('click', () => {
      if (!confirm(`Remove ${m.email} from the team? Their auth tokens stop working and their sessions end.`)) return;
      void busy(remove, out, async () => {
        await api('DELETE', `/api/admin/members/${encodeURIComponent(m.memberId)}`);
        clear(out).append(notice('ok', `Removed ${m.email}`));
        await load();
      });
    });
    return h(
      'tr',
      { 'data-member': m.email },
      h('td', null, `${m.email}${you}`),
      h('td', { className: 'role' }, m.role),
      h('td', null, formatTime(m.createdAt)),
      h('td', null, isOwner ? [select, ' ', save, ' ', remove] : ''),
    );
  };

  const load = async () => {
    /** @type {import('./app.js').Member[]} */
    const members = await api('GET', '/api/admin/members');
    clear(listBox).append(
      h(
        'div',
        { className: 'table-wrap' },
        h(
          'table',
          { id: 'members' },
          h('caption', { className: 'visually-hidden' }, 'Team members'),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              h('th', { scope: 'col' }, 'Email'),
              h('th', { scope: 'col' }, 'Role'),
              h('th', { scope: 'col' }, 'Member since'),
              h('th', { scope: 'col' }, h('span', { className: 'visually-hidden' }, 'Actions')),
            ),
          ),
          h('tbody', null, members.map(row)),
        ),
      ),
    );
  };

  const email = /** @type {HTMLInputElement} */ (
    h('input', { id: 'member-email', name: 'email', type: 'email', required: true, maxlength: '254' })
  );
  const role = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { id: 'member-role', name: 'role' },
      ROLES.map((r) => h('option', { value: r }, r)),
    )
  );
  role.value = 'viewer';
  const add = h('button', { type: 'submit', 'data-needs': 'owner' }, 'Add member');
  const form = h(
    'form',
    {
      className: 'row-form',
      'data-needs': 'owner',
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        void busy(add, out, async () => {
          const created = await api('POST', '/api/admin/members', { email: email.value.trim(), role: role.value });
          email.value = '';
          clear(out);
          clear(newBox).append(
            secretOnce({
              title: `First password of ${created.email}`,
              secret: created.initialPassword,
              hint: 'Hand it over now: Patron stores only a hash and will never show it again.',
              onDone: () => {
                clear(newBox);
                announce('Password hidden');
              },
            }),
          );
          await load();
        });
      },
    },
    h('label', { for: 'member-email' }, 'Email'),
    email,
    h('label', { for: 'member-role' }, 'Role'),
    role,
    add,
  );

  await load();
  main.append(
    title('Team'),
    h(
      'p',
      null,
      `You are ${me?.role ?? 'a member'} of this team. Viewers read; operators change policies, limits, webhooks and settings; owners also manage the team, dApps and secrets.`,
    ),
    out,
    listBox,
    ...(isOwner ? [h('h2', null, 'Add a member'), form, newBox] : []),
  );
}
