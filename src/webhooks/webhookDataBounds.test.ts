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

  test('the size is exactly the UTF-8 length of JSON.stringify, walked without building the text', () => {
    // Sizes around the limit: the first multiple of each sample's length past 16 KiB tells an off-by-one.
    const samples: Record<string, unknown>[] = [
      { sponsorshipToken: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln', user: 'u-1' },
      { quote: 'say "hi"\\ \n\t\u0001', uni: 'ünï ✓ 𝄞 \u2028', lone: '\ud800' },
      { n: [0, -0, 1.5, -2e-7, 1e21, 123456789012345680000, Number.MAX_VALUE], b: [true, false, null] },
      { empty: {}, list: [], nested: [[], [{}], { a: [1, { b: 'c' }] }] },
      JSON.parse('{"__proto__": {"x": 1}, "k\\"ey": "v"}'),
      { [`key ${'é'.repeat(3)}`]: 'x'.repeat(40) },
    ];
    for (const sample of samples) {
      const exact = Buffer.byteLength(JSON.stringify(sample));
      const copies = Math.floor(MAX_WEBHOOK_DATA_BYTES / exact) + 1;
      const over = { list: Array.from({ length: copies }, () => sample) };
      const overBytes = Buffer.byteLength(JSON.stringify(over));
      assert.equal(webhookDataProblem(over), `must be at most 16384 bytes as JSON (it is ${overBytes})`);
      assert.equal(webhookDataProblem(sample), undefined);
    }
    // What JSON.parse never makes is measured by JSON.stringify itself (undefined members left out, toJSON used).
    const big = 'x'.repeat(MAX_WEBHOOK_DATA_BYTES);
    assert.equal(webhookDataProblem({ gone: undefined, at: new Date(0), pad: big.slice(0, 16_330) }), undefined);
    const withDate = { at: new Date(0), pad: big.slice(0, 16_360) };
    assert.equal(
      webhookDataProblem(withDate),
      `must be at most 16384 bytes as JSON (it is ${Buffer.byteLength(JSON.stringify(withDate))})`,
    );
  });
});
