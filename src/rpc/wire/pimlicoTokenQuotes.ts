import type { TokenRateQuote } from '../../paymaster/tokenRateQuotes.js';
import { hexQuantity as hex } from './scalars.js';

/**
 * pimlico_getTokenQuotes's result on the wire: `{ quotes }`, quantities as hex (permissionless reads them with
 * hexToBigInt). `balanceSlot` and `allowanceSlot` are left out: Patron does not know a token's storage layout, and
 * permissionless needs them only for its opt-in balance override.
 */
export function tokenQuotesResult(quotes: readonly TokenRateQuote[]) {
  return {
    quotes: quotes.map((q) => ({
      paymaster: q.paymaster,
      token: q.token,
      postOpGas: hex(q.postOpGas),
      exchangeRate: hex(q.exchangeRate),
      exchangeRateNativeToUsd: hex(q.nativeUsdE6),
    })),
  };
}
