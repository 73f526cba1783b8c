import type { ChainRegistry } from '../chain/chainRegistry.js';
import type { DevChain } from '../chain/embeddedChain.js';
import type { Config } from '../config/config.js';
import { devChainTokenSettings } from './devChainTokens.js';
import { type ChainTokenSettings, createTokenCatalog, type TokenCatalog } from './tokenCatalog.js';

/** How long the start waits for the first prices before serving without them. */
const FIRST_PRICES_WAIT_MS = 5000;

/**
 * The fee tokens and prices of every chain (deps.ts): the dev chain's own tokens, each configured chain's
 * `tokens` with its `nativeUsd`, or the caller's settings (tests). Started with a bounded wait for the first prices,
 * and `nativeUsdMicros`, the native coin's USD price as the policy caps and settlement count it.
 */
export async function buildTokenCatalog(args: {
  readonly config: Pick<Config, 'paymaster'>;
  readonly chains: ChainRegistry;
  readonly devChain: DevChain | undefined;
  /** Fee tokens of the caller's chains (tests), instead of the configured ones. */
  readonly tokenChains?: readonly ChainTokenSettings[] | undefined;
  readonly logger: Parameters<typeof createTokenCatalog>[0]['logger'];
  readonly now: () => number;
}): Promise<{ readonly tokenCatalog: TokenCatalog; nativeUsdMicros(chainId: number): bigint | undefined }> {
  const { config, devChain } = args;
  const tokenCatalog = createTokenCatalog({
    chains:
      args.tokenChains ??
      args.chains.list().flatMap((c): ChainTokenSettings[] => {
        if (devChain !== undefined && c.embedded && c.chainId === devChain.chain.chainId) {
          return [devChainTokenSettings({ chainId: c.chainId, client: c.client, tokens: devChain.tokens })];
        }
        const setting = config.paymaster.chains.find((s) => s.chainId === c.chainId);
        if (setting?.nativeUsd === undefined || (setting.tokens ?? []).length === 0) return [];
        return [{ chainId: c.chainId, client: c.client, nativeUsd: setting.nativeUsd, tokens: setting.tokens ?? [] }];
      }),
    logger: args.logger,
    now: args.now,
    refreshMs: config.paymaster.priceRefreshSeconds * 1000,
  });
  // The first requests should find prices, not "unavailable"; but a chain RPC that does not answer must not
  // hold the start up, so the wait is bounded (the refresh goes on in the background either way).
  await Promise.race([
    tokenCatalog.ready(),
    new Promise((resolve) => setTimeout(resolve, FIRST_PRICES_WAIT_MS).unref()),
  ]);
  return {
    tokenCatalog,
    // USD per native coin ×1e18 → micro-USD per coin, rounded up (caps are never under-counted); the catalog
    // withholds a stale price. The policy caps and settlement price with the same function.
    nativeUsdMicros(chainId) {
      const e18 = tokenCatalog.snapshot(chainId)?.nativeUsdE18;
      return e18 === undefined ? undefined : (e18 + 10n ** 12n - 1n) / 10n ** 12n;
    },
  };
}
