import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { BACKEND, createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * The ledger's CSV export is streamed: 50,000 rows (a busy dApp's month) read over real HTTP on 127.0.0.1, every
 * row arrives, and the server's heap grows by far less than the export's size held as objects would take (the
 * rows are read 1,000 at a time while the reply is written). The client counts lines and keeps nothing.
 */
const ROWS = 50_000;
const T0 = Date.UTC(2026, 9, 1);

let ctx: TestContext;
let tenant: Tenant;
let url: string;

before(async () => {
  ctx = await createTestContext();
  tenant = await createTenant(ctx.deps);
  // Through the spend ledger's own write, in waves the SQLite and PostgreSQL batchers group.
  const ledger = ctx.deps.store.spendLedger;
  for (let start = 0; start < ROWS; start += 1000) {
    await Promise.all(
      Array.from({ length: Math.min(1000, ROWS - start) }, (_, k) => {
        const i = start + k;
        const hash = `0x${i.toString(16).padStart(64, '0')}`;
        return ledger.reserve({
          id: `31337:${hash}`,
          dappId: tenant.dappId,
          chainId: 31337,
          userOpHash: hash,
          charges: [],
          expiresAt: T0 + i * 50 + 600_000,
          now: T0 + i * 50,
          item: {
            sender: `0x${(i % 997).toString(16).padStart(40, '0')}`,
            user: `user-${i % 101}`,
            policyIds: ['11111111-1111-4111-8111-111111111111'],
            worstCaseWei: 10n ** 15n + BigInt(i),
          },
        });
      }),
    );
  }
  url = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
});
after(async () => {
  await ctx.close();
});

/** A full collection, so the heap measured is what is retained, not garbage waiting (the client's included). */
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const retained = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

test(`a 50,000-row CSV export is streamed with the heap bounded (${BACKEND})`, { timeout: 300_000 }, async () => {
  const base = retained();
  let peak = base;
  const res = await fetch(`${url}/api/admin/dapps/${tenant.dappId}/ledger.csv`, {
    headers: { authorization: `Bearer ${tenant.authToken}` },
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('transfer-encoding'), 'chunked', 'sent as it is read, with no length known ahead');
  assert.ok(res.body);
  let lines = 0;
  let bytes = 0;
  let chunks = 0;
  let tail = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    chunks++;
    bytes += chunk.byteLength;
    const text = tail + decoder.decode(chunk, { stream: true });
    const parts = text.split('\r\n');
    tail = parts.pop() ?? '';
    lines += parts.length;
    if (chunks % 20 === 0) peak = Math.max(peak, retained());
  }
  const growthMb = (peak - base) / 1e6;
  assert.equal(lines, ROWS + 1, 'the header and every row');
  assert.ok(chunks > 10, `${chunks} chunks: written page by page`);
  // Measured: streamed, the heap retained stays within ~2 MB of where it started; the same export with every page
  // held until the end (a buffered export) retained ~30 MB. 15 MB tells them apart with room for noise.
  assert.ok(growthMb < 15, `heap grew ${growthMb.toFixed(1)} MB for a ${(bytes / 1e6).toFixed(1)} MB export`);
  console.log(`# ledger export: ${(bytes / 1e6).toFixed(1)} MB in ${chunks} chunks, heap +${growthMb.toFixed(1)} MB`);
});
