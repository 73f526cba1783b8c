import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { z } from 'zod';
import { chainsAnswer, healthzAnswer, notReadyAnswer, readyzAnswer } from '../src/api/health.js';
import { httpChainRuntime } from '../src/chain/chainRegistry.js';
import { LOCAL_ORIGIN, setTenantPassword, signIn } from './helpers/dashboardSession.js';
import { createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * /openapi.json against the app itself: every route the app registers is documented (or excluded below, with
 * the reason), nothing documented is missing from the app, every reference resolves, and the statuses real
 * requests get are among those documented for their operation.
 */

/** Anything that looks like a stack frame, a source path or a serialised Error. */
const STACK_TRACE = /\n\s*at\s|\bat .+:\d+:\d+|file:\/\/|\/work\/|node_modules|\.[cm]?[jt]s:\d+|"stack"/;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const operationSchema = z.looseObject({
  operationId: z.string().min(1),
  summary: z.string().min(1),
  responses: z.record(z.string(), z.looseObject({ description: z.string().min(1) })),
  security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
  parameters: z
    .array(
      z.looseObject({
        name: z.string(),
        in: z.enum(['path', 'query', 'header', 'cookie']),
        required: z.boolean().optional(),
      }),
    )
    .optional(),
});
type Operation = z.infer<typeof operationSchema>;

const documentSchema = z.object({
  openapi: z.string().regex(/^3\.1\.\d+$/),
  info: z.looseObject({ title: z.string().min(1), version: z.string().min(1) }),
  paths: z.record(z.string().startsWith('/'), z.partialRecord(z.enum(METHODS), operationSchema)),
  components: z.looseObject({
    securitySchemes: z.record(
      z.string(),
      z.union([
        z.looseObject({ type: z.literal('http'), scheme: z.string() }),
        z.looseObject({ type: z.literal('apiKey'), in: z.enum(['header', 'query', 'cookie']), name: z.string() }),
      ]),
    ),
    schemas: z.record(z.string(), z.unknown()).optional(),
  }),
});
type OpenApiDocument = z.infer<typeof documentSchema>;

async function fetchDocument(app: FastifyInstance): Promise<{ raw: unknown; doc: OpenApiDocument }> {
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.doesNotMatch(res.body, STACK_TRACE);
  const raw: unknown = JSON.parse(res.body);
  return { raw, doc: documentSchema.parse(raw) };
}

function operations(doc: OpenApiDocument): Array<{ method: string; path: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).flatMap(([method, op]) => (op === undefined ? [] : [{ method, path, op }])),
  );
}

/** Fastify's `:param` is OpenAPI's `{param}`. */
const toOpenApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/**
 * Builds a test app while recording every route it registers. Fastify publishes each new instance on the
 * `fastify.initialization` diagnostics channel before createApp adds a single route, so an onRoute hook added
 * there sees all of them, those of encapsulated plugins (the JSON-RPC scopes) included.
 */
async function createRecordedContext(): Promise<{ ctx: TestContext; routes: Set<string> }> {
  const routes = new Set<string>();
  const onInit = (message: unknown) => {
    const { fastify } = message as { fastify: FastifyInstance };
    fastify.addHook('onRoute', (route: RouteOptions) => {
      for (const m of [route.method].flat()) routes.add(`${m.toUpperCase()} ${toOpenApiPath(route.url)}`);
    });
  };
  subscribe('fastify.initialization', onInit);
  try {
    return { ctx: await createTestContext(), routes };
  } finally {
    unsubscribe('fastify.initialization', onInit);
  }
}

