/**
 * The stored state is one this process must not run against (a master key that does not open its secrets, a
 * schema newer than this build). The message is the whole story for the operator: what does not match, named by
 * its setting, and what to do. The server prints it and exits non-zero (src/main.ts); the CLI prints it as is.
 */
export class StartRefusedError extends Error {
  override readonly name = 'StartRefusedError';
}
