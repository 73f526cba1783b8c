import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPollLoop } from './pollLoop.js';

describe('poll loop', () => {
  test('never two ticks at once; runNow returns the tick result; stop waits for the running tick', async () => {
    let running = 0;
    let maxRunning = 0;
    let ticks = 0;
    const loop = startPollLoop({
      intervalMs: 5,
      maxBackoffMs: 100,
      firstDelayMs: 0,
      async tick() {
        running++;
        maxRunning = Math.max(maxRunning, running);
        ticks++;
        await sleep(2);
        running--;
        return ticks;
      },
      onError: (err) => assert.fail(String(err)),
    });
    const results = await Promise.all([loop.runNow(), loop.runNow()]);
    assert.equal(results[1], (results[0] ?? 0) + 1);
    // A tick every 5 ms from here: wait for two more (up to 5 s: a busy event loop stretches every timer).
    for (const deadline = Date.now() + 5_000; ticks < 4 && Date.now() < deadline; ) await sleep(5);
    await loop.stop();
    assert.equal(running, 0);
    const stoppedAt = ticks;
    assert.ok(stoppedAt >= 4, `ticks: ${stoppedAt}`);
    assert.equal(maxRunning, 1);
    await sleep(20);
    assert.equal(ticks, stoppedAt);
    await assert.rejects(loop.runNow(), /stopped/);
  });

  test('failures back off (doubling, capped) and are reported; a success resets the pace', async () => {
    const waits: number[] = [];
    let ticks = 0;
    const loop = startPollLoop({
      intervalMs: 2,
      maxBackoffMs: 16,
      firstDelayMs: 0,
      async tick() {
        ticks++;
        if (ticks <= 5) throw new Error(`down ${ticks}`);
        return ticks;
      },
      onError: (_err, retryInMs) => waits.push(retryInMs),
    });
    await assert.rejects(loop.runNow(), /down 1/, 'runNow sees the failure');
    // 4 + 8 + 16 + 16 + 16 ms of backoff, then a tick every 2 ms: wait for a few of those, not for a fixed time
    // (a busy event loop stretches every timer).
    for (const deadline = Date.now() + 5_000; ticks <= 8 && Date.now() < deadline; ) await sleep(10);
    await loop.stop();
    assert.deepEqual(waits, [4, 8, 16, 16, 16]);
    assert.ok(ticks > 6, `went on after recovering: ${ticks}`);
  });

  test('runNowReplacesDue: a tick asked for now drops the one the timer had due; by default that one still runs', async () => {
    const ticksWith = async (runNowReplacesDue: boolean, settleMs: number) => {
      let ticks = 0;
      const loop = startPollLoop({
        intervalMs: 600_000,
        maxBackoffMs: 600_000,
        // Due while the asked tick still runs.
        firstDelayMs: 20,
        runNowReplacesDue,
        async tick() {
          ticks++;
          await sleep(60);
          return ticks;
        },
        onError: (err) => assert.fail(String(err)),
      });
      await loop.runNow();
      for (const deadline = Date.now() + settleMs; ticks < 2 && Date.now() < deadline; ) await sleep(10);
      await loop.stop();
      return ticks;
    };
    assert.equal(await ticksWith(false, 5_000), 2);
    assert.equal(await ticksWith(true, 200), 1);
  });
});
