import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClosers, withClosers } from './closers.js';

describe('closers', () => {
  test('close the last opened first, each after the one before has settled; own returns the thing', async () => {
    const closed: string[] = [];
    const closers = createClosers();
    const store = closers.own({ name: 'store', close: async () => void closed.push('store') });
    closers.defer(async () => {
      await sleep(5);
      closed.push('loop');
    });
    closers.defer(() => void closed.push('thread'));
    assert.equal(store.name, 'store');
    await closers.closeAll();
    assert.deepEqual(closed, ['thread', 'loop', 'store']);
  });

  test('a close that throws does not skip the others; the first failure is passed on; closing twice closes once', async () => {
    const closed: string[] = [];
    const closers = createClosers();
    closers.defer(() => void closed.push('store'));
    closers.defer(() => {
      throw new Error('flush failed');
    });
    closers.defer(() => void closed.push('loop'));
    await assert.rejects(closers.closeAll(), /flush failed/);
    assert.deepEqual(closed, ['loop', 'store']);
    await assert.rejects(closers.closeAll(), /flush failed/);
    assert.deepEqual(closed, ['loop', 'store']);
  });

  test('several failures: one AggregateError holding each', async () => {
    const closers = createClosers();
    closers.defer(() => Promise.reject(new Error('a')));
    closers.defer(() => Promise.reject(new Error('b')));
    await assert.rejects(closers.closeAll(), (err: unknown) => {
      assert.ok(err instanceof AggregateError);
      assert.deepEqual(
        err.errors.map((e: unknown) => (e instanceof Error ? e.message : e)),
        ['b', 'a'],
      );
      return true;
    });
  });

  test('withClosers: a start that throws closes what it opened, then passes its own error on', async () => {
    const closed: string[] = [];
    const logged: string[] = [];
    const logger = { error: (_obj: object, msg: string) => void logged.push(msg) };
    await assert.rejects(
      withClosers(logger, async (closers) => {
        closers.defer(() => void closed.push('store'));
        closers.defer(() => {
          throw new Error('close failed');
        });
        closers.defer(() => void closed.push('loop'));
        throw new Error('start failed');
      }),
      /start failed/,
    );
    assert.deepEqual(closed, ['loop', 'store']);
    assert.deepEqual(logged, ['a start that failed could not close what it had opened']);
  });

  test('withClosers: a start that succeeds keeps everything open', async () => {
    const closed: string[] = [];
    const logger = { error: () => assert.fail('nothing to close') };
    const closers = await withClosers(logger, async (c) => {
      c.defer(() => void closed.push('store'));
      return c;
    });
    assert.deepEqual(closed, []);
    await closers.closeAll();
    assert.deepEqual(closed, ['store']);
  });
});
