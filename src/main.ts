import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { type DemoCredentials, ensureDemoAccount } from './accounts/ensureDemoAccount.js';
import { createApp } from './app.js';
import { verifyChains } from './chain/verifyChains.js';
import { type Config, ConfigError, loadConfig } from './config/config.js';
import { forkEndpointForDisplay } from './config/devChainForkSettings.js';
import { DEV_CHAIN_ID, noChainProblem } from './config/servedChains.js';
import { createDeps, type Deps } from './deps.js';
import { buildDevBundler } from './devBundler/buildDevBundler.js';
import type { DevBundler, DevBundlerStatus } from './devBundler/devBundler.js';
import { StartRefusedError } from './errors/StartRefusedError.js';
import { isPatronMessage } from './ipcMessage.js';
import { createLogger } from './logger.js';
import { servePrimaryMetrics } from './metrics/clusterMetrics.js';
import { unstakedTokenPaymasters } from './paymaster/token/tokenStake.js';
import { alertUrls, checkAlertDestination } from './solvency/alertDestination.js';
import { newestMigration } from './store/db/migrate.js';
import { patronVersion } from './version.js';
import { systemResolver } from './webhooks/webhookUrlPolicy.js';

/**
 * Exit codes of a start that fails. 78 (sysexits' EX_CONFIG): the configuration or the stored state is wrong and a
 * restart cannot fix it (the systemd unit's RestartPreventExitStatus=78 stops the restart loop); 1: anything else,
 * which may pass on its own (a database or an RPC not reachable yet), so the supervisor restarts.
 */
const EXIT_CONFIG = 78;
const EXIT_FAILED = 1;
type StartExit = typeof EXIT_CONFIG | typeof EXIT_FAILED;

/** What a worker tells the primary over the cluster's IPC channel. */
type WorkerMessage =
  | { readonly patron: 'ready' }
  | { readonly patron: 'startFailed'; readonly message: string; readonly exitCode?: StartExit };

/**
 * The process cannot start: alone, it says why on stderr and exits with `exitCode`; as a cluster worker it hands the
 * message to the primary, which prints it once (every worker would fail alike) and exits with that code itself, so
 * that systemd or Kubernetes see the failure instead of a primary restarting workers forever.
 */
function failStart(message: string, exitCode: StartExit = EXIT_FAILED): Promise<never> {
  const send = cluster.isWorker ? process.send?.bind(process) : undefined;
  if (send !== undefined) {
    const msg: WorkerMessage = { patron: 'startFailed', message, exitCode };
    // Exits once the message is written to the channel; until then nothing else runs for this start.
    return new Promise<never>(() => {
      send(msg, undefined, {}, () => process.exit(exitCode));
    });
  }
  process.stderr.write(`${message}\n`);
  process.exit(exitCode);
}

