import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';

/**
 * Child processes of a benchmark that starts whole services (bench/policyCluster.ts): each in a process group of
 * its own, so stopping it also stops what it forked (a cluster's workers), with its output kept for the failure
 * message, and a wait for a line it prints.
 */
export interface BenchChild {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves when `pattern` has matched `count` lines of stdout or stderr; rejects if the process exits first. */
  waitForLines(pattern: RegExp, count: number, timeoutMs: number): Promise<void>;
  /** The last lines it printed. */
  tail(): string;
  /** SIGTERM to its process group, SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

const TAIL_LINES = 40;

export function startChild(args: {
  name: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
}): BenchChild {
  const child = spawn(args.command, [...args.args], {
    env: args.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: `kill(-pid)` reaches the cluster's workers too, and a Ctrl-C in the terminal reaches
    // the benchmark only, which then stops its children in order.
    detached: true,
  });
  const lines: string[] = [];
  const watchers: { pattern: RegExp; left: number; done: () => void }[] = [];
  let exited = child.exitCode !== null;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      lines.push(line);
      if (lines.length > TAIL_LINES) lines.shift();
      for (const w of watchers) {
        if (w.left > 0 && w.pattern.test(line) && --w.left === 0) w.done();
      }
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const tail = () => lines.join('\n');
  return {
    name: args.name,
    child,
    tail,
    waitForLines: (pattern, count, timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${args.name}: no "${pattern.source}" ×${count} within ${timeoutMs} ms\n${tail()}`)),
          timeoutMs,
        );
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        watchers.push({ pattern, left: count, done });
        void exit.then(() => {
          clearTimeout(timer);
          reject(new Error(`${args.name} exited (code ${child.exitCode}) before it was ready:\n${tail()}`));
        });
      }),
    async stop(graceMs = 10_000) {
      if (exited || child.pid === undefined) return;
      const group = -child.pid;
      try {
        process.kill(group, 'SIGTERM');
      } catch {
        return; // already gone
      }
      // The leader (a cluster's primary) may exit before its workers: wait for the whole group to be gone.
      const deadline = Date.now() + graceMs;
      while (groupAlive(group) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      if (groupAlive(group)) {
        try {
          process.kill(group, 'SIGKILL');
        } catch {
          // exited meanwhile
        }
      }
      await exit;
    },
  };
}

/** Whether any process of the group is left (signal 0 checks without sending anything). */
function groupAlive(group: number): boolean {
  try {
    process.kill(group, 0);
    return true;
  } catch {
    return false;
  }
}

/** A TCP port that was free a moment ago on 127.0.0.1 (the OS's choice). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
