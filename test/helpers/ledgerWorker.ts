// A second process on the same database for test/spendLedger.test.ts: opens the store named by its arguments
// (an SQLite file, or a PostgreSQL URL and schema), waits for "go" on stdin so both processes start together,
// then makes COUNT concurrent reservations of one op against KEY under LIMIT and prints how many were admitted.
// With ID and FIRST: every reservation is of that one id (one op key signed again and again), the i-th for FIRST + i
// wei, and it prints how many were admitted and the largest amount admitted.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { openStore } from '../../src/store/store.js';

const [storage, target, schema, dappId, key, limit, count, sameId, first] = process.argv.slice(2);
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
const amountOf = (i: number) => (sameId === undefined ? 1n : BigInt(first ?? '0') + BigInt(i));
const results = await Promise.all(
  Array.from({ length: Number(count) }, (_, i) =>
    store.spendLedger.reserve({
      id: sameId ?? randomUUID(),
      dappId,
      chainId: 31337,
      userOpHash: undefined,
      charges: [
        {
          key,
          unit: sameId === undefined ? 'ops' : 'wei',
          amount: amountOf(i),
          limit: BigInt(limit ?? '0'),
          windowEnd: undefined,
        },
      ],
      expiresAt: Date.now() + 60_000,
      now: Date.now(),
    }),
  ),
);
const admitted = results.flatMap((r, i) => (r.ok ? [amountOf(i)] : []));
let largest = 0n;
for (const a of admitted) if (a > largest) largest = a;
process.stdout.write(sameId === undefined ? `${admitted.length}\n` : `${admitted.length} ${largest}\n`);
await store.close();
