import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Address } from 'viem';
import { jsCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { viemKeccak } from '../src/paymaster/entryPoints/abiWords.js';
import type { UserOpHashInput } from '../src/paymaster/entryPoints/userOpHashInput.js';
import { userOpHashV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { userOpHashForVersion } from '../src/paymaster/entryPoints/v07/hashesV07.js';
import type { PendingRequestLogEntry } from '../src/requestLog/requestLogRecorder.js';
import { startRequestLogThread } from '../src/requestLog/requestLogThread.js';
import { inThreadWriter } from '../src/requestLog/requestLogWriter.js';
import { openStore, type Store } from '../src/store/store.js';

/**
 * The request log's writer thread (requestLogThread.ts) on a real SQLite file: the rows it makes carry the userOpHash
 * the EntryPoint would compute (hashed on its thread from the input the request path recorded), and when the thread
 * cannot run, every entry is still written, on the calling thread.
 */
const entryPoint: Address = '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789';
const sender: Address = '0x00000000000000000000000000000000000000A1';
const opV06 = (nonce: bigint) => ({
  sender,
  nonce,
  initCode: '0x1234' as const,
  callData: `0x${'ab'.repeat(100)}` as const,
  callGasLimit: 100_000n,
  verificationGasLimit: 200_000n,
  preVerificationGas: 50_000n,
  maxFeePerGas: 2_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  paymasterAndData: `0x${'cd'.repeat(98)}` as const,
});
const inputV06 = (nonce: bigint): UserOpHashInput => ({ version: '0.6', userOp: opV06(nonce), entryPoint, chainId: 1 });
const inputV08 = (nonce: bigint): UserOpHashInput => ({
  version: '0.8',
  userOp: {
    ...opV06(nonce),
    initCode: '0x',
    paymasterVerificationGasLimit: 60_000n,
    paymasterPostOpGasLimit: 0n,
  },
  entryPoint,
  chainId: 1,
});
const entry = (i: number, userOpHash: PendingRequestLogEntry['userOpHash']): PendingRequestLogEntry => ({
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

  test('writes every batch on its own connection, each signed row with the EntryPoint’s userOpHash', async () => {
    const file = store.sqliteFile;
    assert.ok(file !== undefined);
    const fallbackWrites: number[] = [];
    const inThread = inThreadWriter(store.requestLog, jsCryptoBackend);
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
    const known = `0x${'ee'.repeat(32)}`;
    await Promise.all([
      writer.write(Array.from({ length: 120 }, (_, i) => entry(i, inputV06(BigInt(i))))),
      writer.write([entry(200, inputV08(7n)), entry(201, known), entry(202, null)]),
    ]);
    await writer.close();
    assert.deepEqual(fallbackWrites, [], 'nothing went the fallback way');
    const all = await rows();
    assert.equal(all.length, 123);
    const byAt = new Map(all.map((r) => [r.at, r]));
    for (const i of [0, 57, 119]) {
      const expected = userOpHashV06({ userOp: opV06(BigInt(i)), entryPoint, chainId: 1 }, viemKeccak);
      assert.equal(byAt.get(1_000 + i)?.userOpHash, expected.toLowerCase());
    }
    const v08 = inputV08(7n);
    assert.ok(v08.version === '0.8');
    assert.equal(byAt.get(1_200)?.userOpHash, userOpHashForVersion(v08, viemKeccak).toLowerCase());
    assert.equal(byAt.get(1_201)?.userOpHash, known);
    assert.equal(byAt.get(1_202)?.userOpHash, null);
    assert.equal(byAt.get(1_000)?.sender, sender.toLowerCase());
    assert.equal(new Set(all.map((r) => r.id)).size, 123, 'every row its own id');
  });

  test('a thread that cannot open its database: every entry is written on the calling thread, the failure logged', async () => {
    const before = (await rows()).length;
    const errors: string[] = [];
    const writer = startRequestLogThread({
      file: join(dir, 'no-such-dir', 'patron.sqlite'),
      fallback: inThreadWriter(store.requestLog, jsCryptoBackend),
      logger: { error: (_o, m) => errors.push(m) },
    });
    await writer.write(Array.from({ length: 10 }, (_, i) => entry(5_000 + i, inputV06(BigInt(5_000 + i)))));
    await writer.write([entry(6_000, null)]);
    await writer.close();
    assert.equal((await rows()).length, before + 11);
    assert.equal(errors.length, 1);
  });
});
