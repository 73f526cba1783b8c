import { BaseError, ContractFunctionRevertedError, ContractFunctionZeroDataError, parseAbi } from 'viem';
import { UnavailableError } from '../errors/PatronError.js';
import type { ChainRuntime } from './chainRegistry.js';

/**
 * Whether a chain's Patron paymaster has the token mode's permit (mode 3), asked once per deployment: a paymaster
 * deployed before it has no `MODE_TOKEN_PERMIT()` (the call reverts), and its code never changes (no proxy), so
 * the answer is kept for the process. Only the permit path asks (a stub that offers a permit, final data that carries
 * one); a failed read is not kept, and is UnavailableError (HTTP 503; clients retry).
 */
export interface PermitModeSupport {
  supported(chain: ChainRuntime): Promise<boolean>;
}

/** The mode byte PatronPaymaster(V07) answers; an older deployment reverts. */
export const PERMIT_MODE = 3;

const permitModeAbi = parseAbi(['function MODE_TOKEN_PERMIT() view returns (uint8)']);

export function createPermitModeSupport(): PermitModeSupport {
  const known = new Map<string, Promise<boolean>>();
  const read = async (chain: ChainRuntime): Promise<boolean> => {
    try {
      const mode = await chain.client.readContract({
        address: chain.paymaster,
        abi: permitModeAbi,
        functionName: 'MODE_TOKEN_PERMIT',
      });
      return mode === PERMIT_MODE;
    } catch (err) {
      // A revert (no such function) or no code at all: a deployment without the permit mode.
      const answered =
        err instanceof BaseError &&
        err.walk((e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError) !==
          null;
      if (answered) return false;
      throw new UnavailableError(`Could not read the paymaster ${chain.paymaster} on chain ${chain.chainId}`, {
        cause: err,
      });
    }
  };
  return {
    supported(chain) {
      const key = `${chain.chainId}:${chain.paymaster.toLowerCase()}`;
      let answer = known.get(key);
      if (answer === undefined) {
        answer = read(chain);
        known.set(key, answer);
        // A failed read is asked again next time, not kept.
        answer.catch(() => known.delete(key));
      }
      return answer;
    },
  };
}
