import {
  type Account,
  type Address,
  createWalletClient,
  custom,
  defineChain,
  type Hash,
  publicActions,
  testActions,
} from 'viem';
/** What a dev client needs of its chain (an EmbeddedChain is one): its id and EIP-1193 requests. */
export interface DevChainProvider {
  readonly chainId: number;
  request(args: { method: string; params?: readonly unknown[] | undefined }): Promise<unknown>;
}

/** A viem wallet + public + test (hardhat_*, evm_*) client for one account on an embedded chain. */
export function createDevClient({ chain, account }: { chain: DevChainProvider; account: Account }) {
  return createWalletClient({
    account,
    chain: defineChain({
      id: chain.chainId,
      name: 'Patron embedded chain',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [] } },
    }),
    // No retries: the chain is in-process, so an error is an answer, not a network hiccup.
    transport: custom(chain, { retryCount: 0 }),
    pollingInterval: 10,
  })
    .extend(publicActions)
    .extend(testActions({ mode: 'hardhat' }));
}

export type DevClient = ReturnType<typeof createDevClient>;

/** The receipt of a mined transaction; throws naming `what` when it reverted. */
export async function waitForSuccess(client: DevClient, hash: Hash, what: string) {
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`${what} failed (tx ${hash})`);
  return receipt;
}

export async function hasCode(client: DevClient, address: Address): Promise<boolean> {
  const code = await client.getCode({ address });
  return code !== undefined && code !== '0x';
}
