import { runCli } from './main.js';

/** Entry of the `patron` bin (bin/patron.js loads the compiled copy of this file). */
const code = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  io: { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) },
});
process.exitCode = code;
