import type { Address } from 'viem';
import type { ChainRuntime } from '../../chain/chainRegistry.js';
import type { ChainTokens } from '../../tokens/tokenCatalog.js';
import { entryPointModule } from '../entryPoints/entryPointModules.js';
import { markedUpExchangeRate } from '../entryPoints/tokenMath.js';

/**
 * Token prices for clients that compute the approval themselves (Pimlico's `pimlico_getTokenQuotes`, which
 * permissionless's ERC-20 flow reads): no op, no I/O, only the catalog's snapshot and the EntryPoint's rules.
 * permissionless approves `(sum of the op's five gas limits + postOpGas) × maxFeePerGas × exchangeRate / 1e18`,
 * so `exchangeRate` carries Patron's markup and `postOpGas` is what Patron's maximum charge adds to the prefund.
 */
export interface TokenRateQuote {
  readonly paymaster: Address;
  readonly token: Address;
  readonly postOpGas: bigint;
  /** Token base units per 1e18 wei, the price markup included, rounded up (the paymaster's favour). */
  readonly exchangeRate: bigint;
  /** USD per whole native coin, 6 decimals (Pimlico's scale). */
  readonly nativeUsdE6: bigint;
}

const NO_ACCOUNT_GAS = { callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n };

/**
 * The gas the token mode's maximum charge adds beyond the EntryPoint's prefund, for any op: the module's
 * maxChargeWei minus its worstCaseCost at zero account limits and 1 wei per gas. v0.7+: POST_OP_OVERHEAD plus the
 * penalty bound on the paymaster's postOp limit (55,000). v0.7's penalty bound also grows by callGasLimit / 10 and
 * v0.6's prefund counts verificationGasLimit three times, neither of which one op-independent number can carry:
 * an approval computed from this is then below Patron's maximum, and the token service accepts it (and signs it as
 * the maximum) when it covers the op's simulated cost (docs/guides/token-mode.md, "Token mode: final data").
 */
export function tokenPostOpGas(chain: ChainRuntime): bigint {
  const ep = entryPointModule(chain.entryPointVersion);
  const gas = { ...NO_ACCOUNT_GAS, ...ep.paymasterGas('ERC20') };
  return ep.maxChargeWei(gas, 1n) - ep.worstCaseCost(gas, 1n);
}

/**
 * One quote per requested token the chain can price now, in the order asked, each once (any letter case); a token
 * not configured or without a fresh price is left out, as Pimlico documents (the call still succeeds).
 */
export function tokenRateQuotes(args: {
  readonly chain: ChainRuntime;
  readonly snapshot: ChainTokens | undefined;
  readonly tokens: readonly string[];
}): TokenRateQuote[] {
  const { chain, snapshot } = args;
  const nativeUsdE18 = snapshot?.nativeUsdE18;
  if (snapshot === undefined || nativeUsdE18 === undefined) return [];
  const byKey = new Map(snapshot.tokens.map((t) => [t.address.toLowerCase(), t]));
  const postOpGas = tokenPostOpGas(chain);
  const nativeUsdE6 = (nativeUsdE18 + 500_000_000_000n) / 1_000_000_000_000n;
  const seen = new Set<string>();
  const quotes: TokenRateQuote[] = [];
  for (const requested of args.tokens) {
    const key = requested.toLowerCase();
    const token = byKey.get(key);
    if (token === undefined || seen.has(key)) continue;
    seen.add(key);
    quotes.push({
      paymaster: chain.paymaster,
      token: token.address,
      postOpGas,
      exchangeRate: markedUpExchangeRate(token),
      nativeUsdE6,
    });
  }
  return quotes;
}
