import { hexToBytes } from 'viem';
import type { KnownAccountsSetting } from '../../src/config/knownAccountsSettings.js';
import type { UserOperationV06 } from '../../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import type { PaymasterSigner } from '../../src/paymaster/signer/paymasterSigner.js';
import { devChainTokenSettings } from '../../src/tokens/devChainTokens.js';
import { fixtureChainRuntime, KEYS, type PatronFixture, startPatronFixture } from './patronPaymasterV06.js';
import {
  createTenant,
  createTestContext,
  enableTokenGuarantees,
  type Tenant,
  type TestContext,
} from './testContext.js';

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
  /**
   * A JSON-RPC request (id 42) to the paymaster URL through `inject()`: the fixture's dApp and chain unless
   * `apiKey`/`chainId` say otherwise. The answer is returned as is, for the test to check.
   */
  rpc(
    method: string,
    params: unknown[],
    target?: { readonly apiKey?: string; readonly chainId?: number },
  ): Promise<{ status: number; body: RpcAnswer }>;
  close(): Promise<void>;
}

/** A JSON-RPC answer as the tests read it; the wire shape itself is checked by the tests. */
export interface RpcAnswer {
  id: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: { reason?: string } };
}

export async function startRpcFixture(
  options: {
    readonly tokens?: boolean;
    /**
     * The fixture's dApp turns token guarantees on (off by default) with TEST_GUARANTEE_CAP: for flows that batch
     * their approval, which Patron signs in mode 2 only as the dApp's guarantee.
     */
    readonly tokenGuarantees?: boolean;
    /** Accounts the chain knows besides the dev chain's (what PATRON_CHAINS[i].accounts adds), deployed first. */
    readonly accounts?: (fx: PatronFixture) => Promise<KnownAccountsSetting>;
    /** A signer the test made over the fixture's signer key (e.g. one that counts its calls); the test closes it. */
    readonly signer?: PaymasterSigner;
    /** The fixture's chain, started by the test (a fork, say); closed with the fixture. */
    readonly fixture?: PatronFixture;
  } = {},
): Promise<RpcFixture> {
  const fx = options.fixture ?? (await startPatronFixture());
  const own = fixtureChainRuntime(fx);
  const chain =
    options.accounts === undefined ? own : { ...own, accounts: { ...own.accounts, ...(await options.accounts(fx)) } };
  const ctx = await createTestContext({
    chains: [chain],
    ...(options.tokens
      ? {
          tokenChains: [devChainTokenSettings({ chainId: chain.chainId, client: chain.client, tokens: fx.tokens })],
        }
      : {}),
    ...(options.signer === undefined ? { signerKey: hexToBytes(KEYS.signer) } : { signer: options.signer }),
  });
  const tenant = await createTenant(ctx.deps, undefined, fx.chain.chainId);
  if (options.tokenGuarantees === true) await enableTokenGuarantees(ctx.deps, tenant);
  return {
    fx,
    ctx,
    tenant,
    async rpc(method, params, target = {}) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: `/api/v1/${target.chainId ?? fx.chain.chainId}/${target.apiKey ?? tenant.apiKey}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 42, method, params }),
      });
      return { status: res.statusCode, body: res.json() as RpcAnswer };
    },
    async close() {
      await ctx.close();
      await fx.close();
    },
  };
}

/** A v0.6 op as viem-style clients send it: every quantity as hex, no signature. */
export function hexWireOpV06(op: UserOperationV06) {
  const hex = (n: bigint) => `0x${n.toString(16)}`;
  return {
    sender: op.sender,
    nonce: hex(op.nonce),
    initCode: op.initCode,
    callData: op.callData,
    callGasLimit: hex(op.callGasLimit),
    verificationGasLimit: hex(op.verificationGasLimit),
    preVerificationGas: hex(op.preVerificationGas),
    maxFeePerGas: hex(op.maxFeePerGas),
    maxPriorityFeePerGas: hex(op.maxPriorityFeePerGas),
  };
}

/** The op as a Biconomy v0.6 SDK sends it: decimal gas strings, hex fees and nonce (limits left out with `withGas: false`). */
export function biconomyWireOp(op: UserOperationV06, withGas = true) {
  return {
    sender: op.sender,
    nonce: `0x${op.nonce.toString(16)}`,
    initCode: op.initCode,
    callData: op.callData,
    maxFeePerGas: `0x${op.maxFeePerGas.toString(16)}`,
    maxPriorityFeePerGas: `0x${op.maxPriorityFeePerGas.toString(16)}`,
    ...(withGas
      ? {
          callGasLimit: op.callGasLimit.toString(),
          verificationGasLimit: op.verificationGasLimit.toString(),
          preVerificationGas: op.preVerificationGas.toString(),
        }
      : {}),
    signature: '0x',
  };
}
