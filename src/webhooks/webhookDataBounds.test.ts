import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_WEBHOOK_DATA_BYTES, MAX_WEBHOOK_DATA_DEPTH, webhookDataProblem } from './webhookDataBounds.js';

/** An object `levels` deep, built without recursion (JSON.parse of the text, as a request body would be). */
const nested = (levels: number, inner = '{}'): Record<string, unknown> =>
  JSON.parse(`${'{"a":'.repeat(levels - 1)}${inner}${'}'.repeat(levels - 1)}`);

describe('webhookDataProblem', () => {
  test('within bounds: undefined', () => {
    assert.equal(webhookDataProblem({}), undefined);
    assert.equal(webhookDataProblem({ num: 2, who: 'ünï', list: [1, { b: null }] }), undefined);
    assert.equal(webhookDataProblem(nested(MAX_WEBHOOK_DATA_DEPTH)), undefined);
  });

  test('one level too deep, objects or arrays, anywhere in the tree', () => {
    assert.equal(webhookDataProblem(nested(MAX_WEBHOOK_DATA_DEPTH + 1)), 'must nest at most 32 levels');
    assert.equal(webhookDataProblem(nested(MAX_WEBHOOK_DATA_DEPTH, '[1]')), undefined);
    assert.equal(webhookDataProblem(nested(MAX_WEBHOOK_DATA_DEPTH, '[[1]]')), 'must nest at most 32 levels');
    const wideThenDeep = { ok: 1, list: [1, 2, nested(MAX_WEBHOOK_DATA_DEPTH - 1)] };
    assert.equal(webhookDataProblem(wideThenDeep), 'must nest at most 32 levels');
  });

  test('100,000 levels: refused without overflowing the stack', () => {
    assert.equal(webhookDataProblem(nested(100_000)), 'must nest at most 32 levels');
  });

  test('size: the JSON text in UTF-8 bytes, at most 16 KiB', () => {
    const overhead = '{"pad":""}'.length;
    assert.equal(webhookDataProblem({ pad: 'x'.repeat(MAX_WEBHOOK_DATA_BYTES - overhead) }), undefined);
    assert.equal(
      webhookDataProblem({ pad: 'x'.repeat(MAX_WEBHOOK_DATA_BYTES - overhead + 1) }),
      'must be at most 16384 bytes as JSON (it is 16385)',
    );
    // Multi-byte characters count as their UTF-8 bytes.
    assert.match(webhookDataProblem({ pad: 'é'.repeat(8200) }) ?? '', /^must be at most 16384 bytes/);
  });
});