describe('/openapi.json', () => {
  let ctx: TestContext;
  let routes: Set<string>;
  let doc: OpenApiDocument;
  let raw: unknown;
  before(async () => {
    ({ ctx, routes } = await createRecordedContext());
    ({ doc, raw } = await fetchDocument(ctx.app));
  });
  after(async () => {
    await ctx.close();
  });

  test('documents every route the app registers, and only those', () => {
    const base = ctx.deps.config.dashboard.basePath;
    const escapedBase = base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const dashboardRoute = new RegExp(`^GET ${escapedBase}(/.*)?$`);
    /** Registered but deliberately not in the document; each entry must still match a registered route. */
    const excluded: Array<{ matches: (route: string) => boolean; why: string }> = [
      // Fastify adds a HEAD twin of every GET (exposeHeadRoutes); the GET documents it. A HEAD route of its own
      // (no GET beside it) is not excluded.
      { matches: (r) => r.startsWith('HEAD ') && routes.has(`GET ${r.slice(5)}`), why: 'automatic HEAD of a GET' },
      // The dashboard's HTML page and static assets (`{base}`, `{base}/assets/{file}`, `{base}/*`): a web UI, not
      // an API; the page itself only calls the documented admin routes.
      { matches: (r) => dashboardRoute.test(r), why: 'dashboard page and assets' },
      // The CORS preflight of the paymaster URLs (browsers send it before a POST with an Authorization header);
      // the POST beside it is documented.
      {
        matches: (r) => r.startsWith('OPTIONS /api/v') && routes.has(`POST ${r.slice(8)}`),
        why: 'CORS preflight of a paymaster URL',
      },
      // The CORS preflight of the MEE sponsor URLs (abstractjs's calls carry customHeaders); the GET and POST are documented.
      { matches: (r) => r === 'OPTIONS /mee/{dappId}/v1/sponsorship/*', why: 'CORS preflight of the MEE sponsor URLs' },
    ];
    const documented = new Set(operations(doc).map(({ method, path }) => `${method.toUpperCase()} ${path}`));
    // The recorder works: plain routes and those inside encapsulated plugins are both seen.
    assert.ok(routes.has('GET /healthz') && routes.has('POST /api/v1/{chainId}/{apiKey}'), [...routes].join('\n'));

    const isExcluded = (r: string) => excluded.some((e) => e.matches(r));
    const undocumented = [...routes].filter((r) => !documented.has(r) && !isExcluded(r)).sort();
    assert.deepEqual(undocumented, [], 'routes the app registers that /openapi.json lacks');
    const phantom = [...documented].filter((r) => !routes.has(r)).sort();
    assert.deepEqual(phantom, [], 'operations in /openapi.json the app does not register');
    for (const e of excluded) {
      assert.ok(
        [...routes].some((r) => e.matches(r)),
        `exclusion "${e.why}" matches no route: drop it`,
      );
      assert.ok(![...documented].some((r) => e.matches(r)), `exclusion "${e.why}" hides a documented route`);
    }
  });

  // Moved from test/adminApi.test.ts, with the same assertions.
  test('is an OpenAPI 3.1 document with the webhook and admin paths', () => {
    const methodsOf = (path: string) => Object.keys(doc.paths[path] ?? {}).sort();
    assert.deepEqual(methodsOf('/api/v2/public/sdk/webhookParameters'), ['delete', 'get', 'patch', 'post']);
    assert.deepEqual(methodsOf('/api/admin/account'), ['get']);
    assert.deepEqual(methodsOf('/api/admin/tokens'), ['get', 'post']);
    assert.deepEqual(methodsOf('/api/admin/tokens/{tokenId}'), ['delete']);
    assert.deepEqual(methodsOf('/api/admin/dapps'), ['get', 'post']);
    assert.deepEqual(methodsOf('/api/admin/dapps/{dappId}'), ['get', 'patch']);
    assert.deepEqual(methodsOf('/api/admin/dapps/{dappId}/rotate-key'), ['post']);
    assert.deepEqual(methodsOf('/api/admin/session'), ['delete', 'get', 'post']);
    assert.deepEqual(methodsOf('/api/admin/request-log'), ['get']);
    assert.deepEqual(methodsOf('/api/admin/request-log/stats'), ['get']);
    assert.deepEqual(methodsOf('/api/admin/paymaster-status'), ['get']);
    for (const { method, path, op } of operations(doc)) {
      assert.ok(Object.keys(op.responses).length > 0, `${method} ${path} has responses`);
      for (const status of Object.keys(op.responses)) assert.match(status, /^[1-5]\d\d$/);
    }
    const ids = operations(doc).map(({ op }) => op.operationId);
    assert.deepEqual(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
      'operationIds are unique',
    );
  });

  test('secures every admin operation; sign-in alone is open, and says so', () => {
    for (const { method, path, op } of operations(doc)) {
      if (!path.startsWith('/api/admin/')) continue;
      if (method === 'post' && path === '/api/admin/session') {
        assert.deepEqual(op.security, [], 'sign-in declares `security: []`');
        continue;
      }
      assert.ok(op.security !== undefined && op.security.length > 0, `${method} ${path} is secured`);
      // A cookie-authenticated write needs the CSRF header too.
      if (method !== 'get') {
        for (const requirement of op.security) {
          if ('sessionCookie' in requirement) assert.ok('csrfToken' in requirement, `${method} ${path}: CSRF`);
        }
      }
    }
    const spec = doc.paths['/api/v2/public/sdk/webhookParameters'] ?? {};
    for (const op of Object.values(spec)) assert.deepEqual(op?.security, [{ authTokenHeader: [], apiKeyHeader: [] }]);
  });

  test('every $ref and every security requirement resolves; every scheme is used', () => {
    const refs: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) for (const x of v) walk(x);
      else if (typeof v === 'object' && v !== null) {
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref') refs.push(String(x));
          else walk(x);
        }
      }
    };
    walk(raw);
    assert.ok(refs.length > 0);
    const resolve = (ref: string): unknown => {
      assert.ok(ref.startsWith('#/'), `${ref} is local to the document`);
      const keys = ref
        .slice(2)
        .split('/')
        .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
      return keys.reduce<unknown>(
        (at, k) => (typeof at === 'object' && at !== null ? Reflect.get(at, k) : undefined),
        raw,
      );
    };
    for (const ref of new Set(refs)) assert.notEqual(resolve(ref), undefined, `${ref} resolves`);

    const schemes = doc.components.securitySchemes;
    const used = new Set<string>();
    for (const { method, path, op } of operations(doc)) {
      for (const requirement of op.security ?? []) {
        for (const name of Object.keys(requirement)) {
          assert.ok(name in schemes, `${method} ${path}: security scheme ${name} is declared`);
          used.add(name);
        }
      }
    }
    assert.deepEqual(Object.keys(schemes).sort(), [...used].sort(), 'every declared scheme is used');
  });

  // Moved from test/adminApi.test.ts.
  test('declares every path template variable as a path parameter, and webhookId as a string', () => {
    const missing: string[] = [];
    for (const { method, path, op } of operations(doc)) {
      for (const [, v] of path.matchAll(/\{([^}]+)\}/g)) {
        const p = (op.parameters ?? []).find((x) => x.in === 'path' && x.name === v);
        if (p === undefined || p.required !== true) missing.push(`${method} ${path}: {${v}}`);
      }
    }
    assert.deepEqual(missing, []);
    const webhookId = doc.paths['/api/v2/public/sdk/webhookParameters']?.get?.parameters?.find(
      (p) => p.name === 'webhookId',
    );
    assert.deepEqual(webhookId?.schema, { type: 'string' });
  });
});

