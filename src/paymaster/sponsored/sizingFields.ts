import type { ChainRuntime } from '../../chain/chainRegistry.js';
import type { Authorization, PaymasterFields } from '../entryPoints/entryPointModule.js';
import { entryPointModule } from '../entryPoints/entryPointModules.js';

/** A window with no zero byte (bit 47 set, as a v0.9 block window): the most any window's bytes cost in calldata. */
const COSTLIEST_WINDOW = { validUntil: 0x8101_0101_0101, validAfter: 0x8101_0101_0101 } as const;

/**
 * Paymaster fields of the final length to size an op's preVerificationGas by (what the op needs: gasBounds.ts), made
 * once per chain and form (with or without v0.9's signature suffix) and kept: their window has no zero byte, so the
 * figure is the most any real window costs, and no request pays for an encoding just to count its bytes. Never
 * signed or sent: a dummy signature, placeholder values of the final length.
 */
export function createSizingFields(
  authorization: Authorization,
): (chain: ChainRuntime, suffixed: boolean) => PaymasterFields {
  const made = new WeakMap<ChainRuntime, { plain?: PaymasterFields; suffixed?: PaymasterFields }>();
  return (chain, suffixed) => {
    let forChain = made.get(chain);
    if (forChain === undefined) {
      forChain = {};
      made.set(chain, forChain);
    }
    const key = suffixed ? 'suffixed' : 'plain';
    forChain[key] ??= entryPointModule(chain.entryPointVersion).stub({
      chain,
      window: COSTLIEST_WINDOW,
      authorization,
      signatureInSuffix: suffixed,
    });
    return forChain[key];
  };
}
