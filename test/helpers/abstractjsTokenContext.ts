import * as abstractjs from '@biconomy/abstractjs';
import type { Address } from 'viem';

/**
 * @biconomy/abstractjs's ERC-20 paymaster context (`{ mode: "ERC20", tokenInfo: { feeTokenAddress }, ... }`) for
 * `createBicoBundlerClient({ paymasterContext })`. abstractjs exports toBiconomyTokenPaymasterContext at run time, but
 * its type declaration is not reachable from the package's types entry under NodeNext resolution: the function itself
 * is used, typed here by what it returns.
 */
export const { toBiconomyTokenPaymasterContext } = abstractjs as unknown as {
  toBiconomyTokenPaymasterContext(params: { feeTokenAddress: Address }): Record<string, unknown>;
};
