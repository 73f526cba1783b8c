// The second process of test/policies.userCaps.test.ts: opens the store named by its arguments (an SQLite file, or
// a PostgreSQL URL and schema), waits for "go" on stdin so both processes start together, then signs COUNT
// requests at once for USER, each from its own fresh sender, each worth WEI, through its own policy gate, and
// prints how many were signed.
import { createInterface } from 'node:readline';
import { openStore } from '../../src/store/store.js';
import { randomSender, signThrough, userCapInstance } from './userCapGate.js';

const [storage, target, schema, dappId, user, count, wei] = process.argv.slice(2);
if (storage === undefined || target === undefined || dappId === undefined || user === undefined) process.exit(2);
const store = await openStore(
  storage === 'sqlite'
    ? { storage: { kind: 'sqlite', file: target } }
    : { storage: { kind: 'postgres', url: target, poolSize: 10 }, ...(schema ? { pgSchema: schema } : {}) },
);
const { gate } = userCapInstance(store);
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
    signThrough({ gate, dappId, sender: randomSender(), user, worstCaseWei: BigInt(wei ?? '1') }),
  ),
);
process.stdout.write(`${results.filter((r) => r === 'ok').length}\n`);
await store.close();
