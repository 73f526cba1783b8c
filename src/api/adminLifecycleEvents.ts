import { z } from 'zod';
import { NotFoundError } from '../errors/PatronError.js';
import type { LifecycleEvents } from '../lifecycleEvents/buildLifecycleEvents.js';
import type { EventEndpointView } from '../lifecycleEvents/eventEndpointService.js';
import type { LifecycleEventRecord } from '../store/events/lifecycleEventRepository.js';
import { ADMIN_TAG } from './adminAccount.js';
import { DAPP_NOT_FOUND, dappParams, idParam } from './adminDapps.js';
import { pageCursor, pageLimit } from './pageQuery.js';
import { type RouteDef, route } from './route.js';

/**
 * The owner's settings and delivery log of a dApp's lifecycle events (docs/guides/lifecycle-events.md), in the admin
 * API: the event endpoint (its signing secret shown when set and on an explicit reveal, never on a read), the
 * delivery log paged by cursor, and the replay of one event. Every route acts on a dApp of the caller's account.
 */
const endpointView = z.object({
  url: z.string(),
  active: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const endpointWithSecret = endpointView.extend({ signingSecret: z.string() });

export const setEventEndpointBody = z.object({
  url: z.string({ error: 'url must be a string' }).min(1, { error: 'url must not be empty' }),
  active: z.boolean({ error: 'active must be a boolean value' }).default(true),
  rotateSecret: z.boolean({ error: 'rotateSecret must be a boolean value' }).default(false),
});

const STATES = ['pending', 'delivered', 'failed'] as const;
export const eventLogQuery = z.object({
  state: z.enum(STATES, { error: 'state must be one of pending, delivered, failed' }).optional(),
  before: pageCursor(/^\d{1,15}$/),
  limit: pageLimit,
});

export const eventView = z.object({
  id: z.string(),
  type: z.string(),
  createdAt: z.string(),
  state: z.enum(STATES),
  attempts: z.number().int(),
  nextAttemptAt: z.string().nullable(),
  lastError: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  // The body as sent (and as a replay sends it again).
  payload: z.unknown(),
});
const eventPage = z.object({ events: z.array(eventView), nextCursor: z.string().nullable() });

const iso = (ms: number) => new Date(ms).toISOString();
const toEndpointView = (e: EventEndpointView) => ({
  url: e.url,
  active: e.active,
  createdAt: iso(e.createdAt),
  updatedAt: iso(e.updatedAt),
});
const toEventView = (e: LifecycleEventRecord): z.infer<typeof eventView> => ({
  id: e.id,
  type: e.type,
  createdAt: iso(e.createdAt),
  state: e.state,
  attempts: e.attempts,
  nextAttemptAt: e.state === 'pending' ? iso(e.nextAttemptAt) : null,
  lastError: e.lastError,
  deliveredAt: e.deliveredAt === null ? null : iso(e.deliveredAt),
  payload: JSON.parse(e.payload) as unknown,
});

const PATH = '/api/admin/dapps/:dappId/event-endpoint';
const ENDPOINT_NOT_FOUND = { '404': "dApp not found (another account's dApp included), or it has no event endpoint" };

export function adminLifecycleEventRoutes(deps: { lifecycleEvents: LifecycleEvents }): RouteDef[] {
  const service = deps.lifecycleEvents.endpoints;
  const common = { auth: 'account', tag: ADMIN_TAG } as const;
  const endpointOf = async (args: { accountId: string; dappId: string }) => {
    await service.assertOwned(args);
    return service.get(args.dappId);
  };
  const currentEndpoint = async ({ account, params }: { account: { id: string }; params: { dappId: string } }) => {
    const found = await endpointOf({ accountId: account.id, dappId: params.dappId });
    return found === undefined ? null : toEndpointView(found);
  };
  return [
    route({
      ...common,
      method: 'GET',
      path: PATH,
      operationId: 'getDappEventEndpoint',
      summary: "Where the dApp's lifecycle events are posted (without the signing secret); null when none is set",
      params: dappParams,
      answer: { envelope: 'Event endpoint fetched', data: endpointView.nullable() },
      errors: DAPP_NOT_FOUND,
      handler: async ({ account, params }) => {
        const found = await endpointOf({ accountId: account.id, dappId: params.dappId });
        return found === undefined ? null : toEndpointView(found);
      },
    }),
    // The tenant webhooks' URL rule (SSRF guard); the secret is kept across changes unless rotateSecret.
    route({
      ...common,
      method: 'POST',
      path: PATH,
      operationId: 'setDappEventEndpoint',
      summary: 'Set the lifecycle-event endpoint; the answer holds its Standard Webhooks signing secret',
      params: dappParams,
      body: setEventEndpointBody,
      example: { url: 'https://hooks.example.com/patron-events', active: true },
      answer: { envelope: 'Event endpoint saved', data: endpointWithSecret },
      errors: { '400': 'url invalid or refused by the SSRF policy, or a flag not a boolean', ...DAPP_NOT_FOUND },
      audit: { action: 'eventEndpoint.set', before: currentEndpoint },
      handler: async ({ account, params, body }) => {
        await service.assertOwned({ accountId: account.id, dappId: params.dappId });
        const saved = await service.set({ dappId: params.dappId, ...body });
        return { ...toEndpointView(saved), signingSecret: saved.signingSecret };
      },
    }),
    route({
      ...common,
      method: 'DELETE',
      path: PATH,
      operationId: 'deleteDappEventEndpoint',
      summary: 'Remove the lifecycle-event endpoint (no new events are written for the dApp)',
      params: dappParams,
      answer: { envelope: 'Event endpoint deleted' },
      errors: DAPP_NOT_FOUND,
      audit: { action: 'eventEndpoint.delete', before: currentEndpoint },
      handler: async ({ account, params }) => {
        await service.assertOwned({ accountId: account.id, dappId: params.dappId });
        await service.remove(params.dappId);
        return undefined;
      },
    }),
    route({
      ...common,
      method: 'POST',
      path: `${PATH}/reveal-secret`,
      operationId: 'revealDappEventEndpointSecret',
      summary: "The event endpoint's signing secret, on explicit request (a POST, so a session needs the CSRF token)",
      params: dappParams,
      answer: { envelope: 'Event endpoint signing secret', data: z.object({ signingSecret: z.string() }) },
      errors: ENDPOINT_NOT_FOUND,
      // Not a change, but who saw a secret is what an audit is asked first; the secret itself is redacted.
      audit: { action: 'eventEndpoint.secret.reveal' },
      handler: async ({ account, params }) => {
        const found = await endpointOf({ accountId: account.id, dappId: params.dappId });
        if (found === undefined) throw new NotFoundError('the dApp has no event endpoint');
        return { signingSecret: found.signingSecret };
      },
    }),
    route({
      ...common,
      method: 'GET',
      path: '/api/admin/dapps/:dappId/events',
      operationId: 'listDappEvents',
      summary: "The dApp's lifecycle events and their delivery, newest first; page with `before` = `nextCursor`",
      params: dappParams,
      query: eventLogQuery,
      answer: { envelope: 'Events fetched', data: eventPage },
      errors: { '400': 'A query parameter is invalid; the message names it', ...DAPP_NOT_FOUND },
      handler: async ({ account, params, query: q }) => {
        await service.assertOwned({ accountId: account.id, dappId: params.dappId });
        const rows = await service.log({
          dappId: params.dappId,
          limit: q.limit,
          beforeSeq: q.before === undefined ? undefined : Number(q.before),
          state: q.state,
        });
        const last = rows.at(-1);
        return {
          events: rows.map(toEventView),
          nextCursor: rows.length === q.limit && last !== undefined ? String(last.seq) : null,
        };
      },
    }),
    route({
      ...common,
      method: 'POST',
      path: '/api/admin/dapps/:dappId/events/:eventId/replay',
      operationId: 'replayDappEvent',
      summary: 'Deliver an event again (same id and body), whatever its state; its attempts start over',
      params: z.object({ dappId: idParam, eventId: z.string().max(64, { error: 'eventId must be an event id' }) }),
      answer: { envelope: 'Event queued for delivery', data: eventView },
      errors: { '404': "dApp or event not found (another account's included)" },
      audit: { action: 'event.replay' },
      handler: async ({ account, params }) => {
        await service.assertOwned({ accountId: account.id, dappId: params.dappId });
        return toEventView(await service.replay(params));
      },
    }),
  ];
}
