import type { EntryPointVersion } from '../../chain/chainRegistry.js';
import type { SponsoredUserOperation } from '../../paymaster/paymasterRequest.js';

/**
 * The paymaster data on the wire (spec §2.6 and clients.md): `mode` *and* `MODE` (every Biconomy SDK reads
 * lower-case `mode`, the spec writes `MODE`), preVerificationGas as a decimal string, the two limits as
 * integers (numbers while they are exact in a double, decimal strings beyond). The token mode's final data
 * has the same shape with mode ERC20.
 */
export function biconomyPaymasterResult(
  s: SponsoredUserOperation,
  mode: 'SPONSORED' | 'ERC20' = 'SPONSORED',
  entryPointVersion: EntryPointVersion = '0.6',
) {
  return {
    mode,
    MODE: mode,
    paymasterAndData: s.paymasterAndData,
    preVerificationGas: s.preVerificationGas.toString(10),
    verificationGasLimit: integer(s.verificationGasLimit),
    callGasLimit: integer(s.callGasLimit),
    // v0.7+: the unpacked fields a v0.7 op carries (paymasterAndData above is their packing, for v0.6-era readers).
    ...(entryPointVersion === '0.6'
      ? {}
      : {
          paymaster: s.paymaster,
          paymasterData: s.paymasterData,
          paymasterVerificationGasLimit: integer(s.paymasterVerificationGasLimit),
          paymasterPostOpGasLimit: integer(s.paymasterPostOpGasLimit),
        }),
  };
}

function integer(n: bigint): number | string {
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString(10);
}
