import type { EntryPointVersion } from '../../chain/chainRegistry.js';
import type { GasLimits, PaymasterFields } from '../../paymaster/entryPoints/entryPointModule.js';
import { hexQuantity as hex } from './scalars.js';

/**
 * ERC-7677's paymaster fields (https://eips.ethereum.org/EIPS/eip-7677), quantities as hex: `paymasterAndData`
 * for EntryPoint v0.6; from v0.7 `paymaster`, `paymasterData` and the paymaster's two gas limits, which the
 * service must return because the paymaster pays for them.
 */
export function erc7677Fields(f: PaymasterFields, version: EntryPointVersion) {
  if (version === '0.6') return { paymasterAndData: f.paymasterAndData };
  return {
    paymaster: f.paymaster,
    paymasterData: f.paymasterData,
    paymasterVerificationGasLimit: hex(f.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: hex(f.paymasterPostOpGasLimit),
  };
}

/** The account's gas limits, hex, for answers that computed them (calculateGasLimits, Pimlico's dialect). */
export function gasLimitFields(g: GasLimits) {
  return {
    callGasLimit: hex(g.callGasLimit),
    verificationGasLimit: hex(g.verificationGasLimit),
    preVerificationGas: hex(g.preVerificationGas),
  };
}
