import type { CliIo } from './cliOutput.js';

/**
 * Entry of the `patron` bin (bin/patron.js loads the compiled copy of this file). `patron start` is the service
 * itself, in this process (what `npm start` runs, for an installed package and for systemd or a container): the
 * service's module runs on import, and its configuration comes from the environment as always.
 */
const [first, ...rest] = process.argv.slice(2);
if (first === 'start') {
  if (rest.length > 0) {
    process.stderr.write(`patron: start takes no arguments (configure it with environment variables)\n`);
    process.exit(2);
  }
  await import('../main.js');
} else if (first === 'healthcheck') {
  // Every few seconds in a container: this file only, not the whole CLI's modules.
  const { runHealthcheck } = await import('./healthcheck.js');
  process.exitCode = await runHealthcheck({ argv: rest, env: process.env, io: processIo() });
} else {
  process.exitCode = await runCliFromProcess();
}

async function runCliFromProcess(): Promise<number> {
  const { runCli } = await import('./main.js');
  return runCli({ argv: process.argv.slice(2), env: process.env, io: processIo() });
}

function processIo(): CliIo {
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}
