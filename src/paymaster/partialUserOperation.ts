import type { Address, Hex } from 'viem';

/**
 * The user operation a request asks Patron to pay for, as the domain works on it: quantities as bigints, bytes
 * lower-case, the sender checksummed, a v0.7-shaped op's factory and factoryData already joined into initCode. The
 * gas limits are undefined where the client left them out (or sent 0); the paymaster fields are not here (Patron
 * writes them). Each dialect's wire form is parsed into this in rpc/wire/userOperation.ts.
 */
export interface PartialUserOperation {
  readonly sender: Address;
  readonly nonce: bigint;
  readonly initCode: Hex;
  readonly callData: Hex;
  readonly callGasLimit: bigint | undefined;
  readonly verificationGasLimit: bigint | undefined;
  readonly preVerificationGas: bigint | undefined;
  readonly maxFeePerGas: bigint;
  readonly maxPriorityFeePerGas: bigint;
  readonly signature: Hex;
  readonly eip7702Auth: Eip7702Auth | undefined;
}

/**
 * An EIP-7702 authorization sent with a v0.8+ op (`eip7702Auth`): the bundler puts it in its type-4 transaction.
 * Patron reads the delegate (`address`), which its v0.8+ signature binds; the chain checks the rest.
 */
export interface Eip7702Auth {
  readonly address: Address;
  readonly chainId: bigint;
  readonly nonce: bigint;
  readonly r: bigint;
  readonly s: bigint;
  readonly yParity: bigint;
}
