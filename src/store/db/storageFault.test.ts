import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { PatronError, StorageUnavailableError } from '../../errors/PatronError.js';
import { Sqlite } from './sqliteDriver.js';
import { storageFaultOf, storageUnavailable } from './storageFault.js';

/** The classification read off the errors better-sqlite3 really throws, not hand-made objects. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  assert.fail('did not throw');
}

test('SQLite: full, read-only, locked, corrupt, cannot open: each named from the driver error', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-fault-'));
  try {
    const file = path.join(dir, 'a.sqlite');
    const db = new Sqlite(file);
    db.exec('CREATE TABLE t (v BLOB)');
    // max_page_count makes SQLite's own SQLITE_FULL without filling a disk.
    db.pragma('max_page_count = 3');
    assert.equal(
      storageFaultOf(thrown(() => db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(20_000))))?.kind,
      'disk_full',
    );
    const ro = new Sqlite(file, { readonly: true });
    assert.equal(storageFaultOf(thrown(() => ro.exec('INSERT INTO t VALUES (1)')))?.kind, 'read_only');
    ro.close();
    const other = new Sqlite(file, { timeout: 0 });
    db.exec('BEGIN EXCLUSIVE');
    assert.equal(storageFaultOf(thrown(() => other.exec('BEGIN IMMEDIATE')))?.kind, 'locked');
    db.exec('ROLLBACK');
    other.close();
    db.close();
    const garbage = path.join(dir, 'garbage.sqlite');
    fs.writeFileSync(garbage, Buffer.alloc(4096, 7));
    const bad = new Sqlite(garbage);
    assert.equal(storageFaultOf(thrown(() => bad.exec('SELECT * FROM sqlite_master')))?.kind, 'corrupt');
    bad.close();
    // A directory where the file should be: SQLite's own "unable to open database file".
    assert.equal(storageFaultOf(thrown(() => new Sqlite(dir).exec('SELECT 1')))?.kind, 'cannot_open');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('wrapped faults are found down the cause chain; other errors are not faults; the caller error is transient', () => {
  const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  const wrapped = new Error('reservation failed', { cause });
  assert.deepEqual(storageFaultOf(wrapped), { kind: 'unreachable', code: 'ECONNREFUSED', message: cause.message });
  assert.equal(storageFaultOf(Object.assign(new Error('x'), { code: '53100' }))?.kind, 'disk_full');
  assert.equal(storageFaultOf(Object.assign(new Error('x'), { code: '25006' }))?.kind, 'read_only');
  assert.equal(storageFaultOf(new Error('Connection terminated unexpectedly'))?.kind, 'unreachable');
  // A unique violation is about the query, not the storage.
  assert.equal(storageFaultOf(Object.assign(new Error('dup'), { code: '23505' })), undefined);
  assert.equal(storageFaultOf(Object.assign(new Error('dup'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })), undefined);
  const caller = storageUnavailable(wrapped);
  assert.ok(caller instanceof StorageUnavailableError);
  assert.equal(caller.shortMessage, "Patron's storage is unavailable (database unreachable); retry in 5 s");
  // A domain error keeps its own answer even when a fault is its cause.
  assert.equal(storageUnavailable(new PatronError('INTERNAL', 'x', { cause })), undefined);
});
