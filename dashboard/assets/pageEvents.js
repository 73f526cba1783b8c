// @ts-check
import { api, query } from './api.js';
import { busy, clear, formatTime, h, notice, secretOnce } from './dom.js';

/**
 * @typedef {{url: string, active: boolean, createdAt: string, updatedAt: string}} EventEndpoint
 * @typedef {{id: string, type: string, createdAt: string, state: 'pending' | 'delivered' | 'failed', attempts: number, nextAttemptAt: string | null, lastError: string | null, deliveredAt: string | null}} LifecycleEvent
 */

/**
 * A dApp's lifecycle events (docs/guides/lifecycle-events.md): the event endpoint (set the URL, pause, reveal the
 * signing secret on request, rotate it) and the delivery log (state, attempts, last error) with a Replay button.
 * @param {HTMLElement} root @param {{ dappId: string, out: HTMLElement }} args
 */
export async function renderEvents(root, { dappId, out }) {
  const base = `/api/admin/dapps/${encodeURIComponent(dappId)}`;
  const settings = h('div');
  const secretBox = h('div');
  const log = h('div');

  /** @param {string} secret */
  const showSecret = (secret) =>
    clear(secretBox).append(
      secretOnce({
        title: 'Event endpoint signing secret',
        secret,
        hint: 'Verify each event with it (Standard Webhooks). Store it now: it is not shown again unless you ask.',
        onDone: () => clear(secretBox),
      }),
    );

  const loadEndpoint = async () => {
    /** @type {EventEndpoint | null} */
    const endpoint = await api('GET', `${base}/event-endpoint`);
    const url = /** @type {HTMLInputElement} */ (
      h('input', {
        id: 'event-url',
        type: 'url',
        required: true,
        placeholder: 'https://example.com/patron-events',
        value: endpoint?.url ?? '',
      })
    );
    const save = h('button', { type: 'submit', 'data-needs': 'owner' }, endpoint === null ? 'Set endpoint' : 'Save');
    const form = h(
      'form',
      { id: 'event-endpoint-form', className: 'row' },
      h('label', { for: 'event-url' }, 'Event endpoint URL'),
      url,
      save,
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void busy(save, out, async () => {
        /** @type {EventEndpoint & {signingSecret: string}} */
        const saved = await api('POST', `${base}/event-endpoint`, { url: url.value, active: endpoint?.active ?? true });
        clear(out).append(notice('ok', `Events go to ${saved.url}`));
        if (endpoint === null) showSecret(saved.signingSecret);
        await loadEndpoint();
      });
    });
    const actions = [];
    if (endpoint !== null) {
      const reveal = h(
        'button',
        { type: 'button', className: 'secondary', id: 'event-reveal', 'data-needs': 'owner' },
        'Reveal secret',
      );
      reveal.addEventListener('click', () =>
        busy(reveal, out, async () => {
          /** @type {{signingSecret: string}} */
          const { signingSecret } = await api('POST', `${base}/event-endpoint/reveal-secret`);
          showSecret(signingSecret);
        }),
      );
      const rotate = h(
        'button',
        { type: 'button', className: 'secondary', id: 'event-rotate', 'data-needs': 'owner' },
        'Rotate secret',
      );
      rotate.addEventListener('click', () =>
        busy(rotate, out, async () => {
          if (!window.confirm('Rotate the signing secret? Receivers must switch to the new one.')) return;
          /** @type {{signingSecret: string}} */
          const saved = await api('POST', `${base}/event-endpoint`, {
            url: endpoint.url,
            active: endpoint.active,
            rotateSecret: true,
          });
          clear(out).append(notice('ok', 'A new signing secret is in use'));
          showSecret(saved.signingSecret);
        }),
      );
      actions.push(h('p', { className: 'row' }, endpoint.active ? 'Active' : 'Paused', ' ', reveal, ' ', rotate));
    }
    clear(settings).append(form, ...actions);
  };

  /** @param {LifecycleEvent} e */
  const row = (e) => {
    const replay = h(
      'button',
      { type: 'button', className: 'secondary', 'aria-label': `Replay ${e.id}`, 'data-needs': 'operator' },
      'Replay',
    );
    replay.addEventListener('click', () =>
      busy(replay, out, async () => {
        await api('POST', `${base}/events/${encodeURIComponent(e.id)}/replay`);
        clear(out).append(notice('ok', `${e.type} ${e.id} is sent again`));
        await loadLog();
      }),
    );
    // Each cell's label is its heading on a phone, where the rows are cards (table.cards in style.css).
    return h(
      'tr',
      { 'data-event': e.id },
      h('td', { 'data-label': 'Time' }, formatTime(e.createdAt)),
      h('td', { 'data-label': 'Type' }, h('span', { className: 'mono' }, e.type)),
      h('td', { 'data-label': 'State', className: `state-${e.state}` }, e.state),
      h('td', { 'data-label': 'Attempts' }, String(e.attempts)),
      h('td', { 'data-label': 'Last error' }, e.lastError ?? '—'),
      h('td', null, replay),
    );
  };

  const loadLog = async () => {
    /** @type {{events: LifecycleEvent[], nextCursor: string | null}} */
    const page = await api('GET', `${base}/events${query({ limit: 50 })}`);
    clear(log).append(
      page.events.length === 0
        ? h('p', null, 'No event yet.')
        : h(
            'div',
            { className: 'table-wrap' },
            h(
              'table',
              { id: 'event-log', className: 'cards' },
              h('caption', { className: 'visually-hidden' }, 'Delivery log'),
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  ...['Time', 'Type', 'State', 'Attempts', 'Last error', 'Actions'].map((t) =>
                    h('th', { scope: 'col' }, t),
                  ),
                ),
              ),
              h('tbody', null, page.events.map(row)),
            ),
          ),
    );
  };

  await Promise.all([loadEndpoint(), loadLog()]);
  clear(root).append(h('h2', null, 'Lifecycle events'), settings, secretBox, h('h3', null, 'Delivery log'), log);
}
