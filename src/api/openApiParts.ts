import { z } from 'zod';
import { CSRF_HEADER } from './adminAuth.js';
import { envelopeSchema } from './envelope.js';
import { LOCAL_COOKIE, SECURE_COOKIE } from './sessionCookie.js';

/**
 * Building blocks of the OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0): JSON Schemas come from the
 * zod schemas the routes parse and answer with, so the document cannot describe a field the code does not have.
 */
export type JsonObject = Record<string, unknown>;

/** A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), without the `$schema` key. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  return rest;
}

export const ERROR_SCHEMA_REF = '#/components/schemas/ErrorEnvelope';

/** Shared schemas; operations point at them with `$ref`. */
export const componentSchemas = (): JsonObject => ({
  // The REST envelope of every error (envelope.ts): `{statusCode, message}`, never `data`.
  ErrorEnvelope: jsonSchema(envelopeSchema.omit({ data: true }), 'output'),
});

/** `200` with the REST envelope; `data` is there when the route sends any. */
export function okResponse(description: string, data?: z.ZodType, headers?: JsonObject): JsonObject {
  const schema = z.object({
    statusCode: envelopeSchema.shape.statusCode,
    message: envelopeSchema.shape.message,
    ...(data === undefined ? {} : { data }),
  });
  return {
    description,
    ...(headers === undefined ? {} : { headers }),
    content: { 'application/json': { schema: jsonSchema(schema, 'output') } },
  };
}

export function pathParameter(name: string, schema: JsonObject = { type: 'string' }): JsonObject {
  return { name, in: 'path', required: true, schema };
}

/** One query parameter per key of the schema a route parses its query with. */
export function queryParameters(schema: z.ZodObject): JsonObject[] {
  return Object.entries(schema.shape).map(([name, s]) => ({
    name,
    in: 'query',
    required: !(s as z.ZodType).safeParse(undefined).success,
    schema: jsonSchema(s as z.ZodType, 'input'),
  }));
}

/** Status → when the route answers it. Merged per status, since one status often has several causes. */
export type ErrorCases = Readonly<Record<string, string>>;

export function errorResponses(...cases: readonly ErrorCases[]): Record<string, JsonObject> {
  const merged = new Map<string, string[]>();
  for (const set of cases) {
    for (const [status, when] of Object.entries(set)) merged.set(status, [...(merged.get(status) ?? []), when]);
  }
  const sorted = [...merged].sort(([a], [b]) => a.localeCompare(b));
  return Object.fromEntries(
    sorted.map(([status, whens]) => [
      status,
      { description: whens.join('; '), content: { 'application/json': { schema: { $ref: ERROR_SCHEMA_REF } } } },
    ]),
  );
}

/** Every REST route: an unexpected fault (a bug, storage down) is logged and answered without details. */
export const INTERNAL_ERROR: ErrorCases = { '500': 'Internal server error (details only in the server log)' };

/**
 * Fastify parses the body of every POST, PATCH and DELETE before the handler runs (jsonBodyParser.ts), so these
 * apply even to routes that ignore their body.
 */
export const BODY_ERRORS: ErrorCases = {
  '400': 'Malformed JSON in the body, or a body that is not a JSON object',
  '413': 'Body larger than 64 KiB',
  '415': 'A body whose content type is not application/json (or +json)',
};

/** The security schemes, and the one place their header and cookie names are spelled (imported from the code). */
export const securitySchemes = (): JsonObject => ({
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'An account auth token (`pat.…`, see docs/reference/rest-api.md)',
  },
  authTokenHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'authToken',
    description: "The spec's header for an account auth token; the bearer token wins when both are sent",
  },
  apiKeyHeader: { type: 'apiKey', in: 'header', name: 'apiKey', description: 'A dApp API key (`pk.…`)' },
  sessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: SECURE_COOKIE,
    description:
      `The dashboard session, set by POST /api/admin/session (HttpOnly, SameSite=Strict). Named \`${LOCAL_COOKIE}\` ` +
      'instead on a loopback host over plain HTTP. An auth token wins when both are sent.',
  },
  csrfToken: {
    type: 'apiKey',
    in: 'header',
    name: CSRF_HEADER,
    description:
      'Required with the session cookie on POST, PATCH and DELETE: the `csrfToken` of GET or POST ' +
      '/api/admin/session. Such writes are also refused when Origin or Sec-Fetch-Site names another site.',
  },
});

type Requirement = Readonly<Record<string, readonly string[]>>;

/** Admin reads (adminAuth.ts): a token, or the dashboard's cookie. */
export const ACCOUNT_READ: readonly Requirement[] = [
  { bearerAuth: [] },
  { authTokenHeader: [] },
  { sessionCookie: [] },
];
/** Admin writes: a token, or the cookie together with the CSRF header. */
export const ACCOUNT_WRITE: readonly Requirement[] = [
  { bearerAuth: [] },
  { authTokenHeader: [] },
  { sessionCookie: [], csrfToken: [] },
];

export const ACCOUNT_READ_ERRORS: ErrorCases = {
  '401': 'No credentials, an unknown or revoked auth token, or an expired session',
};
export const ACCOUNT_WRITE_ERRORS: ErrorCases = {
  ...ACCOUNT_READ_ERRORS,
  '403': 'Session-cookie write without a valid x-csrf-token, or sent from another origin',
};
