import { type Address, formatEther, isAddressEqual } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import type { ChainRuntime, EntryPointVersion } from './chainRegistry.js';
import { addSignerHint, readPaymasterSigners } from './paymasterSigners.js';
import { withTimeout } from './withTimeout.js';

/**
 * What an operator checks about one paymaster deployment (a chain has one per EntryPoint version): its EntryPoint deposit (what sponsored gas is paid
 * from), its stake (public bundlers require a staked paymaster, ERC-7562), and whether the contract's
 * verifying signer is the key this Patron signs with (otherwise every sponsorship fails with AA34).
 */
export type PaymasterWarning =
  | { readonly code: 'deposit_low'; readonly message: string }
  | { readonly code: 'signer_mismatch'; readonly message: string }
  | { readonly code: 'not_staked'; readonly message: string }
  | { readonly code: 'unreachable'; readonly message: string };

export interface PaymasterStatus {
  readonly chainId: number;
  readonly embedded: boolean;
  readonly entryPointVersion: EntryPointVersion;
  readonly entryPoint: Address;
  readonly paymaster: Address;
  /** The signer this Patron signs with. */
  readonly signer: Address;
  /** The keys the contract accepts (paymasterSigners.ts), when they could be read. */
  readonly onChainSigners: readonly Address[] | undefined;
  /** Whether `signer` is among them (undefined when they could not be read). */
  readonly signerActive: boolean | undefined;
  readonly depositWei: bigint | undefined;
  readonly staked: boolean | undefined;
  readonly stakeWei: bigint | undefined;
  readonly unstakeDelaySec: number | undefined;
  /** Unix seconds from which an unlocked stake can be withdrawn (EntryPoint `withdrawTime`); 0 while locked. */
  readonly withdrawTime: number | undefined;
  readonly warnings: readonly PaymasterWarning[];
}

/**
 * The status of the deployment `chain` is a view of (chainRegistry.ts `deploymentViews` gives one per EntryPoint).
 * `getDepositInfo` is read through v0.6's ABI for every version: v0.7-v0.9 widen `deposit` to uint256, but
 * the struct is all static words, so the encoding is the same.
 */
export async function readPaymasterStatus(args: {
  chain: ChainRuntime;
  signer: Address;
  /** A deposit under `wei` is warned about (`deposit_low`), saying which mark it is (`mark`). */
  depositWarning: { readonly wei: bigint; readonly mark: string };
  timeoutMs?: number;
}): Promise<PaymasterStatus> {
  const { chain } = args;
  const base = {
    chainId: chain.chainId,
    embedded: chain.embedded,
    entryPointVersion: chain.entryPointVersion,
    entryPoint: chain.entryPoint,
    paymaster: chain.paymaster,
    signer: args.signer,
  };
  const timeoutMs = args.timeoutMs ?? 5000;
  const [info, onChainSigners] = await Promise.allSettled([
    withTimeout(
      chain.client.readContract({
        address: chain.entryPoint,
        abi: entryPoint06Abi,
        functionName: 'getDepositInfo',
        args: [chain.paymaster],
      }),
      timeoutMs,
    ),
    withTimeout(readPaymasterSigners(chain), timeoutMs),
  ]);
  const warnings: PaymasterWarning[] = [];
  const deposit = info.status === 'fulfilled' ? info.value : undefined;
  const onChain = onChainSigners.status === 'fulfilled' ? onChainSigners.value : undefined;
  const signerActive = onChain?.signers.some((s) => isAddressEqual(s, args.signer));
  if (deposit === undefined) {
    warnings.push({
      code: 'unreachable',
      message: `Could not read the EntryPoint v${chain.entryPointVersion} deposit on chain ${chain.chainId}`,
    });
  } else {
    if (deposit.deposit < args.depositWarning.wei) {
      warnings.push({
        code: 'deposit_low',
        message: `The deposit is below ${formatEther(args.depositWarning.wei)} ETH (${args.depositWarning.mark}): top it up before signing stops at the floor (patron paymaster deposit)`,
      });
    }
    if (!deposit.staked && !chain.embedded) {
      warnings.push({ code: 'not_staked', message: 'Not staked: public bundlers may refuse this paymaster' });
    }
  }
  if (onChain !== undefined && signerActive === false) {
    warnings.push({
      code: 'signer_mismatch',
      message: `The paymaster does not accept this Patron's signer, so Patron refuses to sign for it: ${addSignerHint({ paymaster: chain.paymaster, signer: args.signer, legacy: onChain.legacy })}`,
    });
  }
  return {
    ...base,
    onChainSigners: onChain?.signers,
    signerActive,
    depositWei: deposit?.deposit,
    staked: deposit?.staked,
    stakeWei: deposit === undefined ? undefined : BigInt(deposit.stake),
    unstakeDelaySec: deposit?.unstakeDelaySec,
    withdrawTime: deposit?.withdrawTime,
    warnings,
  };
}

export type StakeState = 'staked' | 'unstaked' | 'unlocking' | 'withdrawable';

/**
 * Where the paymaster's EntryPoint stake stands, for the owner's next step: `staked` (locked; token mode works),
 * `unlocking` (unlockStake was called, the delay runs until `withdrawTime`), `withdrawable` (the delay has passed:
 * withdrawStake), `unstaked` (no stake at all). Unlocking and withdrawable are both not staked for a bundler.
 */
export function stakeState(args: {
  readonly staked: boolean;
  readonly stakeWei: bigint;
  readonly withdrawTime: number;
  readonly nowSec: number;
}): StakeState {
  if (args.staked) return 'staked';
  if (args.stakeWei === 0n || args.withdrawTime === 0) return 'unstaked';
  return args.withdrawTime > args.nowSec ? 'unlocking' : 'withdrawable';
}
