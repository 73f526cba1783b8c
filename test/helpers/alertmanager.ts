import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Debian's prometheus-alertmanager package (.ci/run installs it). */
export const ALERTMANAGER_BIN = process.env.PATRON_ALERTMANAGER_BIN ?? '/usr/bin/prometheus-alertmanager';

/** A free TCP port on 127.0.0.1, for a server of another process to bind. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** One alert as Alertmanager's `GET /api/v2/alerts` lists it (gettableAlert, the fields the tests read). */
export interface GettableAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly startsAt: string;
  readonly endsAt: string;
  readonly generatorURL?: string;
  readonly status: { readonly state: string };
}

export interface Alertmanager {
  /** `http://127.0.0.1:<port>`: what PATRON_ALERTMANAGER_URL takes. */
  readonly url: string;
  alerts(): Promise<GettableAlert[]>;
  close(): Promise<void>;
}

/**
 * The real Alertmanager on 127.0.0.1 (a random port, no cluster, a temp storage dir and a config routing everything
 * to a receiver that notifies nobody). Missing binary: a clear error, as test/helpers/softHsm.ts does for SoftHSM2.
 */
export async function startAlertmanager(): Promise<Alertmanager> {
  if (!fs.existsSync(ALERTMANAGER_BIN)) {
    throw new Error(
      `${ALERTMANAGER_BIN} is missing: install Debian's prometheus-alertmanager (apt-get install prometheus-alertmanager; .ci/run does)`,
    );
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-alertmanager-'));
  const config = path.join(dir, 'alertmanager.yml');
  fs.writeFileSync(config, 'route:\n  receiver: nobody\nreceivers:\n  - name: nobody\n');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    ALERTMANAGER_BIN,
    [
      `--config.file=${config}`,
      `--storage.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await close();
      throw new Error(`Alertmanager did not become ready on ${url}:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    async alerts() {
      const res = await fetch(`${url}/api/v2/alerts`);
      if (!res.ok) throw new Error(`GET /api/v2/alerts: ${res.status} ${await res.text()}`);
      return (await res.json()) as GettableAlert[];
    },
    close,
  };
}
