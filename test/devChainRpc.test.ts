import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEV_CHAIN_BODY_LIMIT } from '../src/api/devChainRpc.js';
import { createTestContext, type TestContext } from './helpers/testContext.js';

/**
 * `POST /chain/{chainId}` has a body limit of its own (4 MiB, for deployments' calldata), above the REST API's
 * 64 KiB: a body between the two is read, and one above 4 MiB is refused with a JSON-RPC error naming that
 * limit (the app-wide handler used to answer with the REST limit's message).
 */
describe('dev chain JSON-RPC transport', () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await createTestContext();
  });
  after(async () => {
    await ctx.close();
  });

  const call = (payload: string) =>
    ctx.app.inject({ method: 'POST', url: '/chain/31337', headers: { 'content-type': 'application/json' }, payload });

  test('a body over the REST limit but under 4 MiB is read (here: no embedded chain runs, so 404)', async () => {
    const res = await call(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: ['x'.repeat(200_000)] }),
    );
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32601, message: 'No embedded chain with that id' },
    });
  });

  test('a body over 4 MiB gets 413 with a JSON-RPC error that names the 4 MiB limit', async () => {
    const res = await call(`"${'x'.repeat(DEV_CHAIN_BODY_LIMIT)}"`);
    assert.equal(res.statusCode, 413);
    assert.deepEqual(res.json(), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: `Request body is larger than ${DEV_CHAIN_BODY_LIMIT} bytes` },
    });
  });
});
