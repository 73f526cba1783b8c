import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { eip1193ChainRuntime } from '../chain/chainRegistry.js';
import { DEFAULT_SIGNING_BOUNDS } from '../config/boundsSettings.js';
import {
  callerRestrictionsSchema,
  compileCallerRestrictions,
  NO_CALLER_RESTRICTIONS,
} from '../dappSettings/callerRestrictions.js';
import {
  RateLimitedError,
  SponsorshipDeniedError,
  UnauthorizedError,
  UnavailableError,
} from '../errors/PatronError.js';
import type { SponsorshipService } from '../paymaster/sponsored/sponsorshipService.js';
import type { TokenPaymasterService } from '../paymaster/token/tokenPaymasterService.js';
import type { SponsorshipTokenGate } from '../sponsorshipTokens/sponsorshipTokenGate.js';
import { handleJsonRpc, MAX_BATCH } from './handleJsonRpc.js';
import { defineRpcMethod, type RegisteredMethod, type RpcContext } from './rpcMethod.js';

const echo = defineRpcMethod({
  method: 'test_echo',
  params: z.tuple([z.object({ n: z.number({ error: 'must be a number' }) })]),
  family: () => 'sponsorship',
  handler: async ([p]) => ({ n: p.n }),
  outcome: () => 'quotes',
});
const deny = defineRpcMethod({
  method: 'test_deny',
  params: z.tuple([]),
  family: () => undefined,
  handler: async (): Promise<never> => {
    throw new SponsorshipDeniedError('no');
  },
  outcome: () => 'signs',
});
const boom = defineRpcMethod({
  method: 'test_boom',
  params: z.tuple([]),
  family: () => undefined,
  handler: async (): Promise<never> => {
    throw new Error('secret internals at /src/x.ts:1');
  },
  outcome: () => 'signs',
});
const down = defineRpcMethod({
  method: 'test_down',
  params: z.tuple([]),
  family: () => undefined,
  handler: async (): Promise<never> => {
    throw new UnavailableError('down');
  },
  outcome: () => 'signs',
});
const methods = new Map<string, RegisteredMethod>([echo, deny, boom, down].map((m) => [m.method, m]));
const logged: unknown[] = [];
const log = { error: (obj: object) => logged.push(obj) };
const free = () => Promise.resolve();
/** A context whose services are never reached by these methods: the envelope reads the dApp, caller and budget. */
function bareContext(over: Partial<RpcContext> = {}): RpcContext {
  return {
    dapp: {
      id: '7238fa04-f236-4db5-86f5-b557a495546b',
      accountId: '11111111-f236-4db5-86f5-b557a495546b',
      name: 'test',
      chainIds: [31337],
      apiKeyPrefix: 'pk.x',
      apiKeyCiphertext: '',
      limits: {},
      restrictions: NO_CALLER_RESTRICTIONS,
      createdAt: 0,
      updatedAt: 0,
    },
    chain: eip1193ChainRuntime({
      chainId: 31337,
      request: async () => null,
      entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789',
      paymaster: '0x1111111111111111111111111111111111111111',
    }),
    urlEntryPointVersion: '0.6',
    bounds: DEFAULT_SIGNING_BOUNDS,
    sponsorship: {} as SponsorshipService,
    tokenPaymaster: {} as TokenPaymasterService,
    sponsorshipTokens: {} as SponsorshipTokenGate,
    caller: { origin: undefined, ip: '127.0.0.1', authorization: undefined },
    spend: { call: free, simulation: free, webhookCalls: free },
    ...over,
  };
}
const context = async () => bareContext();

const run = (body: string, ctx: () => Promise<RpcContext> = context, admit: () => Promise<void> = free) =>
  handleJsonRpc({ body, methods, context: ctx, log, admit });

test('success echoes the id exactly (number, string, null) and never carries error', async () => {
  for (const id of [1, 'abc', null, 1_700_000_000, 0]) {
    const out = await run(JSON.stringify({ jsonrpc: '2.0', id, method: 'test_echo', params: [{ n: 5 }] }));
    assert.equal(out.status, 200);
    assert.deepEqual(out.body, { jsonrpc: '2.0', id, result: { n: 5 } });
  }
});

test('"2.0.0" is accepted, answered as "2.0"', async () => {
  const out = await run(JSON.stringify({ jsonrpc: '2.0.0', id: 7, method: 'test_echo', params: [{ n: 1 }] }));
  assert.deepEqual(out.body, { jsonrpc: '2.0', id: 7, result: { n: 1 } });
});

