import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import { BENCH_RATE_LIMITS } from './benchRateLimits.js';
import { serveBenchIpc } from './serveBenchIpc.js';

/**
 * The service as a child process for benchmarks, so its CPU time is measured apart from the load generator's.
 * Storage: a fresh SQLite data directory, or PostgreSQL when DATABASE_URL is set. Speaks over IPC:
 * sends {ready, url, authToken, apiKey}; answers 'cpu' with process.cpuUsage().
 */
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-bench-'));
const config = loadConfig({
  ...process.env,
  PATRON_RATE_LIMITS: BENCH_RATE_LIMITS,
  PATRON_DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  PORT: '0',
});
const deps = await createDeps(config, createLogger({ level: 'warn' }));
const account = await deps.accounts.createAccount({ email: `bench-${Date.now()}@example.com` });
const { secret } = await deps.accounts.createToken({ accountId: account.id });
const dapp = await deps.accounts.createDapp({ accountId: account.id, name: 'bench', chainIds: [31337] });
const app = createApp(deps);
await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address() as AddressInfo;

serveBenchIpc({
  dataDir,
  close: async () => {
    await app.close();
    await deps.close();
  },
});
process.send?.({
  ready: true,
  url: `http://127.0.0.1:${port}`,
  authToken: secret,
  apiKey: dapp.apiKey,
  storage: deps.store.kind,
});
