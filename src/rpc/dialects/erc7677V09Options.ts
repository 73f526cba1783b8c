import type { ChainRuntime } from '../../chain/chainRegistry.js';
import { UnsupportedError, ValidationError } from '../../errors/PatronError.js';
import type { CommittedPaymaster } from '../../paymaster/sponsored/parallelSigningCommitment.js';
import type { ValidityUnit } from '../../paymaster/validityWindows.js';
import type { Erc7677Context } from '../wire/erc7677.js';

/**
 * EntryPoint v0.9's opt-ins of an ERC-7677 call, checked against the EntryPoint the call names and turned into
 * the domain's typed options (docs/reference/json-rpc.md, "Parallel signing on v0.9"). Every refusal is -32602 (a request this
 * EntryPoint cannot take) except the token mode, which is -32030 (not served yet).
 */
export interface V09Options {
  readonly signingPhase: 'commit' | 'finalize' | undefined;
  readonly validityUnit: ValidityUnit | undefined;
}

export function v09Options(args: {
  readonly chain: ChainRuntime;
  readonly mode: Erc7677Context;
  readonly method: 'pm_getPaymasterStubData' | 'pm_getPaymasterData';
}): V09Options {
  const { chain, mode } = args;
  const { signingPhase, validityUnit } = mode;
  const blocks = validityUnit === 'blocks';
  if (signingPhase === undefined && !blocks) return { signingPhase: undefined, validityUnit };
  const field = signingPhase === undefined ? 'validityUnit' : 'signingPhase';
  if (chain.entryPointVersion !== '0.9') {
    const what = signingPhase === undefined ? 'block-number windows are' : 'parallel signing is';
    throw new ValidationError(
      `Invalid params: params[3].${field}: ${what} served on EntryPoint v0.9 only; ${chain.entryPoint} is v${chain.entryPointVersion}`,
    );
  }
  if (mode.mode === 'ERC20') {
    throw new UnsupportedError(`params[3].${field} is served in the sponsored mode only, not with mode ERC20`);
  }
  if (signingPhase !== undefined && mode.calculateGasLimits === true) {
    throw new ValidationError(
      'Invalid params: params[3].calculateGasLimits: not taken with signingPhase, whose op carries its final gas limits',
    );
  }
  if (signingPhase === 'finalize' && args.method === 'pm_getPaymasterStubData') {
    throw new ValidationError(
      'Invalid params: params[3].signingPhase: pm_getPaymasterStubData takes "commit" only ("finalize" is pm_getPaymasterData\'s)',
    );
  }
  return { signingPhase, validityUnit };
}

/** A finalize's paymaster fields, all four present, or the -32602 naming what a finalize needs. */
export function committedPaymaster(committed: Partial<CommittedPaymaster> | undefined): CommittedPaymaster {
  const c = committed ?? {};
  const { paymaster, paymasterData, paymasterVerificationGasLimit, paymasterPostOpGasLimit } = c;
  if (
    paymaster === undefined ||
    paymasterData === undefined ||
    paymasterVerificationGasLimit === undefined ||
    paymasterPostOpGasLimit === undefined
  ) {
    throw new ValidationError(
      'Invalid params: params[0]: signingPhase "finalize" needs the op\'s paymaster, paymasterData, paymasterVerificationGasLimit and paymasterPostOpGasLimit as its commit returned them',
    );
  }
  return { paymaster, paymasterData, paymasterVerificationGasLimit, paymasterPostOpGasLimit };
}
