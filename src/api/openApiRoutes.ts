import type { z } from 'zod';
import {
  ACCOUNT_READ,
  ACCOUNT_READ_ERRORS,
  ACCOUNT_WRITE,
  ACCOUNT_WRITE_ERRORS,
  BODY_ERRORS,
  type ErrorCases,
  errorResponses,
  INTERNAL_ERROR,
  type JsonObject,
  jsonSchema,
  okResponse,
  queryParameters,
} from './openApiParts.js';
import type { RouteDef } from './route.js';
import type { AuthKind } from './routeAuth.js';

/**
 * The OpenAPI 3.1 operations of the declared REST routes (route.ts): security, parameters, body and every
 * status come from the declaration, so the document cannot describe a route other than the one that runs.
 */
type Requirements = readonly Readonly<Record<string, readonly string[]>>[];

const PAIR: Requirements = [{ authTokenHeader: [], apiKeyHeader: [] }];

function security(auth: AuthKind, write: boolean): Requirements | undefined {
  switch (auth) {
    case 'public':
      return undefined;
    // Open: this is how the cookie is obtained. Refused from another origin.
    case 'sameSite':
      return [];
    case 'account':
      return write ? ACCOUNT_WRITE : ACCOUNT_READ;
    case 'dappPair':
      return PAIR;
    case 'session':
      return write ? [{ sessionCookie: [], csrfToken: [] }] : [{ sessionCookie: [] }];
    // `{}`: works without credentials too; with a live session the CSRF header is required.
    case 'optionalSession':
      return [{ sessionCookie: [], csrfToken: [] }, {}];
  }
}

const AUTH_ERRORS: Readonly<Record<AuthKind, (write: boolean) => ErrorCases>> = {
  public: () => ({}),
  sameSite: () => ({ '403': 'Sent from another origin (Origin or Sec-Fetch-Site)' }),
  account: (write) => (write ? ACCOUNT_WRITE_ERRORS : ACCOUNT_READ_ERRORS),
  dappPair: () => ({
    '401': 'A credential header missing or blank, or an unknown token, unknown key, or a key of another account',
  }),
  session: () => ({ '401': 'Not signed in, or the session expired' }),
  optionalSession: () => ({ '403': 'A live session without a valid x-csrf-token, or sent from another origin' }),
};

function parameters(r: RouteDef): JsonObject[] {
  const path = Object.entries(r.params?.shape ?? {}).map(([name, s]) => ({
    name,
    in: 'path',
    required: true,
    schema: jsonSchema(s as z.ZodType, 'input'),
  }));
  return [...path, ...(r.query === undefined ? [] : queryParameters(r.query))];
}

function requestBody(r: RouteDef): JsonObject | undefined {
  const schema = r.body ?? r.unparsedBody;
  if (schema === undefined) return undefined;
  // An absent body is read as `{}` (jsonBodyParser.ts): the body is optional where `{}` is valid, except on a
  // PATCH, which must change at least one field (its service refuses `{}`).
  return {
    required: r.method === 'PATCH' || r.method === 'PUT' || !schema.safeParse({}).success,
    content: {
      'application/json': {
        schema: jsonSchema(schema, 'input'),
        ...(r.example === undefined ? {} : { example: r.example }),
      },
    },
  };
}

/** The role check (route.ts, routeRoles.ts): a member whose role is below the route's least role. */
const roleErrors = (r: RouteDef): ErrorCases =>
  r.role === undefined || r.role === 'viewer'
    ? {}
    : { '403': `The caller's role is below ${r.role} (docs/guides/dashboard.md, "Team and roles")` };

function responses(r: RouteDef): JsonObject {
  const write = r.method !== 'GET';
  if ('file' in r.answer) {
    const { contentType, description, headers } = r.answer.file;
    const ok = {
      description,
      content: { [contentType]: { schema: { type: 'string' } } },
      ...(headers === undefined ? {} : { headers }),
    };
    const errors = errorResponses(AUTH_ERRORS[r.auth](write), r.errors, INTERNAL_ERROR);
    return { '200': ok, ...errors, ...r.otherResponses };
  }
  if ('raw' in r.answer) {
    const ok = {
      description: r.answer.description,
      content: { 'application/json': { schema: jsonSchema(r.answer.raw, 'output') } },
    };
    return { '200': ok, ...errorResponses(AUTH_ERRORS[r.auth](write), r.errors), ...r.otherResponses };
  }
  const errors = errorResponses(
    AUTH_ERRORS[r.auth](write),
    roleErrors(r),
    // Fastify parses the body of every write before the handler runs, even where the route ignores it.
    write ? BODY_ERRORS : {},
    r.errors,
    INTERNAL_ERROR,
  );
  for (const [status, headers] of Object.entries(r.errorHeaders)) {
    const response = errors[status];
    if (response !== undefined) errors[status] = { ...response, headers };
  }
  return { '200': okResponse(r.answer.envelope, r.answer.data, r.answer.headers), ...errors, ...r.otherResponses };
}

export function routeOperation(r: RouteDef): JsonObject {
  const sec = security(r.auth, r.method !== 'GET');
  const params = parameters(r);
  const body = requestBody(r);
  return {
    operationId: r.operationId,
    summary: r.summary,
    ...(r.description === undefined ? {} : { description: r.description }),
    tags: [r.tag],
    // The least role of the team member calling it (src/api/routeRoles.ts), as a vendor extension.
    ...(r.role === undefined ? {} : { 'x-patron-role': r.role }),
    ...(sec === undefined ? {} : { security: sec }),
    ...(params.length === 0 ? {} : { parameters: params }),
    ...(body === undefined ? {} : { requestBody: body }),
    responses: responses(r),
  };
}

/** Fastify's `:param` is OpenAPI's `{param}`. */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** The `paths` object: one entry per path, one operation per declared method. */
export function routePaths(routes: readonly RouteDef[]): Record<string, JsonObject> {
  const paths: Record<string, JsonObject> = {};
  for (const r of routes) {
    const key = openApiPath(r.path);
    const method = r.method.toLowerCase();
    if (paths[key]?.[method] !== undefined) throw new Error(`${r.method} ${r.path} is declared twice`);
    paths[key] = { ...paths[key], [method]: routeOperation(r) };
  }
  return paths;
}
