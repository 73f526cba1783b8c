import { runCli } from '../../src/cli/main.js';
import type { Store } from '../../src/store/store.js';
import { TEST_MASTER_KEY } from './testContext.js';

/** An environment no command of the CLI reads a file from: the commands run on the store the test passes in. */
export const CLI_TEST_ENV: Readonly<Record<string, string>> = {
  PATRON_DATA_DIR: '/nonexistent-patron-test',
  LOG_LEVEL: 'silent',
};

/** `patron <argv>` in-process on the test's store, with what it wrote to each stream. */
export async function runCliOnStore(args: {
  readonly store: Store;
  readonly argv: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv: args.argv,
    env: { ...CLI_TEST_ENV, ...args.env },
    io: {
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
    },
    store: args.store,
    masterKey: TEST_MASTER_KEY,
  });
  return { code, stdout, stderr };
}

/** The same with `--json`: the one JSON document the command wrote (its answer or its error). */
export async function runCliJson(args: {
  readonly store: Store;
  readonly argv: readonly string[];
}): Promise<{ code: number; out: unknown }> {
  const { code, stdout, stderr } = await runCliOnStore({ store: args.store, argv: [...args.argv, '--json'] });
  return { code, out: JSON.parse(stdout + stderr) };
}
