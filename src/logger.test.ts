import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { PatronError } from './errors/PatronError.js';
import { createLogger, lazyChildLoggerFactory, redactUrl } from './logger.js';

test('redactUrl keeps the route but not the API key of a paymaster URL', () => {
  const key = `pk.${'A1b2C3'.repeat(5)}xyz`;
  assert.equal(redactUrl(`/api/v1/31337/${key}`), '/api/v1/31337/pk.A1b…');
  assert.equal(redactUrl(`/api/v2/8453/${key}?x=1`), '/api/v2/8453/pk.A1b…?x=1');
  assert.equal(
    redactUrl('/api/v2/public/sdk/webhookParameters?webhookId=1'),
    '/api/v2/public/sdk/webhookParameters?webhookId=1',
  );
});

test('credential headers are redacted in logs', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ level: 'info', destination: sink });
  logger.info({ req: { headers: { authtoken: 'pat.secret', apikey: 'pk.secret', authorization: 'Bearer x' } } }, 'm');
  assert.equal(lines.length, 1);
  assert.doesNotMatch(lines[0] ?? '', /secret|Bearer/);
});

test('request loggers are built on their first line; lines carry the bindings; lines below the level build none', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const parent = createLogger({ level: 'info', destination: sink });
  let built = 0;
  const counting = Object.assign(Object.create(parent) as typeof parent, {
    child: (...args: Parameters<typeof parent.child>) => {
      built++;
      return parent.child(...args);
    },
  });
  const quiet = lazyChildLoggerFactory(counting, { reqId: 'r1' }, {});
  quiet.debug({ a: 1 }, 'below the level');
  assert.equal(quiet.level, 'info');
  assert.equal(built, 0, 'nothing logged, no child');
  assert.equal(lines.length, 0);

  const loud = lazyChildLoggerFactory(counting, { reqId: 'r2' }, {});
  loud.info({ a: 1 }, 'first');
  loud.warn('second %s', 'formatted');
  assert.equal(built, 1, 'one child for the request');
  const [first, second] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual([first?.reqId, first?.a, first?.msg], ['r2', 1, 'first']);
  assert.deepEqual([second?.reqId, second?.msg, second?.level], ['r2', 'second formatted', 40]);

  const debugRoute = lazyChildLoggerFactory(counting, { reqId: 'r3' }, { level: 'debug' });
  debugRoute.debug('a route at debug');
  assert.equal(JSON.parse(lines.at(-1) ?? '{}').msg, 'a route at debug');
});

test('err: one summary line, never the ABI or the request body; stack frames only for a bug or a plain Error', () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  const logger = createLogger({ level: 'info', destination: sink });
  // The shape of viem's ContractFunctionExecutionError: enumerable ABI and a message with URL and body.
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8545'), { code: 'ECONNREFUSED' });
  const viemLike = Object.assign(
    new Error('HTTP request failed.\n\nURL: https://rpc.example/v2/KEY\nRequest body: {"method":"eth_call"}'),
    {
      name: 'ContractFunctionExecutionError',
      shortMessage: 'HTTP request failed.',
      abi: [{ type: 'function', name: 'balanceOf', stateMutability: 'view', inputs: [], outputs: [] }],
      functionName: 'balanceOf',
      contractAddress: '0x1111111111111111111111111111111111111111',
      cause: Object.assign(new Error('HTTP request failed.'), {
        shortMessage: 'HTTP request failed.',
        url: 'https://rpc.example/v2/KEY',
        cause: new TypeError('fetch failed', { cause: refused }),
      }),
    },
  );
  logger.warn({ err: viemLike }, 'read failed');
  logger.error({ err: new TypeError("Cannot read properties of undefined (reading 'x')") }, 'bug');
  logger.error({ err: new PatronError('INTERNAL', 'could not sign', { cause: new RangeError('bad') }) }, 'wrapped');
  logger.error({ err: new Error('the ledger returned no row') }, 'plain');

  const [viemLine, bugLine, wrappedLine, plainLine] = lines;
  assert.deepEqual(viemLine?.err, {
    type: 'ContractFunctionExecutionError',
    message:
      'balanceOf() at 0x1111111111111111111111111111111111111111: HTTP request failed (URL https://rpc.example/…): fetch failed: connect ECONNREFUSED 127.0.0.1:8545',
  });
  const bug = bugLine?.err as { type?: string; stack?: string };
  assert.equal(bug.type, 'TypeError');
  const frames = bug.stack?.split('\n') ?? [];
  assert.ok(frames.length >= 1 && frames.length <= 6, String(bug.stack));
  assert.ok(frames.every((f) => f.startsWith('at ')));
  const wrapped = wrappedLine?.err as { code?: string; message?: string; stack?: string };
  assert.deepEqual([wrapped.code, wrapped.message], ['INTERNAL', 'could not sign: bad']);
  assert.match(wrapped.stack ?? '', /^at /);
  // A plain Error is our own broken invariant: its frames say where.
  const plain = plainLine?.err as { message?: string; stack?: string };
  assert.equal(plain.message, 'the ledger returned no row');
  assert.match(plain.stack ?? '', /^at /);
});
