import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { parseInput } from '../errors/parseInput.js';
import { sendOk } from './envelope.js';
import { bodyObject } from './jsonBodyParser.js';
import type { ErrorCases, JsonObject } from './openApiParts.js';
import { type AuthContexts, type AuthKind, authenticators, type RouteAuthDeps } from './routeAuth.js';

/**
 * A REST route, declared once (docs/architecture "Where the structure goes next", item 1): the declaration
 * drives the authentication (routeAuth.ts), the parsing of params, query and body through `parseInput` (so the
 * messages are the schemas' own), the envelope (`sendOk`), the OpenAPI operation (openApiRoutes.ts) and the
 * credential and CSRF test that runs every declared route (test/adminRoutes.auth.test.ts).
 *
 * The order is fixed for every route: authenticate, then params, query, body, then the handler. Credentials
 * are therefore checked before any input is read (a caller without them learns nothing about the schema).
 */
/** PUT replaces a whole sub-document (a dApp's caller restrictions); PATCH changes the fields it names. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;
/**
 * The 200 answer's data; or the reply itself, when the handler answered on its own with another status (readyz's
 * 503, documented in `otherResponses`).
 */
type HandlerResult<R> = (R extends z.ZodType ? z.input<R> : undefined) | FastifyReply;

/** The 200 answer: the envelope `{statusCode, message, data?}`, or (service routes) a plain JSON body. */
export type Answer<R extends z.ZodType | undefined> =
  | { readonly envelope: string; readonly data?: R; readonly headers?: JsonObject }
  | { readonly raw: R & z.ZodType; readonly description: string }
  /** A body that is not JSON (a CSV export), streamed by the handler, which answers on its own (returns the reply). */
  | { readonly file: { readonly contentType: string; readonly description: string; readonly headers?: JsonObject } };

export type HandlerContext<A extends AuthKind, P, Q, B> = AuthContexts[A] & {
  readonly req: FastifyRequest;
  readonly reply: FastifyReply;
  readonly params: Out<P>;
  readonly query: Out<Q>;
  readonly body: Out<B>;
};

export interface RouteSpec<
  A extends AuthKind,
  P extends z.ZodObject | undefined,
  Q extends z.ZodObject | undefined,
  B extends z.ZodType | undefined,
  R extends z.ZodType | undefined,
> {
  readonly method: HttpMethod;
  /** Fastify's syntax (`:dappId`); every variable must be a key of `params`. */
  readonly path: string;
  readonly auth: A;
  readonly operationId: string;
  readonly summary: string;
  readonly tag: string;
  readonly description?: string;
  readonly params?: P;
  readonly query?: Q;
  readonly body?: B;
  /**
   * A body documented but handed to the handler unparsed (only sign-in: its budget is spent on the raw email
   * before the body is validated, so a malformed body still counts against it).
   */
  readonly unparsedBody?: z.ZodType;
  /** A valid body: shown in the document, and used by the auth test to reach the ownership check. */
  readonly example?: unknown;
  readonly answer: Answer<R>;
  /** Status → when this route answers it, besides what its auth kind and the body parser already add. */
  readonly errors?: ErrorCases;
  /** Response headers of an error status (Retry-After on 429). */
  readonly errorHeaders?: Readonly<Record<string, JsonObject>>;
  /** Responses of a raw route other than 200 (readyz's 503), as OpenAPI response objects. */
  readonly otherResponses?: Readonly<Record<string, JsonObject>>;
  readonly handler: (ctx: HandlerContext<A, P, Q, B>) => Promise<HandlerResult<R>>;
}

/** A declaration with its types erased, as the registry, the document and the tests see it. */
export interface RouteDef {
  readonly method: HttpMethod;
  readonly path: string;
  readonly auth: AuthKind;
  readonly operationId: string;
  readonly summary: string;
  readonly tag: string;
  readonly description: string | undefined;
  readonly params: z.ZodObject | undefined;
  readonly query: z.ZodObject | undefined;
  readonly body: z.ZodType | undefined;
  readonly unparsedBody: z.ZodType | undefined;
  readonly example: unknown;
  readonly answer: Answer<z.ZodType | undefined>;
  readonly errors: ErrorCases;
  readonly errorHeaders: Readonly<Record<string, JsonObject>>;
  readonly otherResponses: Readonly<Record<string, JsonObject>>;
  /** Authenticates, parses, runs the handler and answers. */
  readonly run: (req: FastifyRequest, reply: FastifyReply, deps: RouteAuthDeps) => Promise<unknown>;
}

const pathVariables = (path: string) => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] ?? '');

export function route<
  A extends AuthKind,
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R extends z.ZodType | undefined = undefined,
>(spec: RouteSpec<A, P, Q, B, R>): RouteDef {
  // A mismatch is a programming error: fail at start-up, not on the first request.
  const declared = Object.keys(spec.params?.shape ?? {}).sort();
  if (pathVariables(spec.path).sort().join() !== declared.join()) {
    throw new Error(`${spec.method} ${spec.path}: params must declare exactly the path variables`);
  }
  // The cast ties the value to its declared schema's type: absent schema, absent value.
  const parse = <T>(schema: z.ZodType | undefined, value: () => unknown): T =>
    (schema === undefined ? undefined : parseInput(schema, value())) as T;
  const authenticate = authenticators[spec.auth];
  return {
    method: spec.method,
    path: spec.path,
    auth: spec.auth,
    operationId: spec.operationId,
    summary: spec.summary,
    tag: spec.tag,
    description: spec.description,
    params: spec.params,
    query: spec.query,
    body: spec.body,
    unparsedBody: spec.unparsedBody,
    example: spec.example,
    answer: spec.answer,
    errors: spec.errors ?? {},
    errorHeaders: spec.errorHeaders ?? {},
    otherResponses: spec.otherResponses ?? {},
    async run(req, reply, deps) {
      const caller = await authenticate(req, deps);
      const result = await spec.handler({
        ...caller,
        req,
        reply,
        params: parse<Out<P>>(spec.params, () => req.params),
        query: parse<Out<Q>>(spec.query, () => req.query),
        body: parse<Out<B>>(spec.body, () => bodyObject(req.body)),
      });
      if (result === reply || 'raw' in spec.answer) return result;
      if ('file' in spec.answer) throw new Error(`${spec.method} ${spec.path}: a file answer must send the reply`);
      return sendOk(reply, spec.answer.envelope, result);
    },
  };
}
