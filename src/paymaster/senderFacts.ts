import { type Address, hexToBytes } from 'viem';
import type { ChainRuntime } from '../chain/chainRegistry.js';
import { isEip7702InitCode } from '../chain/eip7702InitCode.js';
import { type ChainReads, delegationCodeHash } from '../chain/senderCode.js';
import { OperationFieldError, UnsupportedError } from '../errors/PatronError.js';
import type { SenderFacts } from './entryPoints/entryPointModule.js';
import type { PartialUserOperation } from './partialUserOperation.js';

/**
 * What Patron must know of an op's sender before it signs, read from the chain (chain/senderCode.ts, cached):
 * - An op that deploys its account (a factory initCode) needs nothing: the factory decides its code. Most ops of a
 *   new account are such; they get undefined at once, without a promise to await on the hot path.
 * - An EIP-7702 op (`eip7702Auth`, or the 0x7702 initCode marker; EntryPoint v0.8+): the delegate the account's
 *   code will run, the authorization's when it carries one (the bundler installs it in the same transaction), else
 *   the sender's current delegation. It must be one the deployment allows (PATRON_EIP7702_DELEGATES).
 * - An op without initCode, on every version: the sender's code must exist (else the EntryPoint fails it, AA20, and
 *   an EOA that delegates after Patron signed would run code Patron never checked), and when it is an EIP-7702
 *   delegation its delegate must be allowed too, with or without the marker. Its code hash is what
 *   PatronPaymasterV07 binds (v0.7+), so code changed after signing (re-delegation) fails the signature (AA34).
 */
export function resolveSenderFacts(args: {
  readonly chain: ChainRuntime;
  readonly op: Pick<PartialUserOperation, 'sender' | 'initCode' | 'eip7702Auth'>;
  readonly allowed: ReadonlySet<string>;
  readonly reads: ChainReads;
}): Promise<SenderFacts> | undefined {
  const { op } = args;
  // The string tests first: ordinary ops leave here without touching the chain.
  const marker = op.initCode.startsWith('0x7702') && isEip7702InitCode(hexToBytes(op.initCode));
  if (!marker && op.eip7702Auth === undefined && op.initCode.length > 2) return undefined;
  return resolve({ ...args, marker });
}

/**
 * resolveSenderFacts bound to the delegates a deployment allows (PATRON_EIP7702_DELEGATES, matched in any letter
 * case) and the chain reads: what the sponsored and the token mode both call per op.
 */
export function senderFactsResolver(args: {
  readonly allowed: readonly string[];
  readonly reads: ChainReads;
}): (chain: ChainRuntime, op: PartialUserOperation) => Promise<SenderFacts> | undefined {
  const allowed = new Set(args.allowed.map((d) => d.toLowerCase()));
  return (chain, op) => resolveSenderFacts({ chain, op, allowed, reads: args.reads });
}

async function resolve(args: {
  readonly chain: ChainRuntime;
  readonly op: Pick<PartialUserOperation, 'sender' | 'initCode' | 'eip7702Auth'>;
  readonly allowed: ReadonlySet<string>;
  readonly reads: ChainReads;
  readonly marker: boolean;
}): Promise<SenderFacts> {
  const { chain, op, marker } = args;
  const emptyInitCode = op.initCode.length === 2;
  if (
    (marker || op.eip7702Auth !== undefined) &&
    (chain.entryPointVersion === '0.6' || chain.entryPointVersion === '0.7')
  ) {
    throw new OperationFieldError(
      undefined,
      `an EIP-7702 operation (eip7702Auth, or the 0x7702 initCode) needs EntryPoint v0.8 or later, not v${chain.entryPointVersion}`,
    );
  }
  const auth = op.eip7702Auth;
  if (auth !== undefined) {
    // The chain applies an authorization for its own id or for any chain (0); another leaves the account undelegated.
    if (auth.chainId !== 0n && auth.chainId !== BigInt(chain.chainId)) {
      throw new OperationFieldError('eip7702Auth.chainId', `must be 0 or this chain's id, ${chain.chainId}`);
    }
    const delegate = assertAllowed(auth.address, args.allowed);
    // The bundler applies the authorization before the op runs: the sender's code is then the delegation.
    return {
      eip7702: { delegate, authorized: true },
      ...(emptyInitCode ? { codeHash: delegationCodeHash(delegate) } : {}),
    };
  }
  const code = await args.reads.code(chain, op.sender);
  if (marker) {
    if (code?.delegate === undefined) {
      throw new OperationFieldError(
        undefined,
        'the 0x7702 initCode needs eip7702Auth, or a sender already delegated with EIP-7702',
      );
    }
    return { eip7702: { delegate: assertAllowed(code.delegate, args.allowed), authorized: false } };
  }
  if (code === undefined) {
    throw new OperationFieldError(
      'sender',
      'has no code, and the op has no initCode to deploy it nor eip7702Auth to delegate it (the EntryPoint would refuse it: AA20)',
    );
  }
  if (code.delegate !== undefined) assertAllowed(code.delegate, args.allowed);
  return { codeHash: code.codeHash };
}

function assertAllowed(delegate: Address, allowed: ReadonlySet<string>): Address {
  if (!allowed.has(delegate.toLowerCase())) {
    throw new UnsupportedError(
      `EIP-7702 delegate ${delegate} is not sponsored by this Patron; it sponsors accounts delegated to ${[...allowed].join(', ')} (PATRON_EIP7702_DELEGATES)`,
    );
  }
  return delegate;
}
