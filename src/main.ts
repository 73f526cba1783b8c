import type { AddressInfo } from 'node:net';
import { ensureDemoAccount } from './accounts/ensureDemoAccount.js';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config/config.js';
import { createDeps } from './deps.js';
import { createLogger } from './logger.js';

/** Process entry: loadConfig → createDeps → createApp → listen, and a graceful shutdown on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
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
  const deps = await createDeps(config, logger);
  const demo = config.demo ? await ensureDemoAccount(deps.accounts) : undefined;
  const app = createApp(deps);
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = config.publicUrl ?? `http://${host}:${address.port}`;
  logger.info({ baseUrl, storage: deps.store.kind, production: config.production }, 'Patron is listening');
  process.stdout.write(
    `\nPatron is running at ${baseUrl}  (storage: ${deps.store.kind}${config.storage.kind === 'sqlite' ? ` in ${config.dataDir}` : ''})\n`,
  );
  if (demo !== undefined) {
    // Printed once, to the terminal rather than the log: the auth token is stored only as a hash.
    process.stdout.write(
      [
        '',
        'First start: created a demo account. These credentials are shown only now:',
        `  account     ${demo.email}`,
        `  authToken   ${demo.authToken}`,
        `  apiKey      ${demo.apiKey}   (dApp "Demo dApp", chain ${demo.chainId})`,
        '',
        'Try:',
        `  curl -s -X POST ${baseUrl}/api/v2/public/sdk/webhookParameters \\`,
        `    -H 'authToken: ${demo.authToken}' -H 'apiKey: ${demo.apiKey}' \\`,
        `    -H 'content-type: application/json' -d '{"webhookUrl":"http://127.0.0.1:4000/hook","requestType":"POST"}'`,
        '',
        '',
      ].join('\n'),
    );
  }

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

main().catch((err: unknown) => {
  process.stderr.write(`Patron failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
