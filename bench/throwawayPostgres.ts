import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A PostgreSQL server for one benchmark run, started from the distribution's binaries
 * (/usr/lib/postgresql/<version>/bin) in a temporary directory, listening on 127.0.0.1 only, trust
 * authentication, and removed by `stop()`. PostgreSQL refuses to run as root, so when the benchmark runs as root
 * the server runs as the `postgres` user (runuser) and the directory is handed to that user.
 */
export interface ThrowawayPostgres {
  readonly url: string;
  stop(): void;
}

function postgresBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = fs.existsSync(base)
    ? fs
        .readdirSync(base)
        .filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const v = versions[0];
  if (v === undefined) throw new Error(`no PostgreSQL binaries under ${base}; set DATABASE_URL instead`);
  return path.join(base, v, 'bin');
}

export function startThrowawayPostgres(args: {
  port: number;
  /** More server settings, e.g. `-c synchronous_commit=off` (BENCH_PG_OPTIONS), to see what a commit's fsync costs. */
  extraOptions?: string;
}): ThrowawayPostgres {
  const bin = postgresBin();
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-bench-pg-'));
  const dataDir = path.join(dir, 'data');
  const run = (tool: string, toolArgs: readonly string[]) => {
    const file = path.join(bin, tool);
    if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', file, ...toolArgs], { stdio: 'pipe', cwd: dir });
    else execFileSync(file, [...toolArgs], { stdio: 'pipe', cwd: dir });
  };
  let started = false;
  const stop = () => {
    if (started) {
      try {
        run('pg_ctl', ['stop', '-D', dataDir, '-m', 'immediate', '-w']);
      } catch {
        // Already gone: the directory is removed below either way.
      }
      started = false;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
    run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    started = true;
    run('pg_ctl', [
      'start',
      '-D',
      dataDir,
      '-w',
      '-l',
      path.join(dir, 'server.log'),
      // A socket directory of its own (the default /var/run/postgresql may not exist or be writable) and room for
      // two workers' pools, the CLI and the benchmark. Durability stays at PostgreSQL's defaults (fsync and
      // synchronous commit on), as a deployment would run it: every reservation is a committed transaction.
      '-o',
      `-p ${args.port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200 ${args.extraOptions ?? ''}`,
    ]);
    run('createdb', ['-h', '127.0.0.1', '-p', String(args.port), '-U', 'postgres', 'patron_bench']);
  } catch (err) {
    const log = path.join(dir, 'server.log');
    const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').slice(-20).join('\n') : '';
    stop();
    throw new Error(`could not start a throwaway PostgreSQL: ${(err as Error).message}\n${tail}`, { cause: err });
  }
  return { url: `postgresql://postgres@127.0.0.1:${args.port}/patron_bench`, stop };
}
