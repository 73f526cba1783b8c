import { type ChainRuntime, forEntryPoint } from '../chain/chainRegistry.js';
import { ChainNotServedError, UnsupportedError, ValidationError } from '../errors/PatronError.js';
import type { RpcContext } from './rpcMethod.js';

/** How a chain's deployments read in an error: "v0.6 at 0x5FF1…, v0.7 at 0x0000…". */
function served(chain: ChainRuntime): string {
  return chain.deployments.map((d) => `v${d.entryPointVersion} at ${d.entryPoint}`).join(', ');
}

/**
 * The deployment a call that names no EntryPoint is served on (Biconomy's dialect: pm_getFeeQuoteOrData and
 * pm_sponsorUserOperation with a mode object): the URL's version, `/api/v1` v0.6 and `/api/v2` v0.7. A chain
 * without a paymaster for that version refuses rather than signing for another EntryPoint than the client uses.
 */
export function urlChain(ctx: RpcContext): ChainRuntime {
  if (ctx.chain.entryPointVersion === ctx.urlEntryPointVersion) return ctx.chain;
  throw new UnsupportedError(
    `This URL serves EntryPoint v${ctx.urlEntryPointVersion} for calls that name no EntryPoint, and chain ${ctx.chain.chainId} has no Patron paymaster for it here (it has ${served(ctx.chain)}); use the matching /api/v1 (v0.6) or /api/v2 (v0.7) URL, or an ERC-7677 call naming the EntryPoint`,
  );
}

/** The deployment for the EntryPoint a call names (ERC-7677, Pimlico's dialect). */
export function entryPointChain(ctx: RpcContext, entryPoint: string, where: string): ChainRuntime {
  const chain = forEntryPoint(ctx.chain, entryPoint);
  if (chain !== undefined) return chain;
  throw new ValidationError(
    `Invalid params: ${where}: EntryPoint ${entryPoint} is not served here; chain ${ctx.chain.chainId} is served for ${served(ctx.chain)}`,
  );
}

/** A chain id the params name (ERC-7677, Pimlico's dialect) must be the URL's: a key is per chain. */
export function assertUrlChainId(ctx: RpcContext, chainId: bigint, where: string): void {
  if (chainId === BigInt(ctx.chain.chainId)) return;
  throw new ChainNotServedError(`${where} names chain ${chainId}, but this endpoint serves chain ${ctx.chain.chainId}`);
}
