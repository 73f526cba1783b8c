import { UnsupportedError } from '../errors/PatronError.js';
import type { SponsoredUserOperation } from '../paymaster/sponsorshipService.js';
import type { ModeObject, PartialUserOperation } from '../paymaster/userOperationInput.js';
import type { RpcContext } from './rpcMethod.js';

/**
 * The sponsored result on the wire (spec §2.6 and clients.md): `mode` *and* `MODE` (every Biconomy SDK reads
 * lower-case `mode`, the spec writes `MODE`), preVerificationGas as a decimal string, the two limits as
 * integers (numbers while they are exact in a double, decimal strings beyond).
 */
export function sponsoredResult(s: SponsoredUserOperation) {
  return {
    mode: 'SPONSORED' as const,
    MODE: 'SPONSORED' as const,
    paymasterAndData: s.paymasterAndData,
    preVerificationGas: s.preVerificationGas.toString(10),
    verificationGasLimit: integer(s.verificationGasLimit),
    callGasLimit: integer(s.callGasLimit),
  };
}

function integer(n: bigint): number | string {
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString(10);
}

/** The Biconomy-dialect methods' shared path: a user operation and a mode object in, the sponsored result out. */
export async function sponsorWithModeObject(userOp: PartialUserOperation, mode: ModeObject, ctx: RpcContext) {
  if (mode.mode === 'ERC20') throw new UnsupportedError('ERC20 mode is not available on this Patron yet');
  const sponsored = await ctx.sponsorship.sponsor({
    dappId: ctx.dapp.id,
    chain: ctx.chain,
    userOp,
    calculateGasLimits: mode.calculateGasLimits,
    expiryDuration: mode.expiryDuration,
    webhookData: mode.webhookData,
    ...(ctx.trace === undefined ? {} : { trace: ctx.trace }),
  });
  return sponsoredResult(sponsored);
}
