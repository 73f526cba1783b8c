import type { Address, Hex } from 'viem';

export interface AltoArgsParams {
  /** The chain's JSON-RPC URL (Patron's `/chain/{id}` for the dev chain). */
  readonly rpcUrl: string;
  readonly entryPoints: readonly Address[];
  /** Sends the bundles (handleOps). */
  readonly executorKey: Hex;
  /** Deploys alto's simulation contracts at its start (and must hold ETH for it). */
  readonly utilityKey: Hex;
  readonly port: number;
  /** pino JSON lines (the dev bundler reads their level and message) instead of alto's pretty text. */
  readonly json: boolean;
  /** An L2 whose L1 data fee alto adds to preVerificationGas, read from the chain's oracle. */
  readonly chainType?: 'op-stack' | 'arbitrum' | undefined;
}

/**
 * alto's command line against one of Patron's in-process chains: the one place that knows alto's options, shared by
 * the dev bundler `npm start` runs and the tests' bundler (test/helpers/altoBundler.ts).
 */
export function altoArgs(params: AltoArgsParams): string[] {
  return [
    '--rpc-url',
    params.rpcUrl,
    '--entrypoints',
    params.entryPoints.join(','),
    '--executor-private-keys',
    params.executorKey,
    '--utility-private-key',
    params.utilityKey,
    // Safe mode traces each validation with debug_traceCall for the ERC-7562 rules; the in-process chain (EDR) has
    // no tracer, so the rules are not checked locally (docs/guides/dev-bundler.md, "Safe mode off").
    '--safe-mode',
    'false',
    '--port',
    String(params.port),
    // Warnings and errors only.
    '--log-level',
    'warn',
    ...(params.json ? ['--json'] : []),
    // The in-process chain mines on every transaction: alto polls for its bundle's receipt at a quarter of this.
    '--block-time',
    '100',
    ...(params.chainType === undefined ? [] : ['--chain-type', params.chainType]),
  ];
}
