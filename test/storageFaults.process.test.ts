import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { Sqlite } from '../src/store/db/sqliteDriver.js';
import { type ServiceProcess, spawnService } from './helpers/serviceProcess.js';
import {
  canMount,
  fill,
  freePort,
  ownPostgres,
  postgresBinaries,
  readyz,
  type SponsorAnswer,
  smallFileSystem,
  sponsor,
  sponsorTarget,
  until,
} from './helpers/storageFaultRig.js';
import { TEST_RATE_LIMITS } from './helpers/testContext.js';

/**
 * Storage faults, injected under the real service (docs/guides/operations.md, "Storage faults"): a small file
 * system that fills, a data directory that is read-only, a database another process keeps locked, and a PostgreSQL
 * server stopped and restarted under load, then made read-only as a standby would be. Each time: /readyz fails while
 * writes fail, sponsorships answer 503 / -32050 with Retry-After (never -32603, never a hang), one log line names
 * the cause and the path, the metric says so, and service resumes by itself once the fault clears, with every
 * acknowledged sponsorship in the ledger.
 *
 * Before: a full disk answered -32603 to every request while /readyz said 200, and the log said
 * `cannot rollback - no transaction is active`; a read-only data directory failed with `unable to open database file`.
 */
const services: ServiceProcess[] = [];
const cleanups: (() => void)[] = [];
after(async () => {
  await Promise.all(services.map((s) => s.stop()));
  for (const c of cleanups.reverse()) c();
});

async function start(env: Record<string, string>): Promise<{ service: ServiceProcess; base: string; metrics: string }> {
  const metricsPort = await freePort();
  const service = spawnService({
    PATRON_DEMO: 'true',
    PATRON_RATE_LIMITS: TEST_RATE_LIMITS,
    PATRON_METRICS: 'on',
    PATRON_METRICS_PORT: String(metricsPort),
    ...env,
  });
  services.push(service);
  const base = await service.baseUrl();
  await until('the demo API key', async () => (/apiKey {6}pk\./.test(service.output()) ? true : undefined));
  return { service, base, metrics: `http://127.0.0.1:${metricsPort}/metrics` };
}

