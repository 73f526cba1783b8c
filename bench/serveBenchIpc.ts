import fs from 'node:fs';

/**
 * CPU µs of this process's main thread alone (the serving loop), from /proc (10 ms ticks; Node 20 has no
 * per-thread cpuUsage): process.cpuUsage() adds every thread, the request log's writer thread among them.
 */
function serveLoopCpuMicros(): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis): utime is the
    // 14th field of the line, stime the 15th, in clock ticks (USER_HZ, 100 on Linux).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * The IPC every bench server speaks with its parent: 'cpu' is answered with process.cpuUsage() (the
 * benchmark's CPU µs per request) and the main thread's own CPU, 'memory' with process.memoryUsage() (the memory benchmark), 'stop' closes the server and its dependencies, removes its data
 * directory and exits. Other messages go to `onOther`.
 */
export function serveBenchIpc(args: {
  close: () => Promise<void>;
  dataDir: string;
  onOther?: (msg: unknown) => void;
}): void {
  process.on('message', (msg: unknown) => {
    if (msg === 'cpu') process.send?.({ cpu: process.cpuUsage(), loop: serveLoopCpuMicros() });
    else if (msg === 'memory') process.send?.({ memory: process.memoryUsage() });
    else if (msg === 'stop') {
      void args.close().then(() => {
        fs.rmSync(args.dataDir, { recursive: true, force: true });
        process.exit(0);
      });
    } else args.onOther?.(msg);
  });
}
