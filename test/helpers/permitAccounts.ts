import { toSafeSmartAccount } from 'permissionless/accounts';
import {
  type Address,
  concat,
  createPublicClient,
  custom,
  type Hex,
  isErc6492Signature,
  parseErc6492Signature,
  slice,
} from 'viem';
import type { UserOperation } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { deploySafe4337 } from '../../src/chain/safe4337.js';
import { COUNTER_ADDRESS } from './patronPaymasterV06.js';
import { executeCallData, type OpV07, signAccount, type V07Fixture } from './patronPaymasterV07.js';
import { delegateEoa, deploySimple7702, type permitTypedData } from './permitSigning.js';

/**
 * The smart accounts the permit tests sign with, each as its own code checks signatures:
 * - Safe 1.4.1 with its 4337 module (EntryPoint v0.7), built by permissionless's toSafeSmartAccount and not yet
 *   deployed (the op's initCode deploys it): its permit signature is ERC-1271's, through the module's fallback
 *   handler; permissionless wraps it in ERC-6492 while the Safe has no code, which the paymaster data must not carry;
 * - an EOA delegated to the EntryPoint's Simple7702Account (v0.8, v0.9): the token asks it through ERC-1271 (it has
 *   code), and its isValidSignature takes the EOA's own ECDSA signature of the digest.
 */
export interface PermitAccount {
  readonly label: string;
  readonly address: Address;
  /** factory ‖ factoryData while undeployed, else 0x. */
  readonly initCode: Hex;
  /** The account's call of the counter (COUNTER_ADDRESS). */
  readonly callData: Hex;
  /** Verification gas the account needs (its deployment included). */
  readonly verificationGasLimit: bigint;
  /** Signs the op as the account's validateUserOp checks it. */
  signOp(op: OpV07): Promise<OpV07>;
  /** The account's signature of the permit, as the SDK returns it (ERC-6492-wrapped while undeployed). */
  signPermitAsSdk(typed: ReturnType<typeof permitTypedData>): Promise<Hex>;
}

/** A signature without its ERC-6492 wrapper (what the permit mode carries). */
export function innerSignature(signature: Hex): Hex {
  return isErc6492Signature(signature) ? parseErc6492Signature(signature).signature : signature;
}

/** Installs what `account` needs on the fixture's chain: Safe 4337 on v0.7, the 7702 delegation after. */
export async function safePermitAccount(fx: V07Fixture, ownerKey: Hex): Promise<PermitAccount> {
  await deploySafe4337(fx.client);
  const safe = await toSafeSmartAccount({
    // A public client of the fixture's chain: the account reads the chain, and signs with its owners' keys.
    client: createPublicClient({ chain: fx.client.chain, transport: custom(fx.chain) }),
    owners: [privateKeyToAccount(ownerKey)],
    version: '1.4.1',
    entryPoint: { address: fx.entryPoint, version: '0.7' },
  });
  const { factory, factoryData } = await safe.getFactoryArgs();
  const deployed = factory === undefined || factoryData === undefined;
  return {
    label: 'Safe 1.4.1 (undeployed, ERC-1271 through its 4337 module)',
    address: safe.address,
    initCode: deployed ? '0x' : concat([factory, factoryData]),
    callData: await safe.encodeCalls([{ to: COUNTER_ADDRESS, data: '0x' }]),
    verificationGasLimit: 600_000n,
    async signOp(op) {
      const signature = await safe.signUserOperation(unpackedOf(op));
      return { ...op, signature };
    },
    signPermitAsSdk: (typed) => safe.signTypedData(typed),
  };
}

export async function eip7702PermitAccount(fx: V07Fixture, eoaKey: Hex): Promise<PermitAccount> {
  const version = fx.version;
  if (version === '0.7') throw new Error('EIP-7702 accounts start with EntryPoint v0.8');
  const eoa = privateKeyToAccount(eoaKey);
  await delegateEoa(fx.client, eoa, await deploySimple7702(fx.client, version, fx.entryPoint));
  return {
    label: 'EOA delegated to Simple7702Account (EIP-7702, ERC-1271 of its own key)',
    address: eoa.address,
    initCode: '0x',
    callData: executeCallData('0x'),
    verificationGasLimit: 100_000n,
    signOp: (op) => signAccount(fx, op, { key: eoaKey }),
    signPermitAsSdk: (typed) => eoa.signTypedData(typed),
  };
}

/** The op as viem's UserOperation (v0.7 form): initCode split into factory and data, paymasterAndData unpacked. */
export function unpackedOf(op: OpV07): UserOperation<'0.7'> {
  const hasPaymaster = op.paymasterAndData.length > 2;
  return {
    sender: op.sender,
    nonce: op.nonce,
    // Both keys even when undefined, as viem's prepareUserOperation leaves them: permissionless's Safe signer packs
    // the paymaster fields into the hashed paymasterAndData only when it sees a `factory` key.
    factory: op.initCode === '0x' ? undefined : slice(op.initCode, 0, 20),
    factoryData: op.initCode === '0x' ? undefined : slice(op.initCode, 20),
    callData: op.callData,
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    ...(hasPaymaster
      ? {
          paymaster: slice(op.paymasterAndData, 0, 20),
          paymasterVerificationGasLimit: op.paymasterVerificationGasLimit,
          paymasterPostOpGasLimit: op.paymasterPostOpGasLimit,
          paymasterData: slice(op.paymasterAndData, 52),
        }
      : {}),
    signature: op.signature,
  };
}
