import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRefreshLoop } from './refreshLoop.js';

describe('refresh loop', () => {
  test('runs at once, then every interval, never two ticks at a time; stop ends it', async () => {
    let running = 0;
    let maxRunning = 0;
    let ticks = 0;
    const loop = startRefreshLoop({
      intervalMs: 5,
      async tick() {
        running++;
        maxRunning = Math.max(maxRunning, running);
        ticks++;
        await sleep(2);
        running--;
      },
      onError: (err) => assert.fail(String(err)),
    });
    await loop.first;
    assert.equal(ticks, 1);
    await Promise.all([loop.runNow(), loop.runNow()]);
    // A tick every 5 ms from here: wait for a few (up to 5 s: a busy event loop stretches every timer).
    for (const deadline = Date.now() + 5_000; ticks < 4 && Date.now() < deadline; ) await sleep(5);
    loop.stop();
    const stoppedAt = ticks;
    assert.ok(stoppedAt >= 4, `ticks: ${stoppedAt}`);
    assert.equal(maxRunning, 1);
    await sleep(20);
    assert.equal(ticks, stoppedAt);
  });

  test('a failing tick is reported and the loop goes on', async () => {
    const errors: unknown[] = [];
    let ticks = 0;
    const loop = startRefreshLoop({
      intervalMs: 1,
      async tick() {
        ticks++;
        throw new Error('boom');
      },
      onError: (err) => errors.push(err),
    });
    await loop.first;
    for (const deadline = Date.now() + 5_000; ticks < 2 && Date.now() < deadline; ) await sleep(5);
    loop.stop();
    assert.ok(ticks >= 2);
    assert.equal(errors.length, ticks);
  });
});
