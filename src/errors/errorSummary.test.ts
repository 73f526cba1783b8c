import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPublicClient, erc20Abi, http } from 'viem';
import { closedPort } from '../../test/helpers/webhookReceiver.js';
import { errorSummary, redactSecretUrl } from './errorSummary.js';
import { PatronError } from './PatronError.js';

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => assert.fail('expected a rejection'),
    (err: unknown) => err,
  );
}

test('a viem contract read against a closed port: function, short messages down the chain, URL origin only', async () => {
  const port = await closedPort();
  const client = createPublicClient({
    transport: http(`http://127.0.0.1:${port}/v3/SECRETKEY?apikey=QSECRET`, { retryCount: 0 }),
  });
  const err = await rejection(
    client.readContract({
      address: '0x1111111111111111111111111111111111111111',
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: ['0x2222222222222222222222222222222222222222'],
    }),
  );
  // What pino's standard serializer wrote: the ABI (enumerable `abi`) and the API key in the message.
  assert.match(JSON.stringify(err), /stateMutability/);
  assert.match(String((err as Error).message), /SECRETKEY/);
  assert.equal(
    errorSummary(err),
    `balanceOf() at 0x1111111111111111111111111111111111111111: HTTP request failed (URL http://127.0.0.1:${port}/…): fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`,
  );

  const block = await rejection(client.getBlockNumber());
  assert.equal(
    errorSummary(block),
    `HTTP request failed (URL http://127.0.0.1:${port}/…): fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`,
  );
});

test('URLs anywhere in the text lose credentials, path and query; the line is capped', () => {
  assert.equal(redactSecretUrl('https://user:pw@base.example.com:8443/v2/KEY?x=1'), 'https://base.example.com:8443/…');
  assert.equal(redactSecretUrl('http://127.0.0.1:8545'), 'http://127.0.0.1:8545');
  assert.equal(redactSecretUrl('not a url'), '[url]');
  const err = new Error('could not reach postgres://patron:hunter2@db:5432/patron?sslmode=require\nsecond line');
  assert.equal(errorSummary(err), 'could not reach postgres://db:5432/…');
  const long = errorSummary(new Error('x'.repeat(2000)));
  assert.equal(long.length, 500);
  assert.ok(long.endsWith('…'));
  assert.equal(errorSummary(new Error('y'.repeat(100)), 50).length, 50);
});

test('PatronError, plain objects, AggregateError, non-errors and cycles', () => {
  const wrapped = new PatronError('INTERNAL', 'could not sign', {
    details: 'the long internal story',
    cause: new TypeError('x is undefined'),
  });
  assert.equal(errorSummary(wrapped), 'could not sign: x is undefined');
  // viem's RpcRequestError keeps the node's answer as a plain object cause, and its `details`.
  const rpc = {
    shortMessage: 'RPC Request failed.',
    url: 'https://rpc.example/KEY',
    cause: { code: -32000, message: 'header not found' },
  };
  assert.equal(errorSummary(rpc), 'RPC Request failed (URL https://rpc.example/…): header not found');
  const timeout = { shortMessage: 'The request took too long to respond.', details: 'The request timed out.' };
  assert.equal(errorSummary(timeout), 'The request took too long to respond: The request timed out');
  const aggregate = Object.assign(
    new AggregateError(
      [new Error('connect ECONNREFUSED ::1:8545'), new Error('connect ECONNREFUSED 127.0.0.1:8545')],
      '',
    ),
    { code: 'ECONNREFUSED' },
  );
  assert.equal(
    errorSummary(new TypeError('fetch failed', { cause: aggregate })),
    'fetch failed: ECONNREFUSED (connect ECONNREFUSED ::1:8545; connect ECONNREFUSED 127.0.0.1:8545)',
  );
  assert.equal(errorSummary('boom at https://h.example/secret'), 'boom at https://h.example/…');
  assert.equal(errorSummary(undefined), 'undefined');
  const a: { message: string; cause?: unknown } = { message: 'a' };
  a.cause = { message: 'b', cause: a };
  assert.equal(errorSummary(a), 'a: b');
});
