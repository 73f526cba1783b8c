import assert from 'node:assert/strict';
import fs, { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { createPublicClient, http } from 'viem';
import {
  createBundlerClient,
  createPaymasterClient,
  entryPoint06Address,
  entryPoint07Address,
  entryPoint08Address,
  entryPoint09Address,
} from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { type ServiceProcess, spawnService } from './helpers/serviceProcess.js';

/**
 * The dev stack's bundler at process level (docs/guides/dev-bundler.md): the real service (`src/main.ts`) on its
 * embedded dev chain starts alto behind its wrapper, prints its URL, reports it in /readyz, and leaves no alto
 * process behind however it is stopped: SIGINT, SIGTERM, or SIGKILL (where no handler of Patron runs and only the
 * wrapper's stdin EOF stops alto). With PATRON_DEV_BUNDLER=false none starts.
 */
const dirs: string[] = [];
const services: ServiceProcess[] = [];
after(async () => {
  for (const s of services) await s.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function startPatron(env: Record<string, string> = {}): ServiceProcess {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-bundler-'));
  dirs.push(dataDir);
  const service = spawnService({ PATRON_DATA_DIR: dataDir, ...env });
  services.push(service);
  return service;
}

interface Ready {
  readonly url: string;
  readonly wrapperPid: number;
  readonly altoPid: number;
}

/** The "dev bundler is ready" log line's URL and pids, once the banner after it is out. */
async function bundlerReady(service: ServiceProcess, timeoutMs = 90_000): Promise<Ready> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = /^\{.*"the dev bundler is ready".*\}$/m.exec(service.output())?.[0];
    if (line !== undefined && service.output().includes('Patron is running at')) {
      return JSON.parse(line) as Ready;
    }
    assert.equal(service.child.exitCode, null, `the service exited:\n${service.output()}`);
    assert.ok(Date.now() < deadline, `the bundler did not start:\n${service.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Whether `pid` runs: a zombie (exited, not yet reaped by a slow PID 1) counts as gone. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function gone(pids: readonly number[], timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (pids.some(alive)) {
    assert.ok(Date.now() < deadline, `still running: ${pids.filter(alive).join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return (
          readFileSync(`/proc/${e}/stat`, 'utf8')
            .replace(/^\d+ \(.*\) /, '')
            .split(' ')[1] === String(pid)
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

test('the banner prints the bundler URL, /readyz and /api/chains report it, viem gets its four EntryPoints and an op through it with Patron as paymaster is included; SIGINT leaves no alto', async () => {
  const service = startPatron();
  const base = await service.baseUrl();
  const ready = await bundlerReady(service);
  assert.ok(service.output().includes(`    bundler          ${ready.url}  (alto, EntryPoints v0.6-v0.9;`));
  assert.ok(service.output().includes(`  bundler     ${ready.url}   (the SDKs' bundlerUrl)`));
  const readyz = (await (await fetch(`${base}/readyz`)).json()) as { bundler?: unknown };
  assert.deepEqual(readyz.bundler, { state: 'ready', url: ready.url });

  const bundler = createBundlerClient({ transport: http(ready.url) });
  assert.deepEqual(await bundler.getSupportedEntryPoints(), [
    entryPoint06Address,
    entryPoint07Address,
    entryPoint08Address,
    entryPoint09Address,
  ]);

  // The SDK flow a developer runs against `npm start`: viem's bundler client at the printed URL, Patron's demo dApp
  // as its ERC-7677 paymaster, a new SimpleAccount on EntryPoint v0.7 deployed by its first op.
  const apiKey = /apiKey {6}(pk\.\S+)/.exec(service.output())?.[1];
  assert.ok(apiKey !== undefined, service.output());
  const client = createPublicClient({ chain: foundry, transport: http(`${base}/chain/31337`) });
  const account = await toSimpleSmartAccount({
    client,
    owner: privateKeyToAccount(generatePrivateKey()),
    entryPoint: { address: entryPoint07Address, version: '0.7' },
  });
  const sponsored = createBundlerClient({
    account,
    client,
    transport: http(ready.url),
    paymaster: createPaymasterClient({ transport: http(`${base}/api/v1/31337/${apiKey}`) }),
  });
  const hash = await sponsored.sendUserOperation({ calls: [{ to: account.address, data: '0x' }] });
  const receipt = await sponsored.waitForUserOperationReceipt({ hash, timeout: 30_000 });
  assert.equal(receipt.success, true);
  assert.equal(receipt.sender.toLowerCase(), account.address.toLowerCase());
  const chains = (await (await fetch(`${base}/api/chains`)).json()) as {
    chains: { bundlerUrl?: string | null; deployments: { entryPointVersion: string; paymaster: string }[] }[];
  };
  assert.equal(chains.chains[0]?.bundlerUrl, ready.url, '/api/chains names the dev chain’s bundler');
  const v07 = chains.chains[0]?.deployments.find((d) => d.entryPointVersion === '0.7');
  assert.equal(receipt.paymaster?.toLowerCase(), v07?.paymaster.toLowerCase(), 'Patron paid for it');

  assert.ok(alive(ready.wrapperPid) && alive(ready.altoPid));
  service.child.kill('SIGINT');
  await gone([ready.wrapperPid, ready.altoPid]);
});

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  test(`after ${signal} of Patron no alto process remains`, async () => {
    const service = startPatron();
    const ready = await bundlerReady(service);
    assert.ok(alive(ready.wrapperPid) && alive(ready.altoPid));
    service.child.kill(signal);
    await gone([ready.wrapperPid, ready.altoPid]);
  });
}

test('with PATRON_DEV_BUNDLER=false no bundler starts, /readyz says nothing of one, /api/chains has bundlerUrl null', async () => {
  const service = startPatron({ PATRON_DEV_BUNDLER: 'false' });
  const base = await service.baseUrl();
  const deadline = Date.now() + 30_000;
  while (!service.output().includes('Patron is running at')) {
    assert.ok(Date.now() < deadline, service.output());
    await new Promise((r) => setTimeout(r, 100));
  }
  // No bundler line, no bundler log line; the banner's demo hint says it is off.
  assert.doesNotMatch(service.output(), /the dev bundler is (ready|off: it did not start)|\n {2,4}bundler {5}/);
  assert.match(service.output(), /\(the dev bundler is off\)/);
  assert.deepEqual(childrenOf(service.child.pid ?? -1), []);
  const readyz = (await (await fetch(`${base}/readyz`)).json()) as Record<string, unknown>;
  assert.equal(readyz.status, 'ready');
  assert.equal('bundler' in readyz, false);
  const chains = (await (await fetch(`${base}/api/chains`)).json()) as { chains: { bundlerUrl?: unknown }[] };
  assert.equal(chains.chains[0]?.bundlerUrl, null, '/api/chains says the dev chain has no bundler');
  await service.stop();
});