/**
 * Process entry: loadConfig → createDeps → createApp → listen, with a graceful shutdown on SIGINT/SIGTERM.
 * With PATRON_WORKERS > 1 the primary forks that many workers (node:cluster), which share the port and one
 * PostgreSQL database, and replaces any that dies.
 */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) return failStart(err.message, EXIT_CONFIG);
    throw err;
  }
  // The CLI shares loadConfig and may run with no chain yet; the server must not start serving nothing.
  const noChain = noChainProblem(config);
  if (noChain !== undefined) return failStart(`Invalid configuration:\n  - ${noChain}`, EXIT_CONFIG);
  const logger = createLogger({ level: config.logLevel });
  if (config.workers > 1 && cluster.isPrimary) {
    runPrimary(config, logger);
    return;
  }
  const deps = await createDeps(config, logger);
  // Before listening: a chain that is not what the configuration says would make every signature fail on chain.
  const problems = await verifyChains({ chains: deps.chains.list(), signer: deps.signer.address });
  if (problems.length > 0) {
    await deps.close();
    return failStart(
      `Refusing to start: the configured chains do not match what is on chain:\n${problems.map((p) => `  - ${p.message}`).join('\n')}`,
      // An RPC that does not answer may answer at the next start; a chain that is not what is configured will not.
      problems.every((p) => p.unreachable) ? EXIT_FAILED : EXIT_CONFIG,
    );
  }
  // Each operator alert URL is resolved once now: one that cannot be would lose every alert, found out by the outage.
  for (const { setting, url } of alertUrls(config)) {
    const checked = await checkAlertDestination({ url, setting, resolve: systemResolver });
    if (!checked.ok) {
      await deps.close();
      return failStart(`Refusing to start: ${checked.problem}`, EXIT_CONFIG);
    }
    logger.info(
      { check: 'alert_destination', ...checked.destination, setting },
      checked.destination.internal
        ? `operator alerts go to an internal address (allowed for ${setting}; tenant webhooks keep the SSRF rule)`
        : 'operator alerts go to a public address',
    );
  }
  // The token mode on a configured chain needs a staked paymaster (ERC-7562); refused per request, warned here.
  const unstaked = await unstakedTokenPaymasters({
    chains: deps.chains.list(),
    hasTokens: (chainId) => deps.tokenCatalog.snapshot(chainId) !== undefined,
  });
  for (const message of unstaked) logger.warn({ check: 'paymaster_stake' }, message);
  if (deps.crypto.backend.name !== 'native') {
    logger.warn({ reason: deps.crypto.reason }, 'signing with the JavaScript backend: about 10x the CPU per signature');
  }
  // The demo dApp stands on the dev chain (31337, or the forked chain's id) or a served chain 31337 (a local node):
  // without either there is nothing to demonstrate.
  const demoChainId =
    deps.devChain?.chain.chainId ?? (deps.chains.get(DEV_CHAIN_ID) === undefined ? undefined : DEV_CHAIN_ID);
  const demo =
    config.demo && demoChainId !== undefined
      ? await ensureDemoAccount({ accounts: deps.accounts, sessions: deps.sessions, chainId: demoChainId })
      : undefined;
  const devBundler = await buildDevBundler({ config, devChain: deps.devChain, logger });
  const app = createApp({ ...deps, devBundler });
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = config.publicUrl ?? `http://${host}:${address.port}`;
  const bundler =
    devBundler === undefined || deps.devChain === undefined
      ? undefined
      : await startBundler({ bundler: devBundler, address, chainId: deps.devChain.chain.chainId, logger });
  logger.info(
    {
      baseUrl,
      version: patronVersion(),
      schema: newestMigration(),
      storage: deps.store.kind,
      production: config.production,
      signer: deps.signer.address,
      crypto: deps.crypto.backend.name,
    },
    'Patron is listening',
  );
  if (cluster.isPrimary) process.stdout.write(banner({ config, deps, baseUrl, demo, bundler }));
  else process.send?.({ patron: 'ready' } satisfies WorkerMessage);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    // Before the app: alto reads the dev chain through it and would log every failed poll while it stops.
    await devBundler?.close();
    await app.close();
    await deps.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/**
 * Starts the dev bundler against the dev chain as this process serves it (on 127.0.0.1 when listening on every
 * address), and logs its pids: the wrapper's and alto's, which the process tests watch for orphans.
 */
async function startBundler(args: {
  bundler: DevBundler;
  address: AddressInfo;
  chainId: number;
  logger: ReturnType<typeof createLogger>;
}): Promise<DevBundlerStatus> {
  const { bundler, address, logger } = args;
  const anyAddress = address.address === '0.0.0.0' || address.address === '::';
  const host = anyAddress ? '127.0.0.1' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const status = await bundler.start({ rpcUrl: `http://${host}:${address.port}/chain/${args.chainId}` });
  const pids = bundler.pids();
  if (status.state === 'ready') {
    logger.info({ url: status.url, wrapperPid: pids.wrapper, altoPid: pids.alto }, 'the dev bundler is ready');
  } else {
    logger.warn({ url: status.url, reason: status.reason }, 'the dev bundler is off: it did not start');
  }
  return status;
}

/**
 * The primary: forks the workers and replaces one that dies once it has served. A worker that fails before it is
 * ready (a wrong keystore password, chains that do not match, a database it cannot reach) stops the service: the
 * others would fail alike, so the primary prints the first message once, stops every worker and exits with the
 * worker's code (78 for a configuration no restart fixes, else 1).
 */
function runPrimary(config: Config, logger: ReturnType<typeof createLogger>): void {
  let stopping = false;
  const ready = new Set<number>();
  const stopAll = () => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
  };
  const failed = (message: string, exitCode: StartExit = EXIT_FAILED) => {
    if (stopping) return;
    process.stderr.write(`Patron failed to start: ${message}\n`);
    process.exitCode = exitCode;
    stopAll();
  };
  cluster.on('message', (worker, message: unknown) => {
    if (!isPatronMessage<WorkerMessage>(message, ['ready', 'startFailed'])) return;
    if (message.patron === 'ready') ready.add(worker.id);
    else failed(message.message, message.exitCode);
  });
  cluster.on('exit', (worker, code, signal) => {
    const served = ready.delete(worker.id);
    if (stopping) return;
    if (!served) {
      failed(`a worker exited before it was ready (${signal === null ? `code ${code}` : `signal ${signal}`})`);
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another');
    cluster.fork();
  });
  if (config.metrics.enabled) servePrimaryMetrics();
  for (let i = 0; i < config.workers; i++) cluster.fork();
  process.on('SIGINT', stopAll);
  process.on('SIGTERM', stopAll);
  process.stdout.write(`Patron: ${config.workers} workers on ${config.host}:${config.port}\n`);
}

