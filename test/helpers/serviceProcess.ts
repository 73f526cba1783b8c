import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { TEST_DATABASE_URL, TEST_MASTER_KEY } from './testContext.js';

/**
 * The real service (`src/main.ts`) in a process of its own, for the tests of several instances on one database:
 * its stdout and stderr collected, its base URL read from its "Patron is listening" log line.
 */
export interface ServiceProcess {
  readonly child: ChildProcess;
  /** Everything it printed so far (stdout and stderr as they came). */
  output(): string;
  /** What it printed on stderr alone. */
  errors(): string;
  /** Its base URL once it listens (fails naming its output if it exits or does not start in time). */
  baseUrl(timeoutMs?: number): Promise<string>;
  /** SIGTERM, and its exit awaited (nothing if it already exited). */
  stop(): Promise<void>;
  /** Its exit code, for a start that must fail: SIGKILLed (code null) if it has not exited within `timeoutMs`. */
  exitCode(timeoutMs?: number): Promise<number | null>;
}

/** The test database's URL working in `schema` (every connection's search_path). */
export function schemaDatabaseUrl(schema: string): string {
  const url = new URL(String(TEST_DATABASE_URL));
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/**
 * What every instance of a multi-instance test shares: the test schema, a data directory, the test master key
 * (so each reads the others' encrypted secrets), no embedded dev chain. Each test adds its own settings.
 */
export function instanceEnv(schema: string, dataDir: string): Record<string, string> {
  return {
    DATABASE_URL: schemaDatabaseUrl(schema),
    PATRON_DEV_CHAIN: 'false',
    PATRON_DATA_DIR: dataDir,
    PATRON_MASTER_KEY: TEST_MASTER_KEY.toString('hex'),
  };
}

/**
 * `command` runs something else than the sources under tsx (the packaged `patron start`); `baseEnv` replaces this
 * process's environment as the base (a clean one, so that nothing of the test run's configuration leaks in).
 */
export function spawnService(
  env: Record<string, string>,
  opts: { command?: readonly [string, ...string[]]; cwd?: string; baseEnv?: NodeJS.ProcessEnv } = {},
): ServiceProcess {
  const [file, ...args] = opts.command ?? [process.execPath, '--import', 'tsx', 'src/main.ts'];
  const child = spawn(file, args, {
    env: { ...(opts.baseEnv ?? process.env), PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(opts.cwd === undefined ? {} : { cwd: opts.cwd }),
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
    err += c.toString();
  });
  return {
    child,
    output: () => out,
    errors: () => err,
    async baseUrl(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const base = /"baseUrl":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out)?.[1];
        if (base !== undefined) return base;
        assert.equal(child.exitCode, null, `the service exited:\n${out}`);
        assert.ok(Date.now() < deadline, `the service did not start:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
    async exitCode(timeoutMs = 40_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