describe('/openapi.json: the statuses requests really get are documented', () => {
  let ctx: TestContext;
  let doc: OpenApiDocument;
  let tenant: Tenant;
  before(async () => {
    ctx = await createTestContext();
    ({ doc } = await fetchDocument(ctx.app));
    tenant = await createTenant(ctx.deps);
    await setTenantPassword(ctx.deps, tenant);
  });
  after(async () => {
    await ctx.close();
  });

  /** The path with the tenant's dApp and API key, and ids nothing has. */
  const urlOf = (path: string) => {
    const values: Record<string, string> = {
      dappId: tenant.dappId,
      webhookId: randomUUID(),
      tokenId: randomUUID(),
      chainId: '31337',
      apiKey: tenant.apiKey,
    };
    return path.replace(/\{([^}]+)\}/g, (_m, name: string) => values[name] ?? 'x');
  };

  /** Every documented operation, called with `headers` and (on writes) an empty JSON object. */
  async function callEach(headers: Record<string, string>): Promise<string[]> {
    const undocumented: string[] = [];
    for (const { method, path, op } of operations(doc)) {
      const url = urlOf(path);
      const write = method !== 'get';
      const res = await ctx.app.inject({
        method: method.toUpperCase() as 'GET',
        url,
        headers: { ...headers, ...(write ? { 'content-type': 'application/json' } : {}) },
        ...(write ? { payload: '{}' } : {}),
      });
      const documented = Object.keys(op.responses);
      if (!documented.includes(String(res.statusCode))) {
        undocumented.push(
          `${method} ${path} answered ${res.statusCode} (documented: ${documented.join(', ')}): ${res.body}`,
        );
      }
    }
    return undocumented;
  }

  test('without credentials', async () => {
    assert.deepEqual(await callEach({}), []);
  });

  test('with the spec credential headers', async () => {
    assert.deepEqual(await callEach({ authToken: tenant.authToken, apiKey: tenant.apiKey }), []);
  });

  test('with an auth token', async () => {
    assert.deepEqual(await callEach({ authorization: `Bearer ${tenant.authToken}` }), []);
  });

  test('with a session cookie but no CSRF token, and from another origin', async () => {
    const session = await signIn(ctx.app, tenant.email);
    assert.deepEqual(await callEach({ cookie: session.cookie, origin: LOCAL_ORIGIN }), []);
    assert.deepEqual(await callEach({ cookie: session.cookie, origin: 'https://evil.example' }), []);
  });

  test('a body of the wrong type and an oversized one', async () => {
    const undocumented: string[] = [];
    for (const { method, path, op } of operations(doc)) {
      if (method === 'get') continue;
      for (const [type, payload] of [
        ['text/plain', 'x'],
        ['application/json', `"${'x'.repeat(600 * 1024)}"`],
      ] as const) {
        const res = await ctx.app.inject({
          method: method.toUpperCase() as 'POST',
          url: urlOf(path),
          headers: { 'content-type': type },
          payload,
        });
        if (!(String(res.statusCode) in op.responses))
          undocumented.push(`${method} ${path} ${type}: ${res.statusCode}`);
      }
    }
    assert.deepEqual(undocumented, []);
  });
});

describe('/openapi.json: the health answers match their documented schemas', () => {
  test('/healthz, /readyz (ready and not), /api/chains', async () => {
    const ctx = await createTestContext({
      // Never contacted: listing chains reads configuration only.
      chains: [
        httpChainRuntime({
          chainId: 8453,
          entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789',
          paymaster: '0x1111111111111111111111111111111111111111',
          rpcUrl: 'http://127.0.0.1:9/',
        }),
      ],
    });
    try {
      const get = async (url: string) => (await ctx.app.inject({ method: 'GET', url })).json();
      healthzAnswer.parse(await get('/healthz'));
      readyzAnswer.parse(await get('/readyz'));
      chainsAnswer.parse(await get('/api/chains'));
      await ctx.deps.store.close();
      notReadyAnswer.parse(await get('/readyz'));
    } finally {
      await ctx.app.close();
    }
  });
});
