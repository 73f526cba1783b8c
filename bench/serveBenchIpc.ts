import fs from 'node:fs';

/**
 * The IPC every bench server speaks with its parent: 'cpu' is answered with process.cpuUsage() (the
 * benchmark's CPU µs per request), 'memory' with process.memoryUsage() (the memory benchmark), 'stop' closes the server and its dependencies, removes its data
 * directory and exits. Other messages go to `onOther`.
 */
export function serveBenchIpc(args: {
  close: () => Promise<void>;
  dataDir: string;
  onOther?: (msg: unknown) => void;
}): void {
  process.on('message', (msg: unknown) => {
    if (msg === 'cpu') process.send?.({ cpu: process.cpuUsage() });
    else if (msg === 'memory') process.send?.({ memory: process.memoryUsage() });
    else if (msg === 'stop') {
      void args.close().then(() => {
        fs.rmSync(args.dataDir, { recursive: true, force: true });
        process.exit(0);
      });
    } else args.onOther?.(msg);
  });
}
