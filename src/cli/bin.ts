import { runCli } from './main.js';

/** Entry of the `patron` bin (bin/patron.js loads the compiled copy of this file). */
const code = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  io: {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  },
});
process.exitCode = code;
