import { hexToBytes } from 'viem';
import { eip1193ChainRuntime } from '../../src/chain/chainRegistry.js';
import { devChainTokenSettings } from '../../src/tokens/devChainTokens.js';
import { KEYS, type PatronFixture, startPatronFixture } from './patronPaymasterV06.js';
import { createTenant, createTestContext, type Tenant, type TestContext } from './testContext.js';

/**
 * The app wired to the in-process chain (EntryPoint v0.6, PatronPaymaster, SimpleAccountFactory) with the
 * service's real signer key, and one dApp: what the paymaster-URL tests and the SDK e2e set-up start from.
 * With `tokens`, the dev fee tokens (USDC, PDT at their fixed dev prices) are configured, so the ERC20 mode
 * is served too.
 */
export interface RpcFixture {
  readonly fx: PatronFixture;
  readonly ctx: TestContext;
  /** A dApp with no webhook. */
  readonly tenant: Tenant;
  close(): Promise<void>;
}

export async function startRpcFixture(options: { readonly tokens?: boolean } = {}): Promise<RpcFixture> {
  const fx = await startPatronFixture();
  const chain = eip1193ChainRuntime({
    chainId: fx.chain.chainId,
    request: fx.chain.request,
    entryPoint: fx.entryPoint,
    paymaster: fx.paymaster,
  });
  const ctx = await createTestContext({
    chains: [chain],
    ...(options.tokens
      ? {
          tokenChains: [devChainTokenSettings({ chainId: chain.chainId, client: chain.client, tokens: fx.tokens })],
        }
      : {}),
    signerKey: hexToBytes(KEYS.signer),
  });
  const tenant = await createTenant(ctx.deps);
  return {
    fx,
    ctx,
    tenant,
    async close() {
      await ctx.close();
      await fx.close();
    },
  };
}
