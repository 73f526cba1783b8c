import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { type DemoCredentials, ensureDemoAccount } from './accounts/ensureDemoAccount.js';
import { createApp } from './app.js';
import { verifyChains } from './chain/verifyChains.js';
import { type Config, ConfigError, loadConfig } from './config/config.js';
import { createDeps, type Deps } from './deps.js';
import { createLogger } from './logger.js';
import { unstakedTokenPaymasters } from './paymaster/token/tokenStake.js';

/** A worker's exit code when its configuration does not match the chains (the primary then stops). */
const EXIT_CONFIG = 78;

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
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel });
  if (config.workers > 1 && cluster.isPrimary) {
    runPrimary(config, logger);
    return;
  }
  const deps = await createDeps(config, logger);
  // Before listening: a chain that is not what the configuration says would make every signature fail on chain.
  const problems = await verifyChains({ chains: deps.chains.list(), signer: deps.signer.address });
  if (problems.length > 0) {
    process.stderr.write(
      `Refusing to start: the configured chains do not match what is on chain:\n${problems.map((p) => `  - ${p}`).join('\n')}\n`,
    );
    await deps.close();
    process.exit(cluster.isWorker ? EXIT_CONFIG : 1);
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
  const demo = config.demo ? await ensureDemoAccount(deps.accounts, deps.sessions) : undefined;
  const app = createApp(deps);
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = config.publicUrl ?? `http://${host}:${address.port}`;
  logger.info(
    {
      baseUrl,
      storage: deps.store.kind,
      production: config.production,
      signer: deps.signer.address,
      crypto: deps.crypto.backend.name,
    },
    'Patron is listening',
  );
  if (cluster.isPrimary) process.stdout.write(banner({ config, deps, baseUrl, demo }));

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    await app.close();
    await deps.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

function runPrimary(config: Config, logger: ReturnType<typeof createLogger>): void {
  let stopping = false;
  for (let i = 0; i < config.workers; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (code === EXIT_CONFIG) {
      // Every worker would refuse the same way: stop instead of restarting it forever.
      logger.error({ pid: worker.process.pid }, 'a worker refused to start (see its message); stopping');
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
      process.exitCode = 1;
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another');
    cluster.fork();
  });
  const stop = () => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.stdout.write(`Patron: ${config.workers} workers on ${config.host}:${config.port}\n`);
}

/** What a newcomer needs on the terminal; the auth token is shown only on the start that created it. */
function banner(args: { config: Config; deps: Deps; baseUrl: string; demo: DemoCredentials | undefined }): string {
  const { deps, baseUrl, demo } = args;
  const lines = [
    '',
    `Patron is running at ${baseUrl}  (storage: ${deps.store.kind}${args.config.storage.kind === 'sqlite' ? ` in ${args.config.dataDir}` : ''})`,
    `  paymaster signer  ${deps.signer.address}  (${deps.crypto.backend.name} signing)`,
    `  dashboard         ${baseUrl}${args.config.dashboard.basePath}`,
  ];
  for (const c of deps.chains.list()) {
    lines.push(
      `  chain ${c.chainId}${c.embedded ? ` (embedded dev chain, JSON-RPC at ${baseUrl}/chain/${c.chainId})` : ''}`,
      `    EntryPoint v0.6  ${c.entryPoint}`,
      `    paymaster        ${c.paymaster}`,
    );
    const feeTokens = deps.tokenCatalog.snapshot(c.chainId)?.tokens ?? [];
    if (feeTokens.length > 0) {
      lines.push(`    fee tokens       ${feeTokens.map((t) => `${t.symbol} ${t.address}`).join(', ')}`);
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
      `  dashboard   ${baseUrl}${args.config.dashboard.basePath}   (email ${demo.email}, password ${demo.password ?? '(set one with patron account set-password)'})`,
      '',
      'Try the whole flow (webhook, sponsorship, handleOps):  npm run demo',
      'Or register a webhook by hand:',
      `  curl -s -X POST ${baseUrl}/api/v2/public/sdk/webhookParameters \\`,
      `    -H 'authToken: ${demo.authToken}' -H 'apiKey: ${demo.apiKey}' \\`,
      `    -H 'content-type: application/json' -d '{"webhookUrl":"http://127.0.0.1:4000/hook","requestType":"POST"}'`,
    );
  }
  return `${lines.join('\n')}\n\n`;
}

main().catch((err: unknown) => {
  process.stderr.write(`Patron failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
