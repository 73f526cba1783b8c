import { parseArgs } from 'node:util';
import { localServiceAddress } from '../config/listenAddress.js';
import { errorSummary } from '../errors/errorSummary.js';
import type { CliIo } from './cliOutput.js';

/**
 * Under the 5 s timeout compose.yaml and the Containerfile give the check: a hung service fails with our message
 * rather than being killed by the runtime with none.
 */
const TIMEOUT_MS = 4000;

const USAGE = '[--path /readyz] [--url BASE]';

/**
 * `patron healthcheck [--path /readyz] [--url BASE]`: GET the running service's probe and exit 0 on a 2xx, 1 on
 * anything else with one line on stderr. The container health check runs it as an exec list
 * (`["CMD", "patron", "healthcheck"]`), so no shell parses it: the `node -e "…"` it replaces broke under
 * podman-compose, which hands a CMD list to /bin/sh as one string. It reads only PORT and HOST (the service's own,
 * from the container's environment): no configuration, storage, chain or secret, so a probe opens nothing and
 * cannot fail on a setting that has nothing to do with whether the service answers. bin.ts loads this file alone for
 * it (not the CLI's modules, ~1 s of start-up per probe); `argv` is what follows the word `healthcheck`.
 */
export async function runHealthcheck(args: {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  io: CliIo;
}): Promise<number> {
  const fail = (message: string, code = 1) => {
    args.io.stderr(`patron healthcheck: ${message}\n`);
    return code;
  };
  let options: { path?: string | undefined; url?: string | undefined; help?: boolean | undefined };
  try {
    options = parseArgs({
      args: [...args.argv],
      strict: true,
      allowPositionals: false,
      options: { path: { type: 'string' }, url: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }).values;
  } catch (err) {
    return fail(`${err instanceof Error ? err.message : String(err)} (usage: patron healthcheck ${USAGE})`, 2);
  }
  if (options.help === true) {
    args.io.stdout(`Usage: patron healthcheck ${USAGE}\n`);
    return 0;
  }
  const path = options.path ?? '/readyz';
  if (!path.startsWith('/')) return fail(`--path must start with "/", got "${path}"`);
  let base = options.url;
  if (base === undefined) {
    const address = localServiceAddress(args.env);
    if (!address.ok) return fail(address.problems.join('; '));
    base = `http://${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
  }
  if (!URL.canParse(path, base)) return fail(`--url must be an absolute URL, got "${base}"`);
  const target = new URL(path, base);
  try {
    const res = await fetch(target, { signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'manual' });
    await res.body?.cancel();
    if (res.status >= 200 && res.status < 300) return 0;
    return fail(`GET ${target.href} answered ${res.status}`);
  } catch (err) {
    const reason =
      err instanceof DOMException && err.name === 'TimeoutError'
        ? `no answer within ${TIMEOUT_MS / 1000} s`
        : errorSummary(err);
    return fail(`GET ${target.href} failed: ${reason}`);
  }
}
