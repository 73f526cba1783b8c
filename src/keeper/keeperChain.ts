import {
  type Address,
  createWalletClient,
  custom,
  encodeFunctionData,
  type Hex,
  keccak256,
  type LocalAccount,
  type PublicClient,
} from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import { patronPaymasterAbi } from '../chain/artifacts.js';

/**
 * What the keeper reads and sends on one paymaster's chain (src/keeper/README.md), apart from its rules so that
 * they read as rules. `depositTo(paymaster)` is the EntryPoint's own (the same selector on every version), payable by
 * anyone: the funding key needs no role on the paymaster.
 */
export interface KeeperChain {
  readonly chainId: number;
  readonly entryPoint: Address;
  readonly paymaster: Address;
  readDeposit(): Promise<bigint>;
  /** The paymaster's owner (a Safe in proposal mode). */
  readOwner(): Promise<Address>;
  /** The depositTo call a top-up of `amountWei` makes. */
  depositCall(amountWei: bigint): { readonly to: Address; readonly value: bigint; readonly data: Hex };
  /** The funding key's balance; undefined without a funding key. */
  readFunderBalance(): Promise<bigint | undefined>;
  /**
   * The top-up signed and not yet sent: its hash is known (and recorded) before it is broadcast, so a process that
   * stops in between leaves a row the next round can look up on chain.
   */
  signTopup(amountWei: bigint): Promise<{ readonly hash: Hex; broadcast(): Promise<void> }>;
  /** `success`, `reverted`, or undefined while it is not mined. */
  receipt(hash: Hex): Promise<'success' | 'reverted' | undefined>;
  /** Waits for the receipt, at most `timeoutMs` (undefined after that: still pending). */
  waitForReceipt(hash: Hex, timeoutMs: number): Promise<'success' | 'reverted' | undefined>;
  /** Whether the node knows the transaction at all (mined or waiting): false once it was dropped. */
  known(hash: Hex): Promise<boolean>;
}

export function keeperChain(args: {
  readonly chainId: number;
  readonly client: PublicClient;
  readonly entryPoint: Address;
  readonly paymaster: Address;
  /** The funding key as a viem account (paymaster/signer/signerAccount.ts); undefined: propose only. */
  readonly funder: LocalAccount | undefined;
}): KeeperChain {
  const { client, entryPoint, paymaster, funder, chainId } = args;
  const depositCall = (amountWei: bigint) => ({
    to: entryPoint,
    value: amountWei,
    data: encodeFunctionData({ abi: entryPoint06Abi, functionName: 'depositTo', args: [paymaster] }),
  });
  const status = (s: 'success' | 'reverted') => s;
  return {
    chainId,
    entryPoint,
    paymaster,
    readDeposit: () =>
      client.readContract({ address: entryPoint, abi: entryPoint06Abi, functionName: 'balanceOf', args: [paymaster] }),
    readOwner: () => client.readContract({ address: paymaster, abi: patronPaymasterAbi, functionName: 'owner' }),
    depositCall,
    readFunderBalance: async () => (funder === undefined ? undefined : client.getBalance({ address: funder.address })),
    async signTopup(amountWei) {
      if (funder === undefined) throw new Error('no funding key: PATRON_KEEPER_FUNDER_* is not set');
      // The chain's own client as transport: the same RPC (and timeouts) every other read of this chain uses.
      const wallet = createWalletClient({
        account: funder,
        transport: custom({ request: (req) => client.request(req) }),
      });
      const request = await wallet.prepareTransactionRequest({ ...depositCall(amountWei), chain: null, chainId });
      const serializedTransaction = await wallet.signTransaction({ ...request, chain: null });
      return {
        hash: keccak256(serializedTransaction),
        broadcast: async () => {
          await client.sendRawTransaction({ serializedTransaction });
        },
      };
    },
    async receipt(hash) {
      const r = await client.getTransactionReceipt({ hash }).catch(() => undefined);
      return r === undefined ? undefined : status(r.status);
    },
    async waitForReceipt(hash, timeoutMs) {
      try {
        const r = await client.waitForTransactionReceipt({ hash, timeout: timeoutMs, pollingInterval: 250 });
        return status(r.status);
      } catch {
        return undefined;
      }
    },
    async known(hash) {
      return client.getTransaction({ hash }).then(
        () => true,
        () => false,
      );
    },
  };
}
