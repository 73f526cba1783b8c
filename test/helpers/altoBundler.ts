import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Address, Hex } from 'viem';
import { altoArgs } from '../../src/devBundler/altoArgs.js';
import { altoCli } from '../../src/devBundler/altoCli.js';

/**
 * A real ERC-4337 bundler for the end-to-end tests: Pimlico's alto (npm `@pimlico/alto`, pinned), run as its own
 * process against a chain's JSON-RPC URL (Patron's `/chain/{id}` for the in-process chain). It simulates each op
 * on the EntryPoint, bundles it with `handleOps` from its executor key and serves receipts, as in production;
 * it deploys its own simulation contract through the deterministic deployer on first use.
 *
 * Alto listens on 0.0.0.0 (its server hard-codes the host); the tests only ever reach it on 127.0.0.1.
 */
export interface AltoBundler {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Everything alto printed, for a failing test's message. */
  output(): string;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startAlto(params: {
  readonly rpcUrl: string;
  readonly entryPoints: readonly Address[];
  /** A funded key: alto's executor (sends handleOps) and utility wallet. */
  readonly executorKey: Hex;
  readonly startTimeoutMs?: number;
  /** An L2 whose L1 data fee alto adds to preVerificationGas, read from the chain's oracle as in production. */
  readonly chainType?: 'op-stack' | 'arbitrum';
}): Promise<AltoBundler> {
  const port = await freePort();
  const cli = altoCli();
  if (cli === undefined) throw new Error('@pimlico/alto (a devDependency) is not installed');
  const args = [
    cli,
    ...altoArgs({
      rpcUrl: params.rpcUrl,
      entryPoints: params.entryPoints,
      executorKey: params.executorKey,
      utilityKey: params.executorKey,
      port,
      json: false,
      ...(params.chainType === undefined ? {} : { chainType: params.chainType }),
    }),
  ];
  let out = '';
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + (params.startTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`alto exited with ${child.exitCode} before serving:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`alto did not answer on ${url} in time:\n${out}`);
    }
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_supportedEntryPoints', params: [] }),
      });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    output: () => out,
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/**
 * What `@biconomy/account` 4.x's bundler client sends that a standard bundler does not answer, translated in
 * front of alto (Biconomy's own bundler is not published, so its dialect is bridged here, nothing more):
 * - `biconomy_getGasFeeValues` (the SPONSORED flow's fee source): alto's `pimlico_getUserOperationGasPrice`
 *   `standard` tier, in the `{ maxFeePerGas, maxPriorityFeePerGas }` shape the SDK reads;
 * - `eth_estimateUserOperationGas`: Biconomy's bundler returns those two fees with the gas limits, and the SDK
 *   uses them. Without them it falls back to its own fee read, which writes the decimal tip after `0x`
 *   (1 gwei becomes 0x1000000000, 68.7 gwei), and Patron rightly refuses that op as out of its price bounds;
 * - `eth_sendUserOperation` with a third parameter (`{ simulation_type }`), which alto's schema refuses: dropped;
 * - `eth_estimateUserOperationGas` before any paymaster is attached (the ERC20 flow estimates first, then asks
 *   for quotes): Biconomy's bundler estimates regardless of the sender's ETH, alto simulates the prefund at
 *   1 wei per gas, which an account paying in a token does not hold; the sender gets a balance state override
 *   (the third parameter the standard method takes) for that simulation only.
 * Every other request is passed to alto byte for byte, and its answer back the same way.
 */
/** 1 ETH: far above any prefund at alto's 1 wei per gas. */
const SENDER_BALANCE_OVERRIDE = '0xde0b6b3a7640000';

export interface BiconomyBundlerFront {
  /** `http://127.0.0.1:<port>/api/v2/{chainId}/dev`: the SDK reads the chain id out of this path. */
  readonly url: string;
  close(): Promise<void>;
}

export async function startBiconomyBundlerFront(params: {
  readonly alto: AltoBundler;
  readonly chainId: number;
}): Promise<BiconomyBundlerFront> {
  const forward = async (body: string): Promise<string> => {
    const res = await fetch(params.alto.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return res.text();
  };
  /** alto's `standard` gas price tier, in the `{ maxFeePerGas, maxPriorityFeePerGas }` shape the SDK reads. */
  const gasFeeValues = async (id: unknown): Promise<{ error: unknown } | Record<string, unknown>> => {
    const price = JSON.parse(
      await forward(JSON.stringify({ jsonrpc: '2.0', id, method: 'pimlico_getUserOperationGasPrice' })),
    ) as { result?: { standard: Record<string, unknown> }; error?: unknown };
    return price.result === undefined ? { error: price.error } : price.result.standard;
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      void (async () => {
        const msg = JSON.parse(body) as { id: unknown; method: string; params?: unknown[] };
        let answer: string;
        if (msg.method === 'biconomy_getGasFeeValues') {
          const fees = await gasFeeValues(msg.id);
          answer = JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...('error' in fees ? fees : { result: fees }) });
        } else if (msg.method === 'eth_estimateUserOperationGas' && (msg.params ?? []).length === 2) {
          const sender = (msg.params?.[0] as { sender?: unknown } | undefined)?.sender;
          const override = typeof sender === 'string' ? { [sender]: { balance: SENDER_BALANCE_OVERRIDE } } : {};
          const estimate = JSON.parse(
            await forward(JSON.stringify({ ...msg, params: [...(msg.params ?? []), override] })),
          ) as { result?: Record<string, unknown> };
          const fees = await gasFeeValues(msg.id);
          answer = JSON.stringify(
            estimate.result === undefined || 'error' in fees
              ? estimate
              : { ...estimate, result: { ...estimate.result, ...fees } },
          );
        } else if (msg.method === 'eth_sendUserOperation') {
          answer = await forward(JSON.stringify({ ...msg, params: (msg.params ?? []).slice(0, 2) }));
        } else {
          answer = await forward(body);
        }
        res.setHeader('content-type', 'application/json');
        res.end(answer);
      })().catch((err: unknown) => {
        res.statusCode = 502;
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/v2/${params.chainId}/dev`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
