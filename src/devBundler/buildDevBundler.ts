import type { Logger } from 'pino';
import { DEV_BUNDLER_KEYS } from '../chain/buildChains.js';
import { type DevChain, devChainDeployments } from '../chain/embeddedChain.js';
import type { Config } from '../config/config.js';
import { altoCli } from './altoCli.js';
import { createDevBundler, type DevBundler } from './devBundler.js';
import { freePort } from './portIsFree.js';

/**
 * The EntryPoint versions alto 0.0.20 bundles for (its `--entrypoints` takes each; measured on the dev chain): every
 * version the dev chain deploys.
 */
const ALTO_ENTRY_POINT_VERSIONS: ReadonlySet<string> = new Set(['0.6', '0.7', '0.8', '0.9']);

/**
 * The dev bundler for this process, not started yet (it needs Patron listening, its chain's RPC being Patron's
 * `/chain/{id}`), or undefined when it is off: PATRON_DEV_BUNDLER=false, no dev chain, or alto not installed (an
 * installed `patron` package has no devDependencies), which is said in one log line.
 */
export async function buildDevBundler(args: {
  readonly config: Pick<Config, 'devBundler' | 'port'>;
  readonly devChain: DevChain | undefined;
  readonly logger: Logger;
}): Promise<DevBundler | undefined> {
  const { config, devChain, logger } = args;
  if (!config.devBundler.enabled || devChain === undefined) return undefined;
  const cli = altoCli();
  if (cli === undefined) {
    logger.info(
      'the dev bundler is off: @pimlico/alto is not installed (a devDependency, which an installed patron package does not have)',
    );
    return undefined;
  }
  // Beside Patron's port by default; Patron on an ephemeral port (PORT=0, the tests) gets an ephemeral one too.
  const port = config.devBundler.port ?? (config.port === 0 ? await freePort() : config.port + 1);
  const log = logger.child({ component: 'bundler' });
  return createDevBundler({
    altoCli: cli,
    port,
    entryPoints: devChainDeployments(devChain)
      .filter((d) => ALTO_ENTRY_POINT_VERSIONS.has(d.entryPointVersion))
      .map((d) => d.entryPoint),
    executorKey: DEV_BUNDLER_KEYS.executor,
    utilityKey: DEV_BUNDLER_KEYS.utility,
    ...(devChain.fork?.opStack === true ? { chainType: 'op-stack' as const } : {}),
    log: { info: (m) => log.info(m), warn: (m) => log.warn(m), error: (m) => log.error(m) },
  });
}
