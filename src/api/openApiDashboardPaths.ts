import { z } from 'zod';
import { signInInput } from '../accounts/schemas.js';
import { REQUEST_OUTCOMES } from '../store/records.js';
import { paymasterStatusView } from './adminPaymasterStatus.js';
import { requestLogEntryView, requestLogQuery, requestLogStatsQuery } from './adminRequestLog.js';
import { SESSION_PATH, sessionView } from './adminSession.js';
import {
  adminOperation,
  BODY_ERRORS,
  errorResponses,
  INTERNAL_ERROR,
  type JsonObject,
  jsonBody,
  okResponse,
  queryParameters,
} from './openApiParts.js';

/**
 * The admin routes added for the dashboard (README "Dashboard"): its session, the paymaster status and the
 * request log. The request log's answers are built in the route from `requestLogEntryView`; their wrappers are
 * spelled here from the same pieces.
 */
const TAG = 'dashboard';

const requestLogPage = z.object({
  entries: z.array(requestLogEntryView),
  /** `before` of the next page; null on the last one. */
  nextCursor: z.string().nullable(),
});

const requestLogStats = z.object({
  range: requestLogStatsQuery.shape.range,
  bucketMs: z.number().int(),
  // Every bucket of the range, empty ones included; one count per outcome.
  buckets: z.array(
    z.object({ start: z.string(), ...Object.fromEntries(REQUEST_OUTCOMES.map((o) => [o, z.number().int()])) }),
  ),
});

const setCookie = (what: string): JsonObject => ({
  'Set-Cookie': { description: what, schema: { type: 'string' } },
});

const SIGN_IN_ERRORS = errorResponses(
  BODY_ERRORS,
  {
    '400': 'email or password missing or invalid',
    '401': 'Wrong email or password (the same answer for an unknown email)',
    '403': 'Sent from another origin (Origin or Sec-Fetch-Site)',
    '429': 'Too many failed sign-ins for this email: refused, even with the right password, until Retry-After',
  },
  INTERNAL_ERROR,
);
const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds until this email may try again', schema: { type: 'integer' } },
};

const QUERY_ERRORS = { '400': 'A query parameter is invalid; the message names it' };

export const dashboardPaths = (): Record<string, JsonObject> => ({
  [SESSION_PATH]: {
    post: {
      operationId: 'signIn',
      summary: 'Sign in with email and password: sets the session cookie, returns the CSRF token',
      tags: [TAG],
      // Open: this is how the cookie is obtained. Refused from another origin (login CSRF).
      security: [],
      requestBody: jsonBody(signInInput),
      responses: {
        '200': okResponse('Signed in', sessionView, setCookie('The session cookie')),
        ...SIGN_IN_ERRORS,
        '429': { ...SIGN_IN_ERRORS['429'], headers: RETRY_AFTER },
      },
    },
    get: {
      operationId: 'getSession',
      summary: 'Who is signed in, and the CSRF token again (after a page reload)',
      tags: [TAG],
      security: [{ sessionCookie: [] }],
      responses: {
        '200': okResponse('Signed in', sessionView),
        ...errorResponses({ '401': 'Not signed in, or the session expired' }, INTERNAL_ERROR),
      },
    },
    delete: {
      operationId: 'signOut',
      summary: 'Sign out: ends the session and clears the cookie (also answered 200 without a session)',
      tags: [TAG],
      // `{}`: works without credentials too; with a live session the CSRF header is required.
      security: [{ sessionCookie: [], csrfToken: [] }, {}],
      responses: {
        '200': okResponse('Signed out', undefined, setCookie('The session cookie, expired')),
        ...errorResponses(
          BODY_ERRORS,
          { '403': 'A live session without a valid x-csrf-token, or sent from another origin' },
          INTERNAL_ERROR,
        ),
      },
    },
  },
  '/api/admin/paymaster-status': {
    get: adminOperation({
      operationId: 'getPaymasterStatus',
      summary: 'Per served chain: paymaster, EntryPoint deposit and stake, signers, warnings (the same for everyone)',
      tag: TAG,
      write: false,
      ok: okResponse('Paymaster status fetched', paymasterStatusView),
    }),
  },
  '/api/admin/request-log': {
    get: adminOperation({
      operationId: 'listRequestLog',
      summary: "The account's paymaster requests, newest first; page with `before` = the last `nextCursor`",
      tag: TAG,
      write: false,
      parameters: queryParameters(requestLogQuery),
      ok: okResponse('Request log fetched', requestLogPage),
      errors: QUERY_ERRORS,
    }),
  },
  '/api/admin/request-log/stats': {
    get: adminOperation({
      operationId: 'getRequestLogStats',
      summary: 'Counts per outcome per time bucket over the range, for the chart',
      tag: TAG,
      write: false,
      parameters: queryParameters(requestLogStatsQuery),
      ok: okResponse('Request log stats fetched', requestLogStats),
      errors: QUERY_ERRORS,
    }),
  },
});