async function metric(url: string, name: string): Promise<string> {
  const text = await (await fetch(url)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .join('\n');
}

function assertStorageRefusal(a: SponsorAnswer, kind: string): void {
  assert.equal(a.status, 503, JSON.stringify(a.body));
  assert.equal(a.body.error?.code, -32050, JSON.stringify(a.body));
  assert.deepEqual(a.body.error?.data, { rule: 'storage', kind, retryAfterSeconds: 5 });
  assert.equal(a.retryAfter, '5');
}

function lines(out: string, pattern: RegExp): string[] {
  return out.split('\n').filter((l) => pattern.test(l));
}

const mountProblem = canMount();

describe('SQLite', { skip: mountProblem }, () => {
  test('a disk that fills: 503 -32050 with Retry-After, /readyz 503, one line with the path; resumes when space is freed', {
    timeout: 120_000,
  }, async () => {
    const small = smallFileSystem('6m');
    cleanups.push(() => small.unmount());
    const dataDir = path.join(small.dir, 'data');
    const { service, base, metrics } = await start({ PATRON_DATA_DIR: dataDir });
    const target = await sponsorTarget(base, service.output());
    let nonce = 0;
    let acknowledged = 0;
    const first = await sponsor(target, nonce++);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    acknowledged++;

    const filler = fill(small.dir);
    const during = await Promise.all(Array.from({ length: 8 }, () => sponsor(target, nonce++)));
    for (const a of during) {
      // A write that still found room in a page already there may go through: acknowledged, so it must be kept.
      if (a.status === 200) acknowledged++;
      else assertStorageRefusal(a, 'disk_full');
    }
    assert.ok(
      during.some((a) => a.status === 503),
      'some sponsorships were refused',
    );
    const notReady = await readyz(base);
    assert.equal(notReady.status, 503);
    assert.equal(notReady.body.fault?.kind, 'disk_full');
    assert.match(await metric(metrics, 'patron_storage_up'), /^patron_storage_up 0$/m);
    assert.match(await metric(metrics, 'patron_storage_faults_total'), /kind="disk_full"} 1$/m);
    const out = service.output();
    const named = lines(out, /storage fault: disk full at /);
    assert.equal(named.length, 1, out);
    assert.ok(named[0]?.includes(path.join(dataDir, 'patron.sqlite')), named[0]);
    assert.doesNotMatch(out, /cannot rollback/);
    assert.doesNotMatch(out, /JSON-RPC request failed/);

    fs.rmSync(filler);
    await until('ready again', async () => ((await readyz(base)).status === 200 ? true : undefined));
    const back = await sponsor(target, nonce++);
    assert.equal(back.status, 200, JSON.stringify(back.body));
    acknowledged++;
    assert.equal(lines(service.output(), /storage recovered: disk full at /).length, 1);
    assert.match(await metric(metrics, 'patron_storage_up'), /^patron_storage_up 1$/m);

    await service.stop();
    const db = new Sqlite(path.join(dataDir, 'patron.sqlite'), { readonly: true });
    try {
      const { n } = db.prepare('SELECT count(*) AS n FROM spend_reservations').get() as { n: number };
      assert.ok(n >= acknowledged, `${n} reservations, ${acknowledged} sponsorships acknowledged`);
    } finally {
      db.close();
    }
  });

  test('a read-only data directory: the start fails in one line naming the directory and why', {
    timeout: 60_000,
  }, async () => {
    const small = smallFileSystem('1m');
    cleanups.push(() => small.unmount());
    fs.mkdirSync(path.join(small.dir, 'data'));
    fs.writeFileSync(path.join(small.dir, 'data', 'master.key'), `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    const { spawnSync } = await import('node:child_process');
    assert.equal(spawnSync('mount', ['-o', 'remount,ro', small.dir]).status, 0);
    const service = spawnService({ PATRON_DATA_DIR: path.join(small.dir, 'data') });
    services.push(service);
    assert.notEqual(await service.exitCode(60_000), 0);
    const out = service.output();
    assert.match(
      out,
      /the database \S+\/data\/patron\.sqlite cannot be opened: its directory \S+\/data is on a read-only file system/,
    );
  });
});

describe('SQLite, locked', () => {
  test('another process holds the write lock: 503 "locked" after the wait, /readyz 503; resumes when it lets go', {
    timeout: 120_000,
  }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-locked-'));
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const { service, base } = await start({ PATRON_DATA_DIR: dataDir });
    const target = await sponsorTarget(base, service.output());
    assert.equal((await sponsor(target, 0)).status, 200);
    const other = new Sqlite(path.join(dataDir, 'patron.sqlite'));
    cleanups.push(() => other.open && other.close());
    other.exec('BEGIN EXCLUSIVE');
    const refused = await sponsor(target, 1);
    assertStorageRefusal(refused, 'locked');
    const notReady = await readyz(base);
    assert.equal(notReady.status, 503);
    assert.equal(notReady.body.fault?.kind, 'locked');
    assert.equal(lines(service.output(), /storage fault: locked by another connection at /).length, 1);
    other.exec('ROLLBACK');
    other.close();
    await until('ready again', async () => ((await readyz(base)).status === 200 ? true : undefined));
    assert.equal((await sponsor(target, 2)).status, 200);
  });
});

const pgBin = postgresBinaries();
describe('PostgreSQL', { skip: pgBin === undefined ? 'no PostgreSQL binaries (Debian postgresql)' : false }, () => {
  test('stopped and restarted under load, then read-only like a standby: 503 while down, resumes, nothing acknowledged lost', {
    timeout: 240_000,
  }, async () => {
    const server = await ownPostgres(pgBin ?? '');
    cleanups.push(() => server.destroy());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-pgfault-'));
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const { service, base, metrics } = await start({ DATABASE_URL: server.url, PATRON_DATA_DIR: dataDir });
    const target = await sponsorTarget(base, service.output());

    // The load: four clients sponsoring one op after another until told to stop.
    let nonce = 0;
    let stop = false;
    const answers: { at: number; a: SponsorAnswer; ms: number }[] = [];
    const client = async () => {
      while (!stop) {
        const t0 = Date.now();
        const a = await sponsor(target, nonce++);
        answers.push({ at: t0, a, ms: Date.now() - t0 });
        if (a.status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
    };
    const load = Promise.all([client(), client(), client(), client()]);
    await until('some sponsorships', async () =>
      answers.filter((x) => x.a.status === 200).length >= 8 ? true : undefined,
    );

    server.stop();
    const stoppedAt = Date.now();
    await until('a refusal while the server is down', async () =>
      answers.some((x) => x.at > stoppedAt && x.a.status === 503) ? true : undefined,
    );
    const notReady = await readyz(base);
    assert.equal(notReady.status, 503);
    assert.equal(notReady.body.fault?.kind, 'unreachable');
    assert.match(await metric(metrics, 'patron_storage_up'), /^patron_storage_up 0$/m);

    server.start();
    const restartedAt = Date.now();
    await until('sponsorships after the restart', async () =>
      answers.filter((x) => x.at > restartedAt && x.a.status === 200).length >= 4 ? true : undefined,
    );
    await until('ready again', async () => ((await readyz(base)).status === 200 ? true : undefined));

    // A failover onto a node that refuses writes (a standby): named read-only, cleared when it takes writes again.
    server.sql('ALTER SYSTEM SET default_transaction_read_only = on');
    server.sql('SELECT pg_reload_conf()');
    const readOnlyAt = Date.now();
    await until('a read-only refusal', async () =>
      answers.some(
        (x) =>
          x.at > readOnlyAt &&
          x.a.body.error?.code === -32050 &&
          (x.a.body.error.data as { kind?: string })?.kind === 'read_only',
      )
        ? true
        : undefined,
    );
    assert.equal((await readyz(base)).body.fault?.kind, 'read_only');
    server.sql('ALTER SYSTEM RESET default_transaction_read_only');
    server.sql('SELECT pg_reload_conf()');
    const writableAt = Date.now();
    await until('sponsorships once writable', async () =>
      answers.filter((x) => x.at > writableAt && x.a.status === 200).length >= 4 ? true : undefined,
    );
    stop = true;
    await load;

    for (const { a, ms } of answers) {
      if (a.status === 200) continue;
      // Never an internal error, never a hang: the transient refusal, within the pool's connect timeout.
      assert.equal(a.status, 503, JSON.stringify(a.body));
      assert.equal(a.body.error?.code, -32050, JSON.stringify(a.body));
      assert.ok(ms < 15_000, `a refusal took ${ms} ms`);
    }
    const out = service.output();
    assert.equal(
      lines(out, /storage fault: database unreachable at postgres:\/\/127\.0\.0\.1:\d+\/postgres/).length >= 1,
      true,
      out,
    );
    assert.equal(lines(out, /storage fault: read-only at postgres:/).length, 1, out);
    assert.doesNotMatch(out, /JSON-RPC request failed/);
    // The background loops (the lifecycle outbox every 250 ms, settlement, the guard) handed their storage failures
    // to the storage's health: the fault is named there, not in a warning per round.
    // (The readiness probe's own access line is a warning while it fails, by design: probeLog.ts.)
    const noisy = lines(out, /"level":(40|50)/).filter(
      (l) => !/storage (fault|recovered)|"msg":"probe failed"/.test(l),
    );
    assert.ok(noisy.length <= 1, noisy.join('\n'));

    const acknowledged = answers.filter((x) => x.a.status === 200).length;
    await service.stop();
    const db = new pg.Client({ connectionString: server.url });
    await db.connect();
    try {
      const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM spend_reservations');
      assert.ok(Number(rows[0]?.n) >= acknowledged, `${rows[0]?.n} reservations, ${acknowledged} acknowledged`);
    } finally {
      await db.end();
    }
  });
});
