import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { auditEntry } from '../accounts/auditEntry.js';
import { ForbiddenError } from '../errors/PatronError.js';
import { parseInput } from '../errors/parseInput.js';
import { type MemberRecord, type MemberRole, roleAtLeast } from '../store/records.js';
import { sendOk } from './envelope.js';
import { bodyObject } from './jsonBodyParser.js';
import type { ErrorCases, JsonObject } from './openApiParts.js';
import { type AuthContexts, type AuthKind, authenticators, hasMember, type RouteAuthDeps } from './routeAuth.js';
import { ROUTE_ROLES } from './routeRoles.js';

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

/**
 * How a route's change is written to the audit log (docs/guides/dashboard.md, "Audit log"): right after the handler
 * succeeds and before the answer is sent, with the handler's answer as `after` (secrets redacted). A handler that
 * fails changed nothing and writes no row. `inTransaction`: the service writes the row itself, in the change's own
 * transaction (the team's changes, accounts/memberService.ts).
 */
export type AuditSpec<C> =
  | {
      /** What was done, `<thing>.<verb>` (`policy.update`). */
      readonly action: string;
      /** The document before the change (what the matching GET answers); absent for a creation. */
      readonly before?: (ctx: C) => Promise<unknown>;
      /** The document after the change, when the answer does not hold it (read again after the handler). */
      readonly after?: (ctx: C) => Promise<unknown>;
      /** The changed thing's id when the path's last variable does not name it (a creation: from the answer). */
      readonly target?: (ctx: C, after: unknown) => string | undefined;
    }
  | 'inTransaction';

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
  /** Required on every write of a route with a member behind it (auth `account` or `dappPair`). */
  readonly audit?: AuditSpec<HandlerContext<A, P, Q, B>>;
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
  /** The least role of the member calling it (routeRoles.ts); undefined for routes with no member behind them. */
  readonly role: MemberRole | undefined;
  /** The audit action of a write ('inTransaction' when its service writes it); undefined for reads. */
  readonly auditAction: string | undefined;
  /** Authenticates, parses, runs the handler and answers. */
  readonly run: (req: FastifyRequest, reply: FastifyReply, deps: RouteAuthDeps) => Promise<unknown>;
}

const pathVariables = (path: string) => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] ?? '');

/** An audit `target` read from the answer: the id a creation answers with (`answerId('policyId')`). */
export const answerId =
  (field: string) =>
  (_ctx: unknown, after: unknown): string | undefined => {
    const v: unknown =
      typeof after === 'object' && after !== null ? Object.getOwnPropertyDescriptor(after, field)?.value : undefined;
    return typeof v === 'string' ? v : undefined;
  };

/** What the caller of a route with a member behind it carries (routeAuth.ts). */
interface MemberCaller {
  readonly member?: MemberRecord;
  readonly actor?: Parameters<typeof auditEntry>[0]['actor'];
  readonly dapp?: { readonly id: string };
}

const ROLE_NAMES: Readonly<Record<MemberRole, string>> = {
  viewer: 'a viewer',
  operator: 'an operator',
  owner: 'an owner',
};

/** The one role check of the admin API: 403 in the envelope, naming the role needed and the caller's. */
function assertRole(member: MemberRecord | undefined, needed: MemberRole, what: string): void {
  if (member === undefined) throw new Error(`${what}: no member to check the role of`);
  if (!roleAtLeast(member.role, needed)) {
    throw new ForbiddenError(
      `${what} needs the ${needed} role or higher: you are ${ROLE_NAMES[member.role]} of this team`,
    );
  }
}

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
  const what = `${spec.method} ${spec.path}`;
  const role = hasMember(spec.auth) ? ROUTE_ROLES[spec.operationId] : undefined;
  if (hasMember(spec.auth) && role === undefined) {
    throw new Error(`${what}: no role declared for ${spec.operationId} in src/api/routeRoles.ts`);
  }
  const write = spec.method !== 'GET';
  if (hasMember(spec.auth) && write && spec.audit === undefined) {
    throw new Error(`${what}: a write must declare how its change is audited (audit)`);
  }
  const audit = write ? spec.audit : undefined;
  const lastVariable = pathVariables(spec.path).at(-1);
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
    role,
    auditAction: audit === undefined ? undefined : audit === 'inTransaction' ? audit : audit.action,
    async run(req, reply, deps) {
      const caller = await authenticate(req, deps);
      const who: MemberCaller = 'actor' in caller ? caller : {};
      if (role !== undefined) assertRole(who.member, role, what);
      const ctx: HandlerContext<A, P, Q, B> = {
        ...caller,
        req,
        reply,
        params: parse<Out<P>>(spec.params, () => req.params),
        query: parse<Out<Q>>(spec.query, () => req.query),
        body: parse<Out<B>>(spec.body, () => bodyObject(req.body)),
      };
      const before = typeof audit === 'object' && audit.before !== undefined ? await audit.before(ctx) : undefined;
      const result = await spec.handler(ctx);
      if (typeof audit === 'object' && who.actor !== undefined) {
        const after = audit.after !== undefined ? await audit.after(ctx) : result === reply ? undefined : result;
        const params: Readonly<Record<string, unknown>> = ctx.params ?? {};
        const named = lastVariable === undefined ? undefined : params[lastVariable];
        const dappId = typeof params.dappId === 'string' ? params.dappId : who.dapp?.id;
        // Written after the change committed, before the answer: a failed write answers 500 (and is logged) though
        // the change stands; the changes' repositories each own their transaction (the team's write theirs here).
        await deps.store.auditLog.insert(
          auditEntry({
            actor: who.actor,
            action: audit.action,
            dappId,
            targetId: audit.target?.(ctx, after) ?? (typeof named === 'string' ? named : undefined),
            before,
            after,
            at: deps.now(),
          }),
        );
      }
      if (result === reply || 'raw' in spec.answer) return result;
      if ('file' in spec.answer) throw new Error(`${spec.method} ${spec.path}: a file answer must send the reply`);
      return sendOk(reply, spec.answer.envelope, result);
    },
  };
}
