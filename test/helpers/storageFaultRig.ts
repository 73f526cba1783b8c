import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { type Address, concat, encodeFunctionData, type Hex, parseAbi, toHex } from 'viem';

/**
 * What the storage-fault process tests share: a sponsorship against the real service's embedded dev chain (its
 * demo dApp and demo account: the account's first op deploys it, so every op carries the initCode), file systems
 * made for the test (a small tmpfs that fills), and a PostgreSQL server of the test's own that it can stop.
 */
export interface SponsorTarget {
  readonly base: string;
  readonly apiKey: string;
  readonly sender: Address;
  readonly initCode: Hex;
  readonly entryPoint: Address;
}

export async function sponsorTarget(base: string, output: string): Promise<SponsorTarget> {
  const apiKey = /apiKey {6}(pk\.[A-Za-z0-9.]+)/.exec(output)?.[1];
  assert.ok(apiKey, `no demo API key printed:\n${output}`);
  const chains = (await (await fetch(`${base}/api/chains`)).json()) as {
    chains: { entryPoint: Address; simpleAccountFactory: Address; demoAccount: { address: Address; owner: Address } }[];
  };
  const chain = chains.chains[0];
  assert.ok(chain);
  const create = encodeFunctionData({
    abi: parseAbi(['function createAccount(address owner, uint256 salt) returns (address)']),
    args: [chain.demoAccount.owner, 0n],
  });
  return {
    base,
    apiKey,
    sender: chain.demoAccount.address,
    initCode: concat([chain.simpleAccountFactory, create]),
    entryPoint: chain.entryPoint,
  };
}

export interface SponsorAnswer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly body: { result?: { paymasterAndData: Hex }; error?: { code: number; message: string; data?: unknown } };
}

/** ERC-7677 `pm_getPaymasterData` for the demo account's op with this nonce (each nonce a new op). */
export async function sponsor(t: SponsorTarget, nonce: number): Promise<SponsorAnswer> {
  const op = {
    sender: t.sender,
    nonce: toHex(nonce),
    initCode: t.initCode,
    callData: '0x',
    callGasLimit: '0x5208',
    verificationGasLimit: '0x60000',
    preVerificationGas: '0xc350',
    maxFeePerGas: '0x3b9aca00',
    maxPriorityFeePerGas: '0x3b9aca00',
  };
  const res = await fetch(`${t.base}/api/v1/31337/${t.apiKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nonce,
      method: 'pm_getPaymasterData',
      params: [op, t.entryPoint, '0x7a69', {}],
    }),
    signal: AbortSignal.timeout(30_000),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as SponsorAnswer['body'],
  };
}

export async function readyz(
  base: string,
): Promise<{ status: number; body: { status: string; fault?: { kind: string } } }> {
  const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.json()) as { status: string; fault?: { kind: string } } };
}

export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Mounting needs root (CI runs as root); elsewhere the tests that need it say why they skip. */
export function canMount(): string | undefined {
  if (process.getuid?.() !== 0) return 'mounting a test file system needs root';
  const probe = fs.mkdtempSync('/tmp/patron-mount-probe-');
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]);
  if (r.status !== 0) {
    fs.rmdirSync(probe);
    return `mount refused here: ${r.stderr.toString().trim()}`;
  }
  spawnSync('umount', [probe]);
  fs.rmdirSync(probe);
  return undefined;
}

export function run(cmd: string, args: readonly string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** A tmpfs of `size` (e.g. '4m') mounted on a new directory; `unmount()` lazily detaches it. */
export function smallFileSystem(size: string): { readonly dir: string; unmount(): void } {
  const dir = fs.mkdtempSync('/tmp/patron-fs-');
  run('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  return {
    dir,
    unmount() {
      spawnSync('umount', ['-l', dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes zeros until the file system says ENOSPC. */
export function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (err) {
    assert.equal((err as { code?: string }).code, 'ENOSPC');
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** A PostgreSQL server of the test's own (Debian's binaries), so it can be stopped without touching the suite's. */
export interface OwnPostgres {
  readonly url: string;
  stop(): void;
  start(): void;
  /** Runs SQL as the superuser (psql). */
  sql(statement: string): string;
  destroy(): void;
}

export function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs.readdirSync(root).sort((a, b) => Number(a) - Number(b));
  const bin = versions.length === 0 ? undefined : path.join(root, versions[versions.length - 1] ?? '', 'bin');
  return bin !== undefined && fs.existsSync(path.join(bin, 'initdb')) ? bin : undefined;
}

export async function ownPostgres(bin: string): Promise<OwnPostgres> {
  const port = await freePort();
  const dir = fs.mkdtempSync('/tmp/patron-own-pg-');
  const root = process.getuid?.() === 0;
  // PostgreSQL refuses to run as root: as the postgres user Debian's package creates.
  const as = (cmd: string, args: readonly string[]) =>
    root ? run('runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args);
  if (root) run('chown', ['postgres:postgres', dir]);
  as(path.join(bin, 'initdb'), ['-D', dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () => as(path.join(bin, 'pg_ctl'), ['-D', dir, '-l', path.join(dir, 'log'), '-w', '-o', opts, 'start']);
  start();
  const psql = (statement: string) =>
    run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-tAc', statement]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop: () => as(path.join(bin, 'pg_ctl'), ['-D', dir, '-m', 'fast', '-w', 'stop']),
    sql: psql,
    destroy() {
      spawnSync(root ? 'runuser' : path.join(bin, 'pg_ctl'), [
        ...(root ? ['-u', 'postgres', '--', path.join(bin, 'pg_ctl')] : []),
        '-D',
        dir,
        '-m',
        'immediate',
        'stop',
      ]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
