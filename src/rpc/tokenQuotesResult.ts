import type { Hex } from 'viem';
import type { TokenRateQuote } from '../paymaster/tokenRateQuotes.js';

const hex = (n: bigint): Hex => `0x${n.toString(16)}`;

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
