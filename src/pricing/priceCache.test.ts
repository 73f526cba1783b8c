import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createPriceCache } from './priceCache.js';
import { type PriceReading, type PriceSource, PriceSourceError } from './priceSource.js';

const E18 = 10n ** 18n;

/** A source whose next read is scripted by the test. */
function scriptedSource(key: string, maxAgeMs: number) {
  let next: () => Promise<PriceReading> = () => Promise.reject(new PriceSourceError('not scripted'));
  let reads = 0;
  const source: PriceSource = {
    key,
    label: `source ${key}`,
    maxAgeMs,
    read: () => {
      reads++;
      return next();
    },
  };
  return {
    source,
    reads: () => reads,
    answer: (r: PriceReading) => {
      next = async () => r;
    },
    fail: (err: Error) => {
      next = async () => Promise.reject(err);
    },
  };
}

function recordingLogger() {
  const lines: Array<{ level: string; obj: object; msg: string }> = [];
  return {
    lines,
    info: (obj: object, msg: string) => lines.push({ level: 'info', obj, msg }),
    warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj, msg }),
  };
}

describe('price cache', () => {
  test('nothing is fresh before the first refresh', () => {
    const s = scriptedSource('a', 60_000);
    const cache = createPriceCache({ sources: [s.source], now: () => 0, logger: recordingLogger() });
    const state = cache.get('a');
    assert.equal(state.fresh, false);
    assert.match(state.fresh ? '' : state.reason, /no price read yet/);
    assert.equal(cache.get('unknown').fresh, false);
  });

  test('a fresh reading is served until its max age, then it is stale', async () => {
    let now = 1_000_000;
    const s = scriptedSource('a', 60_000);
    const cache = createPriceCache({ sources: [s.source], now: () => now, logger: recordingLogger() });
    s.answer({ usdE18: 2n * E18, updatedAtMs: now - 10_000 });
    await cache.refresh();
    assert.deepEqual(cache.get('a'), {
      fresh: true,
      usdE18: 2n * E18,
      updatedAtMs: now - 10_000,
      staleAtMs: now + 50_000,
    });
    now += 49_999;
    assert.equal(cache.get('a').fresh, true);
    now += 1;
    const stale = cache.get('a');
    assert.equal(stale.fresh, false);
    assert.match(stale.fresh ? '' : stale.reason, /source a: price is stale \(60 s old, max 60 s\)/);
  });

  test('a failing refresh keeps the last good value until it is stale; the failure is logged once', async () => {
    let now = 1_000_000;
    const logger = recordingLogger();
    const s = scriptedSource('a', 60_000);
    const cache = createPriceCache({ sources: [s.source], now: () => now, logger });
    s.answer({ usdE18: E18, updatedAtMs: now });
    await cache.refresh();
    s.fail(new PriceSourceError('HTTP 500'));
    await cache.refresh();
    now += 30_000;
    await cache.refresh();
    assert.equal(cache.get('a').fresh, true);
    assert.equal(logger.lines.filter((l) => l.level === 'warn').length, 1, 'one warning per failing streak');
    now += 30_000;
    const stale = cache.get('a');
    assert.equal(stale.fresh, false);
    assert.match(stale.fresh ? '' : stale.reason, /stale .*last error: HTTP 500/);
    // Recovery: a new reading is fresh again and the recovery is logged.
    s.answer({ usdE18: 3n * E18, updatedAtMs: now });
    await cache.refresh();
    const recovered = cache.get('a');
    assert.equal(recovered.fresh && recovered.usdE18, 3n * E18);
    assert.deepEqual(
      logger.lines.map((l) => [l.level, l.msg]),
      [
        ['warn', 'price source failing; its last good price is kept until it is stale'],
        ['info', 'price source recovered'],
      ],
    );
  });

  test('a source that never answered reports its error', async () => {
    const s = scriptedSource('a', 60_000);
    const cache = createPriceCache({ sources: [s.source], now: () => 0, logger: recordingLogger() });
    s.fail(new Error('connect ECONNREFUSED\nwith details'));
    await cache.refresh();
    const state = cache.get('a');
    assert.equal(state.fresh ? '' : state.reason, 'source a: connect ECONNREFUSED');
  });

  test('sources with the same key are read once per refresh', async () => {
    const a = scriptedSource('same', 60_000);
    const b = scriptedSource('same', 60_000);
    const cache = createPriceCache({ sources: [a.source, b.source], now: () => 0, logger: recordingLogger() });
    a.answer({ usdE18: E18, updatedAtMs: 0 });
    await cache.refresh();
    assert.equal(a.reads() + b.reads(), 1);
  });
});
