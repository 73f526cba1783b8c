import * as accountSdk from '@biconomy/account';
import { type Address, createWalletClient, defineChain, type Hex, http, keccak256, stringToHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/**
 * `@biconomy/account` 4.x's smart-account client (Biconomy Smart Account v2) as a dApp builds it:
 * `createSmartAccountClient({ signer, bundler, paymasterUrl, customChain })`, for the e2e test of that flow and the
 * sign-to-inclusion benchmark. The SDK's typings do not resolve under NodeNext (see e2e.biconomyAccount.test.ts): the
 * slice used is typed by hand here, and e2e.biconomySmartAccountV2.test.ts checks it against the dev chain.
 */
export type BiconomyMode = 'SPONSORED' | 'ERC20';
export interface BiconomyFeeQuote {
  readonly tokenAddress: string;
  readonly decimal: number;
  readonly maxGasFee: number;
}
export interface BiconomyPartialOp {
  readonly sender: Address;
  readonly initCode: Hex;
  readonly callData: Hex;
  readonly signature: Hex;
  readonly paymasterAndData: Hex;
}
export interface BiconomyPaymasterServiceData {
  readonly mode: BiconomyMode;
  readonly preferredToken?: string;
  readonly feeQuote?: BiconomyFeeQuote;
  readonly spender?: string;
}
export interface BiconomySmartAccount {
  getAccountAddress(): Promise<Address>;
  buildUserOp(
    txs: readonly { to: Address; data: Hex }[],
    dto: { paymasterServiceData: BiconomyPaymasterServiceData },
  ): Promise<BiconomyPartialOp>;
  getTokenFees(
    tx: { to: Address; data: Hex },
    dto: { paymasterServiceData: BiconomyPaymasterServiceData },
  ): Promise<{ feeQuotes?: BiconomyFeeQuote[]; tokenPaymasterAddress?: string }>;
  sendUserOp(op: BiconomyPartialOp): Promise<{
    userOpHash: Hex;
    wait(): Promise<{ success: unknown; receipt: { transactionHash: Hex } }>;
  }>;
}
interface AccountSdk {
  createSmartAccountClient(config: {
    signer: unknown;
    bundler: unknown;
    paymasterUrl: string;
    customChain: unknown;
  }): Promise<BiconomySmartAccount>;
  /** The SDK's bundler client; `userOpReceiptIntervals` (ms per chain id) is how often `wait()` polls (default 5 s). */
  readonly Bundler: new (config: {
    bundlerUrl: string;
    chainId: number;
    customChain: unknown;
    userOpReceiptIntervals: Record<number, number>;
  }) => unknown;
  readonly PROXY_CREATION_CODE: Hex;
  readonly DEFAULT_BICONOMY_FACTORY_ADDRESS: Address;
  readonly DEFAULT_BICONOMY_IMPLEMENTATION_ADDRESS: Address;
  readonly DEFAULT_FALLBACK_HANDLER_ADDRESS: Address;
  readonly DEFAULT_ECDSA_OWNERSHIP_MODULE: Address;
}
export const biconomyAccountSdk = accountSdk as unknown as AccountSdk;

/**
 * The SDK's client for the owner `label` names, on the dev chain as a dApp on `npm start` would configure it:
 * the chain at `{base}/chain/{chainId}`, the bundler at `bundlerUrl` (the Biconomy front of alto), Patron's `/api/v1`
 * paymaster URL.
 */
export async function biconomySmartAccountFor(params: {
  readonly label: string;
  readonly base: string;
  readonly chainId: number;
  readonly bundlerUrl: string;
  readonly paymasterUrl: string;
}) {
  const owner = privateKeyToAccount(keccak256(stringToHex(`patron-test-sa-v2-${params.label}`)));
  const rpcUrl = `${params.base}/chain/${params.chainId}`;
  const chain = defineChain({
    id: params.chainId,
    name: 'Patron dev chain',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const signer = createWalletClient({ account: owner, chain, transport: http(rpcUrl) });
  // The SDK's own bundler client, configured as a dApp may: `wait()` polls the receipt every 5 s by default on a
  // chain the SDK has no figure for, and the dev chain mines the bundle at once.
  const bundler = new biconomyAccountSdk.Bundler({
    bundlerUrl: params.bundlerUrl,
    chainId: params.chainId,
    customChain: chain,
    userOpReceiptIntervals: { [params.chainId]: 100 },
  });
  const account = await biconomyAccountSdk.createSmartAccountClient({
    signer,
    bundler,
    paymasterUrl: params.paymasterUrl,
    customChain: chain,
  });
  return { owner, account, address: await account.getAccountAddress() };
}
