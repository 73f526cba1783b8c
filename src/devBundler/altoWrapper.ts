/**
 * The program between Patron and alto, run as `node -e ALTO_WRAPPER <alto cli> [args…]`. alto watches neither its
 * stdin nor its parent, so a Patron that dies without running its handlers (SIGKILL, the OOM killer, a native crash)
 * left it running and holding its port (measured: still answering 3 s after its parent's SIGKILL). Patron spawns
 * this wrapper with a stdin pipe it never writes to or closes; when Patron's process ends, whatever the cause, the
 * kernel closes that pipe, the wrapper reads EOF and stops alto (SIGTERM, SIGKILL after 5 s). A `--require` preload
 * in alto's own process would save the extra Node process (~43 MB) but put Patron code inside alto; this keeps alto
 * an unmodified program of its own.
 *
 * It prints `patron-alto-pid <pid>` first so that Patron can log alto's pid; alto's own output passes through.
 * An inline script rather than a file: the same source serves `src/` under tsx and the built `dist/`, with no asset to
 * copy or ship.
 */
export const ALTO_WRAPPER = `
const { spawn } = require('node:child_process');
const child = spawn(process.execPath, process.argv.slice(1), { stdio: ['ignore', 'inherit', 'inherit'] });
process.stdout.write('patron-alto-pid ' + child.pid + '\\n');
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  child.kill('SIGTERM');
  setTimeout(() => child.kill('SIGKILL'), 5000).unref();
};
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, stop);
child.on('exit', (code, signal) => process.exit(code === null ? (signal === null ? 0 : 1) : code));
`;

/** The wrapper's first line, naming alto's pid. */
export const ALTO_PID_LINE = /^patron-alto-pid (\d+)$/;
