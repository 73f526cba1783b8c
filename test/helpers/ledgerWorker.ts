// A second process on the same database for test/spendLedger.test.ts: opens the store named by its arguments
// (an SQLite file, or a PostgreSQL URL and schema), waits for "go" on stdin so both processes start together,
// then makes COUNT concurrent reservations of one op against KEY under LIMIT and prints how many were admitted.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { openStore } from '../../src/store/store.js';

const [storage, target, schema, dappId, key, limit, count] = process.argv.slice(2);
if (storage === undefined || target === undefined || dappId === undefined || key === undefined) process.exit(2);
const store = await openStore(
  storage === 'sqlite'
    ? { storage: { kind: 'sqlite', file: target } }
    : { storage: { kind: 'postgres', url: target, poolSize: 10 }, ...(schema ? { pgSchema: schema } : {}) },
);
process.stdout.write('ready\n');
await new Promise<void>((resolve) => {
  const rl = createInterface({ input: process.stdin });
  rl.once('line', () => {
    rl.close();
    resolve();
  });
});
const results = await Promise.all(
  Array.from({ length: Number(count) }, () =>
    store.spendLedger.reserve({
      id: randomUUID(),
      dappId,
      chainId: 31337,
      userOpHash: undefined,
      charges: [{ key, unit: 'ops', amount: 1n, limit: BigInt(limit ?? '0'), windowEnd: undefined }],
      expiresAt: Date.now() + 60_000,
      now: Date.now(),
    }),
  ),
);
process.stdout.write(`${results.filter((r) => r.ok).length}\n`);
await store.close();
