import type { ChainRuntime } from '../chain/chainRegistry.js';
import { includedPaymasterAndData } from '../chain/includedUserOp.js';
import type { UserOperationEventLog } from '../chain/userOperationEvents.js';
import { signatureFingerprintOf } from '../paymaster/entryPoints/signatureFingerprintOf.js';

/**
 * A deployment's `includedSignature` (settlementFollowerDeps.ts): the fingerprint of the paymaster signature an
 * included op carries, read from its transaction (README.md, "Attribution"); undefined when it cannot be read.
 */
export const includedSignatureOf =
  (chain: ChainRuntime) =>
  async (event: UserOperationEventLog): Promise<string | undefined> => {
    const included = await includedPaymasterAndData({
      client: chain.client,
      entryPoint: chain.entryPoint,
      packed: chain.entryPointVersion !== '0.6',
      event,
    });
    return included === undefined ? undefined : signatureFingerprintOf(chain.entryPointVersion, included);
  };
