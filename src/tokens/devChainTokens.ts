import type { DevTokenInfo } from '../chain/embeddedChain.js';
import type { TokenSetting } from '../config/chainSettings.js';
import type { ChainTokenSettings } from './tokenCatalog.js';

/**
 * The dev chain's fee tokens (deployed by startDevChain in DEV_TOKENS order) at fixed prices: ETH 3000 USD,
 * USDC 1 USD with a 10 % premium and its permit, PDT 0.25 USD without either. Tests build the same for the chains
 * they start.
 */
export function devChainTokenSettings(args: {
  chainId: number;
  client: ChainTokenSettings['client'];
  tokens: readonly DevTokenInfo[];
}): ChainTokenSettings {
  const prices: ReadonlyArray<{ usd: string; premiumPercentage: string }> = [
    { usd: '1', premiumPercentage: '10' },
    { usd: '0.25', premiumPercentage: '0' },
  ];
  const tokens: TokenSetting[] = args.tokens.flatMap((t, i) => {
    const p = prices[i];
    return p === undefined
      ? []
      : [
          {
            address: t.address,
            logoUrl: '',
            premiumPercentage: p.premiumPercentage,
            price: { type: 'fixed', usd: p.usd },
            // USDC's permit (contracts/DevFiatToken.sol) is what the token mode's permit needs; PDT has none.
            permit: t.permit,
          },
        ];
  });
  return { chainId: args.chainId, client: args.client, nativeUsd: { type: 'fixed', usd: '3000' }, tokens };
}
