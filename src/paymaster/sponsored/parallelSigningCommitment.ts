import { type Address, concat, type Hex, numberToHex } from 'viem';
import type { ChainRuntime } from '../../chain/chainRegistry.js';
import { PatronError, ValidationError } from '../../errors/PatronError.js';
import type { GasLimits, PaymasterGas, ValidityWindow } from '../entryPoints/entryPointModule.js';
import { MODE_SPONSORED } from '../entryPoints/paymasterModes.js';
import { decodePaymasterAndDataV07, unsuffixedPrefix } from '../entryPoints/v07/patronPaymasterV07.js';

/**
 * EntryPoint v0.9's parallel signing (docs/reference/json-rpc.md, "Parallel signing on v0.9"): the commit answer carries Patron's
 * final paymasterData with a placeholder in the `paymasterSignature` suffix; the account signs the userOpHash,
 * which leaves the suffix out; the finalize call sends the op back with that paymasterData, and Patron signs the
 * same prefix. This file reads the commitment back and checks it is one Patron would issue for this op, so that
 * what finalize signs is byte for byte what the account signed over.
 */

/** The op's paymaster fields as an ERC-7677 client sends them back (v0.7+'s unpacked form). */
export interface CommittedPaymaster {
  readonly paymaster: Address;
  readonly paymasterData: Hex;
  readonly paymasterVerificationGasLimit: bigint;
  readonly paymasterPostOpGasLimit: bigint;
}

export interface Commitment {
  readonly window: ValidityWindow;
  /** paymasterAndData up to the signature: what finalize must reproduce exactly. */
  readonly prefix: Hex;
}

/**
 * The committed window and prefix, after checking the fields are Patron's for this chain's paymaster in the
 * sponsored mode, in the suffix form, with the paymaster's own gas limits, and with caps equal to the op's gas
 * limits. Exact, not "within": the commit made the caps from the op's limits, an op with other limits has another
 * userOpHash than the one its account signed, and exact caps let the ledger key the op by that hash.
 */
export function readCommitment(args: {
  readonly chain: ChainRuntime;
  readonly committed: CommittedPaymaster;
  readonly op: { readonly [K in keyof GasLimits]?: bigint | undefined };
  readonly paymasterGas: PaymasterGas;
}): Commitment {
  const { committed: c, chain, paymasterGas: gas } = args;
  if (c.paymaster.toLowerCase() !== chain.paymaster.toLowerCase()) {
    throw new ValidationError(`the committed paymaster ${c.paymaster} is not Patron's ${chain.paymaster}`);
  }
  if (
    c.paymasterVerificationGasLimit !== gas.paymasterVerificationGasLimit ||
    c.paymasterPostOpGasLimit !== gas.paymasterPostOpGasLimit
  ) {
    throw new ValidationError(
      `the committed paymaster gas limits (${c.paymasterVerificationGasLimit}, ${c.paymasterPostOpGasLimit}) are not the ones Patron signs (${gas.paymasterVerificationGasLimit}, ${gas.paymasterPostOpGasLimit})`,
    );
  }
  const paymasterAndData = concat([
    c.paymaster,
    numberToHex(c.paymasterVerificationGasLimit, { size: 16 }),
    numberToHex(c.paymasterPostOpGasLimit, { size: 16 }),
    c.paymasterData,
  ]);
  const decoded = decodeCommitted(paymasterAndData);
  if (!decoded.signatureInSuffix) {
    throw new ValidationError('the committed paymasterData has no paymasterSignature suffix: it is not a commit');
  }
  if (decoded.fields.mode !== MODE_SPONSORED) {
    throw new ValidationError('the committed paymasterData is not of the sponsored mode');
  }
  const { caps } = decoded;
  const op = args.op;
  if (
    op.verificationGasLimit !== caps.maxVerificationGasLimit ||
    op.callGasLimit !== caps.maxCallGasLimit ||
    op.preVerificationGas !== caps.maxPreVerificationGas
  ) {
    throw new ValidationError(
      `the committed gas caps (verification ${caps.maxVerificationGasLimit}, call ${caps.maxCallGasLimit}, preVerification ${caps.maxPreVerificationGas}) are not the op's gas limits`,
    );
  }
  return {
    window: { validUntil: decoded.validUntil, validAfter: decoded.validAfter },
    prefix: unsuffixedPrefix(paymasterAndData),
  };
}

function decodeCommitted(paymasterAndData: Hex) {
  try {
    return decodePaymasterAndDataV07(paymasterAndData);
  } catch (err) {
    if (!(err instanceof PatronError)) throw err;
    throw new ValidationError(`the committed paymasterData is not Patron's: ${err.shortMessage}`);
  }
}