/** What a newcomer needs on the terminal; the auth token is shown only on the start that created it. */
function banner(args: {
  config: Config;
  deps: Deps;
  baseUrl: string;
  demo: DemoCredentials | undefined;
  bundler: DevBundlerStatus | undefined;
}): string {
  const { deps, baseUrl, demo, bundler } = args;
  const lines = [
    '',
    `Patron is running at ${baseUrl}  (storage: ${deps.store.kind}${args.config.storage.kind === 'sqlite' ? ` in ${args.config.dataDir}` : ''})`,
    `  paymaster signer  ${deps.signer.address}  (${deps.signer.backend === 'local' ? `${deps.crypto.backend.name} signing` : `key in ${deps.signer.backend === 'kms' ? 'AWS KMS' : 'a PKCS#11 token'}`})`,
    `  dashboard         ${baseUrl}${args.config.dashboard.basePath}`,
  ];
  for (const c of deps.chains.list()) {
    const fork = c.embedded ? deps.devChain?.fork : undefined;
    lines.push(
      `  chain ${c.chainId}${c.embedded ? ` (embedded dev chain, JSON-RPC at ${baseUrl}/chain/${c.chainId})` : ''}`,
      ...(fork === undefined
        ? []
        : [`    fork of          ${forkEndpointForDisplay(fork.url)} at block ${fork.blockNumber}`]),
      `    EntryPoint v0.6  ${c.entryPoint}`,
      `    paymaster        ${c.paymaster}`,
    );
    const feeTokens = deps.tokenCatalog.snapshot(c.chainId)?.tokens ?? [];
    if (feeTokens.length > 0) {
      lines.push(`    fee tokens       ${feeTokens.map((t) => `${t.symbol} ${t.address}`).join(', ')}`);
    }
    if (c.embedded && bundler !== undefined) {
      lines.push(
        bundler.state === 'ready'
          ? `    bundler          ${bundler.url}  (alto, EntryPoints v0.6-v0.9; ERC-7562 checks off on the dev chain)`
          : `    bundler          off: ${bundler.reason ?? bundler.state}`,
      );
    }
    if (c.demoAccount !== undefined) {
      lines.push(
        `    demo account     ${c.demoAccount.address}  (SimpleAccount holding the fee tokens; owner key in /api/chains, dev only)`,
      );
    }
  }
  if (demo !== undefined) {
    lines.push(
      '',
      'First start: created a demo account. These credentials are shown only now:',
      `  account     ${demo.email}`,
      `  authToken   ${demo.authToken}`,
      `  apiKey      ${demo.apiKey}   (dApp "Demo dApp", chain ${demo.chainId})`,
      `  paymaster   ${baseUrl}/api/v1/${demo.chainId}/${demo.apiKey}   (the SDKs' paymasterUrl)`,
      ...(bundler?.state === 'ready' ? [`  bundler     ${bundler.url}   (the SDKs' bundlerUrl)`] : []),
      `  dashboard   ${baseUrl}${args.config.dashboard.basePath}   (email ${demo.email}, password ${demo.password ?? '(set one with patron account set-password)'})`,
      '',
      bundler?.state === 'ready'
        ? 'Try the whole flow (webhook, ops through the bundler, receipts):  npm run demo  (installed package: patron demo)'
        : 'Try the whole flow (webhook, ops through a bundler, receipts):  npm run demo -- --bundler URL  (the dev bundler is off)',
      'Or your SDK against this stack: the quick start\'s snippets (docs/quickstart.md, "Send an op with your SDK")',
      'Or register a webhook by hand:',
      `  curl -s -X POST ${baseUrl}/api/v2/public/sdk/webhookParameters \\`,
      `    -H 'authToken: ${demo.authToken}' -H 'apiKey: ${demo.apiKey}' \\`,
      `    -H 'content-type: application/json' -d '{"webhookUrl":"http://127.0.0.1:4000/hook","requestType":"POST"}'`,
    );
  }
  return `${lines.join('\n')}\n\n`;
}

main().catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  // A master key that does not open the stored secrets, a schema newer than this build: no restart fixes these.
  const exitCode = err instanceof StartRefusedError ? EXIT_CONFIG : EXIT_FAILED;
  void failStart(cluster.isWorker ? message : `Patron failed to start: ${message}`, exitCode);
});
