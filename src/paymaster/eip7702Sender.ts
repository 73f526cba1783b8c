import { type Address, getAddress, type Hex, hexToBytes } from 'viem';
import type { ChainRuntime } from '../chain/chainRegistry.js';
import { OperationFieldError, UnavailableError, UnsupportedError } from '../errors/PatronError.js';
import type { FinalUserOperation } from './entryPoints/entryPointModule.js';
import type { PartialUserOperation } from './partialUserOperation.js';
import { isEip7702InitCode } from './patronPaymasterV07.js';

/** EIP-7702's delegation designator: an EOA's code is 0xef0100 ‖ delegate. */
const DESIGNATOR = '0xef0100';

/**
 * The EIP-7702 side of an op (EntryPoint v0.8+): undefined for an ordinary account; else the delegate the
 * account's code will run, which Patron's signature binds (the EntryPoint substitutes it for the 0x7702 initCode
 * marker in the userOpHash). The delegate is the op's authorization's when it carries one (the bundler installs it
 * in the same transaction), else the sender's current delegation read from the chain. Only the delegates the
 * deployment allows are sponsored (config/eip7702Delegates.ts).
 */
export function resolveEip7702(args: {
  readonly chain: ChainRuntime;
  readonly op: Pick<PartialUserOperation, 'sender' | 'initCode' | 'eip7702Auth'>;
  readonly allowed: ReadonlySet<string>;
}): Promise<FinalUserOperation['eip7702']> | undefined {
  const { op } = args;
  // This runs on every sponsored request and almost no op is an EIP-7702 one: the string test comes first, and
  // such an op gets undefined at once, without a promise to await on the hot path.
  const marker = op.initCode.startsWith('0x7702') && isEip7702InitCode(hexToBytes(op.initCode));
  if (!marker && op.eip7702Auth === undefined) return undefined;
  return resolveDelegate(args);
}

/**
 * resolveEip7702 bound to the delegates a deployment allows (PATRON_EIP7702_DELEGATES, matched in any letter case):
 * what the sponsored and the token mode both call per op.
 */
export function eip7702Resolver(
  allowed: readonly string[],
): (chain: ChainRuntime, op: PartialUserOperation) => Promise<FinalUserOperation['eip7702']> | undefined {
  const set = new Set(allowed.map((d) => d.toLowerCase()));
  return (chain, op) => resolveEip7702({ chain, op, allowed: set });
}

async function resolveDelegate(args: {
  readonly chain: ChainRuntime;
  readonly op: Pick<PartialUserOperation, 'sender' | 'eip7702Auth'>;
  readonly allowed: ReadonlySet<string>;
}): Promise<NonNullable<FinalUserOperation['eip7702']>> {
  const { chain, op } = args;
  if (chain.entryPointVersion === '0.6' || chain.entryPointVersion === '0.7') {
    throw new OperationFieldError(
      undefined,
      `an EIP-7702 operation (eip7702Auth, or the 0x7702 initCode) needs EntryPoint v0.8 or later, not v${chain.entryPointVersion}`,
    );
  }
  const auth = op.eip7702Auth;
  // The chain applies an authorization for its own id or for any chain (0); another leaves the account undelegated.
  if (auth !== undefined && auth.chainId !== 0n && auth.chainId !== BigInt(chain.chainId)) {
    throw new OperationFieldError('eip7702Auth.chainId', `must be 0 or this chain's id, ${chain.chainId}`);
  }
  const delegate = auth?.address ?? (await currentDelegate(chain, op.sender));
  if (!args.allowed.has(delegate.toLowerCase())) {
    throw new UnsupportedError(
      `EIP-7702 delegate ${delegate} is not sponsored by this Patron; it sponsors accounts delegated to ${[...args.allowed].join(', ')} (PATRON_EIP7702_DELEGATES)`,
    );
  }
  return { delegate, authorized: op.eip7702Auth !== undefined };
}

async function currentDelegate(chain: ChainRuntime, sender: Address): Promise<Address> {
  let code: Hex | undefined;
  try {
    code = await chain.client.getCode({ address: sender });
  } catch (err) {
    throw new UnavailableError('The chain could not be read for the sender’s EIP-7702 delegation', { cause: err });
  }
  if (code === undefined || !code.toLowerCase().startsWith(DESIGNATOR) || code.length !== 2 + 23 * 2) {
    throw new OperationFieldError(
      undefined,
      'the 0x7702 initCode needs eip7702Auth, or a sender already delegated with EIP-7702',
    );
  }
  return getAddress(`0x${code.slice(8)}`);
}
