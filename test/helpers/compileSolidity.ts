import { createRequire } from 'node:module';
import type { Abi, Hex } from 'viem';

/** A contract compiled at test time: its ABI, creation code and runtime code. */
export interface CompiledContract {
  readonly abi: Abi;
  readonly bytecode: Hex;
  readonly deployedBytecode: Hex;
}

// solc ships no types: its one function used here takes and returns standard JSON as text.
interface Solc {
  compile(input: string): string;
}

const cache = new Map<string, CompiledContract>();

/**
 * One self-contained Solidity source compiled with the project's solc (solc-js from npm, offline) and the contract
 * `name` taken from it; kept per process, since loading solc-js alone takes ~0.5 s.
 */
export function compileSolidity(args: { readonly source: string; readonly name: string }): CompiledContract {
  const key = `${args.name}\n${args.source}`;
  const known = cache.get(key);
  if (known !== undefined) return known;
  const solc = createRequire(import.meta.url)('solc') as Solc;
  const unit = `${args.name}.sol`;
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { [unit]: { content: args.source } },
        settings: {
          optimizer: { enabled: true, runs: 200 },
          evmVersion: 'cancun',
          outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
        },
      }),
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts?: Record<
      string,
      Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
    >;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const c = output.contracts?.[unit]?.[args.name];
  if (c === undefined) throw new Error(`solc produced no ${args.name}`);
  const compiled: CompiledContract = {
    abi: c.abi,
    bytecode: `0x${c.evm.bytecode.object}`,
    deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
  };
  cache.set(key, compiled);
  return compiled;
}
