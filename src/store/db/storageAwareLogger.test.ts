import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { Sqlite } from './sqliteDriver.js';
import { storageAwareLogger } from './storageAwareLogger.js';
import { createStorageHealth } from './storageHealth.js';

test('a background loop failing on a full disk: one line naming the fault, not one per round; other errors as before', () => {
  const lines: { level: number; msg: string; storageFault?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString('utf8')));
      done();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  const health = createStorageHealth({
    location: '/var/lib/patron/patron.sqlite',
    probe: async () => {},
    logger,
    now: Date.now,
  });
  try {
    const background = storageAwareLogger(logger, health);
    // SQLite's own SQLITE_FULL, as a loop's write gets it (max_page_count stands in for a full disk).
    const db = new Sqlite(':memory:');
    db.exec('CREATE TABLE t (v BLOB)');
    db.pragma('max_page_count = 3');
    let full: unknown;
    try {
      db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(20_000));
    } catch (err) {
      full = err;
    }
    db.close();
    for (let round = 0; round < 20; round++) {
      background.warn({ err: full, events: 3 }, 'lifecycle events: the outbox write failed, will retry');
    }
    background.error({ err: new Error('connect ECONNREFUSED 127.0.0.1:8545') }, 'settlement round failed');
    background.warn({ chainId: 1 }, 'keeper: the funding key is low');
    background.info({}, 'unchanged');

    const atLeastWarn = lines.filter((l) => l.level >= 40);
    assert.deepEqual(
      atLeastWarn.map((l) => l.msg.replace(/ \(.*$/, '')),
      [
        'storage fault: disk full at /var/lib/patron/patron.sqlite',
        'settlement round failed',
        'keeper: the funding key is low',
      ],
    );
    assert.equal(health.current()?.kind, 'disk_full');
    // Still there for whoever turns debug on, marked.
    const quieted = lines.filter((l) => l.msg === 'lifecycle events: the outbox write failed, will retry');
    assert.equal(quieted.length, 20);
    assert.ok(quieted.every((l) => l.level === 20 && l.storageFault === 'disk_full'));
    assert.ok(lines.some((l) => l.msg === 'unchanged'));
  } finally {
    health.close();
  }
});