const cases: [string, string, number, number, string][] = [
  ['malformed JSON', '{"jsonrpc":', 400, -32700, 'Parse error: the body is not valid JSON'],
  ['empty body', '', 400, -32700, 'Parse error: the body is not valid JSON'],
  ['a bare number', '42', 400, -32600, 'Invalid request: expected a JSON-RPC request object'],
  ['empty batch', '[]', 400, -32600, 'Invalid request: empty batch'],
  [
    'wrong version',
    '{"jsonrpc":"1.0","id":1,"method":"test_echo"}',
    400,
    -32600,
    'Invalid request: jsonrpc must be "2.0"',
  ],
  ['missing method', '{"jsonrpc":"2.0","id":1}', 400, -32600, 'Invalid request: method must be a string'],
  [
    'object id',
    '{"jsonrpc":"2.0","id":{},"method":"test_echo"}',
    400,
    -32600,
    'Invalid request: id must be a string, a number or null',
  ],
  [
    'params object',
    '{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{}}',
    400,
    -32600,
    'Invalid request: params must be an array',
  ],
  [
    'unknown method',
    '{"jsonrpc":"2.0","id":1,"method":"eth_nope","params":[]}',
    400,
    -32601,
    'Method not found: eth_nope',
  ],
  [
    'bad params, named field',
    '{"jsonrpc":"2.0","id":1,"method":"test_echo","params":[{"n":"x"}]}',
    400,
    -32602,
    'Invalid params: params[0].n: must be a number',
  ],
  ['domain denial', '{"jsonrpc":"2.0","id":1,"method":"test_deny","params":[]}', 400, -32010, 'no'],
  [
    'internal fault: generic message',
    '{"jsonrpc":"2.0","id":1,"method":"test_boom","params":[]}',
    500,
    -32603,
    'Internal error',
  ],
  ['transient outage', '{"jsonrpc":"2.0","id":1,"method":"test_down","params":[]}', 503, -32603, 'Internal error'],
];
for (const [name, body, status, code, message] of cases) {
  test(`${name} → HTTP ${status}, code ${code}`, async () => {
    const out = await run(body);
    assert.equal(out.status, status);
    const r = out.body as { error: { code: number; message: string }; result?: unknown; jsonrpc: string };
    assert.equal(r.jsonrpc, '2.0');
    assert.equal(r.error.code, code);
    assert.equal(r.error.message, message);
    assert.ok(!('result' in r));
    assert.doesNotMatch(JSON.stringify(r), /secret internals|\.ts:\d/);
  });
}

test('a batch answers each request in order, errors and results mixed, with HTTP 200', async () => {
  const out = await run(
    JSON.stringify([
      { jsonrpc: '2.0', id: 'a', method: 'test_echo', params: [{ n: 1 }] },
      { jsonrpc: '2.0', id: 'b', method: 'nope', params: [] },
      { jsonrpc: '2.0', method: 'test_echo', params: [{ n: 2 }] },
      { jsonrpc: '2.0', id: 'c', method: 'test_echo', params: [{ n: 3 }] },
    ]),
  );
  assert.equal(out.status, 200);
  const body = out.body as { id: unknown; result?: unknown; error?: { code: number } }[];
  assert.deepEqual(
    body.map((r) => r.id),
    ['a', 'b', 'c'],
    'the notification gets no answer',
  );
  assert.deepEqual(body[0]?.result, { n: 1 });
  assert.equal(body[1]?.error?.code, -32601);
  assert.deepEqual(body[2]?.result, { n: 3 });
});

test(`a batch over ${MAX_BATCH} requests is refused whole`, async () => {
  const batch = Array.from({ length: MAX_BATCH + 1 }, (_, i) => ({
    jsonrpc: '2.0',
    id: i,
    method: 'test_echo',
    params: [{ n: i }],
  }));
  const out = await run(JSON.stringify(batch));
  assert.equal(out.status, 400);
  assert.equal((out.body as { error: { code: number } }).error.code, -32600);
});

test('a lone notification gets no body (204)', async () => {
  const out = await run(JSON.stringify({ jsonrpc: '2.0', method: 'test_echo', params: [{ n: 1 }] }));
  assert.deepEqual(out, { status: 204, body: undefined });
});

test('the context (API key → dApp) is resolved once per body and its error answers every request', async () => {
  let calls = 0;
  const failing = async () => {
    calls++;
    throw new UnauthorizedError('Invalid API key: check the paymaster URL');
  };
  const single = await run(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'test_echo', params: [{ n: 1 }] }), failing);
  assert.equal(single.status, 401);
  assert.deepEqual(single.body, {
    jsonrpc: '2.0',
    id: 1,
    error: { code: -32001, message: 'Invalid API key: check the paymaster URL' },
  });
  calls = 0;
  const batch = await run(
    JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'test_echo', params: [{ n: id }] }))),
    failing,
  );
  assert.equal(calls, 1);
  assert.deepEqual(
    (batch.body as { error: { code: number } }[]).map((r) => r.error.code),
    [-32001, -32001, -32001],
  );
});

