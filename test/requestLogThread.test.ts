import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Address, Hex } from 'viem';
import type { RequestLogRecord } from '../src/requestLog/requestLogRecord.js';
import { startRequestLogThread } from '../src/requestLog/requestLogThread.js';
import { inThreadWriter } from '../src/requestLog/requestLogWriter.js';
import type { RequestLogEntry } from '../src/store/records.js';
import { openStore, type Store } from '../src/store/store.js';
import { recordOf } from './helpers/requestLogRecords.js';

/**
 * The request log's writer thread (requestLogThread.ts) on a real SQLite file: the rows it makes carry their own
 * ids and the normalised sender and userOpHash the request path recorded, and when the thread cannot run, every
 * entry is still written, on the calling thread.
 */
const sender: Address = '0x00000000000000000000000000000000000000A1';
/** A userOpHash as a signature's hasher returns it (mixed case is normalised where the row is made). */
const hashOf = (i: number): Hex => `0x${'AB'.repeat(30)}${i.toString(16).padStart(4, '0')}`;
const entry = (i: number, userOpHash: RequestLogEntry['userOpHash']): RequestLogRecord =>
  recordOf({
    at: 1_000 + i,
    accountId: 'acc',
    dappId: 'dapp',
    chainId: 1,
    method: 'pm_getFeeQuoteOrData',
    mode: 'SPONSORED',
    sender: sender,
    outcome: 'sponsored',
    errorCode: null,
    reason: null,
    webhook: null,
    latencyMs: 1,
    policy: null,
    userOpHash,
  });

describe('the request log thread', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'patron-log-thread-'));
    store = await openStore({ storage: { kind: 'sqlite', file: join(dir, 'patron.sqlite') } });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const rows = async () => store.requestLog.query({ accountId: 'acc', limit: 10_000 });

  test('writes every batch on its own connection, each signed row with its userOpHash', async () => {
    const file = store.sqliteFile;
    assert.ok(file !== undefined);
    const fallbackWrites: number[] = [];
    const inThread = inThreadWriter(store.requestLog);
    const writer = startRequestLogThread({
      file,
      fallback: {
        write: (e) => {
          fallbackWrites.push(e.length);
          return inThread.write(e);
        },
        close: inThread.close,
      },
      logger: { error: () => assert.fail('the thread must not stop') },
    });
    await Promise.all([
      writer.write(Array.from({ length: 120 }, (_, i) => entry(i, hashOf(i)))),
      writer.write([entry(200, hashOf(200)), entry(202, null)]),
    ]);
    await writer.close();
    assert.deepEqual(fallbackWrites, [], 'nothing went the fallback way');
    const all = await rows();
    assert.equal(all.length, 122);
    const byAt = new Map(all.map((r) => [r.at, r]));
    for (const i of [0, 57, 119, 200]) assert.equal(byAt.get(1_000 + i)?.userOpHash, hashOf(i).toLowerCase());
    assert.equal(byAt.get(1_202)?.userOpHash, null);
    assert.equal(byAt.get(1_000)?.sender, sender.toLowerCase());
    assert.equal(new Set(all.map((r) => r.id)).size, 122, 'every row its own id');
  });

  test('a thread that cannot open its database: every entry is written on the calling thread, the failure logged', async () => {
    const before = (await rows()).length;
    const errors: string[] = [];
    const writer = startRequestLogThread({
      file: join(dir, 'no-such-dir', 'patron.sqlite'),
      fallback: inThreadWriter(store.requestLog),
      logger: { error: (_o, m) => errors.push(m) },
    });
    await writer.write(Array.from({ length: 10 }, (_, i) => entry(5_000 + i, hashOf(5_000 + i))));
    await writer.write([entry(6_000, null)]);
    await writer.close();
    assert.equal((await rows()).length, before + 11);
    assert.equal(errors.length, 1);
  });
});
