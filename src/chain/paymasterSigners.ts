import { type Address, getAddress, isAddressEqual, type PublicClient, parseAbi } from 'viem';

/**
 * The keys a Patron paymaster accepts. Today's contracts keep a set (`signers()`, `isSigner`) so a key is rotated
 * with an overlap; a paymaster deployed before the set existed has one `verifyingSigner()`, read as a set of one
 * so an operator is not forced to redeploy (and re-fund, re-stake) to upgrade the service.
 */
export interface PaymasterSigners {
  readonly signers: readonly Address[];
  /** The paymaster predates the signer set: its one key is changed with `setVerifyingSigner`, with no overlap. */
  readonly legacy: boolean;
}

/** The paymaster and a client that reads it (a ChainRuntime, or the CLI's client). */
export interface PaymasterReader {
  readonly client: Pick<PublicClient, 'readContract'>;
  readonly paymaster: Address;
}

const signersAbi = parseAbi([
  'function signers() view returns (address[])',
  'function isSigner(address signer) view returns (bool)',
  'function verifyingSigner() view returns (address)',
]);

/** Reads the paymaster's signer set; rejects when the contract answers neither form (not a Patron paymaster). */
export async function readPaymasterSigners(chain: PaymasterReader): Promise<PaymasterSigners> {
  try {
    const signers = await chain.client.readContract({
      address: chain.paymaster,
      abi: signersAbi,
      functionName: 'signers',
    });
    return { signers: signers.map((a) => getAddress(a)), legacy: false };
  } catch (setError) {
    return { signers: [await legacySigner(chain, setError)], legacy: true };
  }
}

/** A paymaster from before signer sets: its one `verifyingSigner()`; rejects with `setError` when it has none. */
async function legacySigner(chain: PaymasterReader, setError: unknown): Promise<Address> {
  const one = await chain.client
    .readContract({ address: chain.paymaster, abi: signersAbi, functionName: 'verifyingSigner' })
    .catch(() => {
      throw setError;
    });
  return getAddress(one);
}

/**
 * Whether `signer` may sign for the paymaster: one storage read (`isSigner`), cheap enough to ask every block. A
 * paymaster without the set answers through `verifyingSigner()`.
 */
export async function isPaymasterSigner(args: { chain: PaymasterReader; signer: Address }): Promise<boolean> {
  const { chain, signer } = args;
  try {
    return await chain.client.readContract({
      address: chain.paymaster,
      abi: signersAbi,
      functionName: 'isSigner',
      args: [signer],
    });
  } catch (setError) {
    return isAddressEqual(await legacySigner(chain, setError), signer);
  }
}

/** The fix an operator applies when the service's key is not among the paymaster's signers. */
export function addSignerHint(args: { paymaster: Address; signer: Address; legacy: boolean }): string {
  return args.legacy
    ? `the paymaster's owner sets it with setVerifyingSigner(${getAddress(args.signer)}) (a paymaster deployed before signer sets: redeploy it to rotate keys with an overlap)`
    : `the paymaster's owner adds it: patron paymaster add-signer --signer ${getAddress(args.signer)} --paymaster ${getAddress(args.paymaster)} --rpc URL`;
}