test('internal faults are logged with the cause', () => {
  assert.ok(logged.length >= 1);
});

test('rate limits: the first call of a body is paid by the request; each further call of a batch is asked, and one over the budget is -32005 with Retry-After', async () => {
  let left = 3;
  let asked = 0;
  const admit = async () => {
    asked += 1;
    if (left-- <= 0) throw new RateLimitedError({ limit: 'calls.perIp', what: 'calls', retryAfterSeconds: 7 });
  };
  const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'test_echo', params: [{ n: id }] });
  const out = await run(JSON.stringify([1, 2, 3, 4, 5].map(call)), context, admit);
  assert.equal(asked, 4, 'a batch of 5 asks for 4: the transport counted the request as the first');
  assert.equal(out.status, 200);
  assert.equal(out.retryAfterSeconds, 7);
  const answers = out.body as {
    id: number;
    result?: unknown;
    error?: { code: number; message: string; data: unknown };
  }[];
  assert.deepEqual(
    answers.map((a) => (a.error === undefined ? 'ok' : a.error.code)),
    ['ok', 'ok', 'ok', 'ok', -32005],
  );
  assert.deepEqual(answers[4]?.error, {
    code: -32005,
    message: 'Rate limit exceeded: too many calls; retry in 7 s',
    data: { limit: 'calls.perIp', retryAfterSeconds: 7 },
  });
  // A lone call is never asked: the request's own count (spent before its body was read) is the call's.
  const single = await run(JSON.stringify(call(9)), context, admit);
  assert.equal(single.status, 200);
  assert.equal(asked, 4);
});

test('rate limits: elements that are no call spend nothing, and the first call to get there is the paid one', async () => {
  let asked = 0;
  const admit = async () => {
    asked += 1;
  };
  const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'test_echo', params: [{ n: id }] });
  const junk = [42, { jsonrpc: '2.0', id: 1, method: 'no_such' }, { jsonrpc: '2.0', method: 'test_echo', params: [] }];
  const out = await run(JSON.stringify([...junk, call(1), call(2), call(3)]), context, admit);
  const answers = out.body as { result?: unknown }[];
  assert.equal(answers.filter((a) => a.result !== undefined).length, 3);
  assert.equal(asked, 2, 'three calls: the first paid by the request, two asked; the junk asked for nothing');
});

test("a call the key's caller restrictions refuse is -32003 (HTTP 403) naming the rule, before the dApp's budget is spent", async () => {
  let dappCalls = 0;
  const restricted = (doc: unknown) => async () => {
    const base = bareContext();
    return bareContext({
      dapp: { ...base.dapp, restrictions: compileCallerRestrictions(callerRestrictionsSchema.parse(doc)) },
      caller: { origin: 'https://evil.example', ip: '10.1.2.3', authorization: undefined },
      spend: {
        call: async () => {
          dappCalls += 1;
        },
        simulation: free,
        webhookCalls: free,
      },
    });
  };
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'test_echo', params: [{ n: 1 }] });
  const cases = [
    { doc: { origins: ['https://app.example'] }, rule: 'origin' },
    { doc: { cidrs: ['192.0.2.0/24'] }, rule: 'ip' },
    { doc: { methods: ['dryRun'] }, rule: 'method' },
  ];
  for (const { doc, rule } of cases) {
    const out = await handleJsonRpc({ body, methods, context: restricted(doc), log, admit: free });
    assert.equal(out.status, 403, rule);
    const error = (out.body as { error: { code: number; data: { rule: string } } }).error;
    assert.equal(error.code, -32003);
    assert.equal(error.data.rule, rule);
  }
  assert.equal(dappCalls, 0, "a refused call does not spend the dApp's budget");
  // Allowed: the same caller inside every rule; a method of no family passes a methods list.
  const ok = await handleJsonRpc({
    body,
    methods,
    context: restricted({ origins: ['https://evil.example'], cidrs: ['10.0.0.0/8'], methods: ['sponsorship'] }),
    log,
    admit: free,
  });
  assert.equal(ok.status, 200);
  const noFamily = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'test_deny', params: [] });
  const passed = await handleJsonRpc({
    body: noFamily,
    methods,
    context: restricted({ methods: ['dryRun'] }),
    log,
    admit: free,
  });
  assert.equal((passed.body as { error: { code: number } }).error.code, -32010);
  assert.equal(dappCalls, 2);
});
