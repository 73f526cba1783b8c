import { type ChildProcess, spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import type { Address, Hex } from 'viem';
import { altoArgs } from './altoArgs.js';
import { ALTO_PID_LINE, ALTO_WRAPPER } from './altoWrapper.js';
import { type BundlerLogSink, createBundlerLog } from './bundlerLog.js';
import { portIsFree } from './portIsFree.js';

export type DevBundlerState = 'starting' | 'ready' | 'failed' | 'stopped';

export interface DevBundlerStatus {
  readonly state: DevBundlerState;
  /** `http://127.0.0.1:<port>`: alto's ERC-4337 JSON-RPC (its v1 API at `/`). */
  readonly url: string;
  /** Why it failed (state `failed`). */
  readonly reason?: string;
}

export interface DevBundler {
  /** `starting` until start() has settled. */
  status(): DevBundlerStatus;
  /**
   * Spawns alto against `rpcUrl` (the dev chain as Patron serves it, so only once Patron listens) and settles once it
   * answers with every EntryPoint or has failed: never rejects. Once only.
   */
  start(args: { readonly rpcUrl: string }): Promise<DevBundlerStatus>;
  /** The wrapper's and alto's pids (alto's once the wrapper has said it). */
  pids(): { readonly wrapper: number | undefined; readonly alto: number | undefined };
  /** Stops alto (through the wrapper) and waits for it; closing twice closes once. */
  close(): Promise<void>;
}

export interface DevBundlerParams {
  /** alto's CLI (altoCli.ts). */
  readonly altoCli: string;
  readonly port: number;
  readonly entryPoints: readonly Address[];
  /** Sends the bundles (handleOps): a funded dev-chain key of its own, so no one else's nonce races it. */
  readonly executorKey: Hex;
  /** Deploys alto's simulation contracts at its start. */
  readonly utilityKey: Hex;
  readonly log: BundlerLogSink;
  /** alto takes ~2 s (Node, Sentry and OpenTelemetry loading, then the simulation contracts deployed). */
  readonly startTimeoutMs?: number;
  /**
   * alto's `--chain-type`: `op-stack` on a fork of an OP-stack L2, where alto must price each op's L1 data from the
   * GasPriceOracle into preVerificationGas as a real bundler there does (docs/guides/fork-mode.md); unset otherwise.
   */
  readonly chainType?: 'op-stack' | undefined;
}

/** How long the wrapper gets to stop alto (it SIGKILLs alto after 5 s) before it is SIGKILLed itself. */
const WRAPPER_STOP_MS = 6_000;
const POLL_MS = 200;

/**
 * alto (Pimlico's ERC-4337 bundler) as a program of its own, behind the wrapper that stops it when Patron's process
 * ends however it ends (altoWrapper.ts). Patron keeps serving whatever alto does: a bundler that fails to start or
 * exits is reported (log, /readyz, banner), never restarted in a loop.
 */
export function createDevBundler(params: DevBundlerParams): DevBundler {
  const url = `http://127.0.0.1:${params.port}`;
  let status: DevBundlerStatus = { state: 'starting', url };
  const fail = (reason: string) => {
    if (status.state === 'starting' || status.state === 'ready') status = { state: 'failed', url, reason };
  };
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let altoPid: number | undefined;
  let started: Promise<DevBundlerStatus> | undefined;
  let closing: Promise<void> | undefined;
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  const spawnWrapped = (rpcUrl: string): ChildProcess => {
    const wrapper = spawn(
      process.execPath,
      ['-e', ALTO_WRAPPER, params.altoCli, ...altoArgs({ ...params, rpcUrl, json: true })],
      {
        // The stdin pipe is never written or closed: its EOF is the wrapper's sign that Patron's process is gone.
        stdio: ['pipe', 'pipe', 'pipe'],
        // Only what Node needs: alto starts Sentry on SENTRY_DSN and reads ALTO_* settings from the environment.
        env: { PATH: process.env.PATH ?? '' },
        // alto runs dotenv at start, which reads `.env` in its working directory: its own package has none.
        cwd: dirname(dirname(params.altoCli)),
      },
    );
    const recent: string[] = [];
    const log = createBundlerLog({ sink: params.log, now: Date.now });
    const onLine = (text: string) => {
      const pid = ALTO_PID_LINE.exec(text)?.[1];
      if (pid !== undefined && altoPid === undefined) {
        altoPid = Number(pid);
        return;
      }
      recent.push(text);
      if (recent.length > 5) recent.shift();
      log.line(text);
    };
    if (wrapper.stdout !== null) createInterface({ input: wrapper.stdout }).on('line', onLine);
    if (wrapper.stderr !== null) createInterface({ input: wrapper.stderr }).on('line', onLine);
    // A Patron that ends through process.exit (a failed start, an uncaught exception) runs 'exit' listeners
    // synchronously: the SIGTERM goes out before the process is gone (the stdin EOF would follow a moment later).
    const onProcessExit = () => wrapper.kill('SIGTERM');
    process.on('exit', onProcessExit);
    exited = new Promise<void>((resolve) =>
      wrapper.once('exit', (code, signal) => {
        process.off('exit', onProcessExit);
        const tail = recent.length > 0 ? `; its last lines: ${recent.join(' | ')}` : '';
        fail(`alto exited (${signal === null ? `code ${code}` : `signal ${signal}`})${tail}`);
        resolve();
      }),
    );
    return wrapper;
  };

  const start = async (rpcUrl: string): Promise<DevBundlerStatus> => {
    // alto exits 0 without a word when its port is taken (its listen is not awaited), after which a readiness probe
    // would be answered by whoever holds the port: an alto left by an earlier run, say. So the port is checked first.
    if (!(await portIsFree(params.port))) {
      fail(`port ${params.port} is in use (PATRON_DEV_BUNDLER_PORT sets another)`);
      return status;
    }
    if (closing !== undefined) return status;
    child = spawnWrapped(rpcUrl);
    const timeoutMs = params.startTimeoutMs ?? 30_000;
    const problem = await waitUntilServing({ url, entryPoints: params.entryPoints, timeoutMs, running });
    if (problem === undefined) {
      if (status.state === 'starting') status = { state: 'ready', url };
    } else {
      fail(problem);
      child.kill('SIGTERM');
    }
    return status;
  };

  return {
    status: () => status,
    start({ rpcUrl }) {
      started ??= start(rpcUrl);
      return started;
    },
    pids: () => ({ wrapper: child?.pid, alto: altoPid }),
    close() {
      closing ??= (async () => {
        if (child !== undefined && running()) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child?.kill('SIGKILL'), WRAPPER_STOP_MS);
          await exited;
          clearTimeout(timer);
        }
        status = { state: 'stopped', url };
      })();
      return closing;
    },
  };
}

/** Undefined once alto answers eth_supportedEntryPoints with every one of `entryPoints`; else why not. */
async function waitUntilServing(args: {
  readonly url: string;
  readonly entryPoints: readonly Address[];
  readonly timeoutMs: number;
  readonly running: () => boolean;
}): Promise<string | undefined> {
  const deadline = Date.now() + args.timeoutMs;
  const wanted = args.entryPoints.map((a) => a.toLowerCase());
  for (;;) {
    if (!args.running()) return 'alto exited before serving';
    if (Date.now() > deadline) return `alto did not answer on ${args.url} within ${args.timeoutMs} ms`;
    try {
      const res = await fetch(args.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_supportedEntryPoints', params: [] }),
        signal: AbortSignal.timeout(2_000),
      });
      const body = (await res.json()) as { result?: unknown };
      const served = Array.isArray(body.result) ? body.result.map((a) => String(a).toLowerCase()) : [];
      // Checked again once it answers: whoever answers must be this alto, serving these EntryPoints.
      if (wanted.every((a) => served.includes(a)) && args.running()) return undefined;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
