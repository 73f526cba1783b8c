import { type Abi, type Address, decodeErrorResult, formatEther, type Hex, parseAbi } from 'viem';
import { patronPaymasterAbi } from '../chain/artifacts.js';
import { patronPaymasterV07Abi } from '../chain/deployPatronPaymasterV07.js';
import { findRevertData } from '../chain/revertData.js';

/**
 * Errors an owner's call can revert with besides the paymasters' own (in their ABIs): OpenZeppelin's (Ownable,
 * SafeERC20, ERC-20's ERC-6093 errors) and the EntryPoint's StakeManager, which bubble up through the paymaster.
 * EntryPoint v0.6 and v0.7 revert with strings (Error(string), which viem decodes without an ABI); v0.8 and
 * v0.9 with the custom errors of IStakeManager below.
 */
const extraErrorsAbi = parseAbi([
  'error OwnableUnauthorizedAccount(address account)',
  'error OwnableInvalidOwner(address owner)',
  'error SafeERC20FailedOperation(address token)',
  'error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)',
  'error InvalidUnstakeDelay(uint256 newUnstakeDelaySec, uint256 currentUnstakeDelaySec)',
  'error InvalidStake(uint256 msgValue, uint256 currentStake)',
  'error NotStaked(uint256 currentStake, uint256 unstakeDelaySec, bool staked)',
  'error InsufficientDeposit(uint256 currentDeposit, uint256 withdrawAmount)',
  'error StakeNotUnlocked(uint256 withdrawTime, uint256 blockTimestamp)',
  'error WithdrawalNotDue(uint256 withdrawTime, uint256 blockTimestamp)',
  'error StakeWithdrawalFailed(address account, address withdrawAddress, uint256 amount, bytes revertReason)',
  'error DepositWithdrawalFailed(address account, address withdrawAddress, uint256 amount, bytes revertReason)',
]);

const errorsAbi: Abi = [
  ...patronPaymasterAbi.filter((i) => i.type === 'error'),
  ...patronPaymasterV07Abi.filter((i) => i.type === 'error'),
  ...extraErrorsAbi,
];

/** The EntryPoint v0.6/v0.7 reasons an operator can act on, with what to do. */
const ENTRY_POINT_HINTS: Record<string, string> = {
  'must call unlockStake() first': 'run `patron paymaster unlock-stake` first, then wait the unstake delay',
  'Stake withdrawal is not due': 'the unstake delay since `unlock-stake` has not passed yet',
  'cannot decrease unstake time': '--unstake-delay may not be shorter than the current one',
  'already unstaking': 'the stake is already unlocked: withdraw it once the delay passed, or stake again',
  'Withdraw amount too large': 'the deposit is smaller than --amount (see `patron paymaster info`)',
};

const date = (seconds: bigint) => new Date(Number(seconds) * 1000).toISOString();

/** One readable sentence for a decoded custom error; `owner` is the paymaster's, `from` the calling key. */
function describeError(args: { name: string; values: readonly unknown[]; owner: Address }): string {
  const v = args.values;
  const n = (i: number) => (typeof v[i] === 'bigint' ? (v[i] as bigint) : 0n);
  switch (args.name) {
    case 'OwnableUnauthorizedAccount':
      return `the key ${String(v[0])} is not the paymaster's owner (owner is ${args.owner})`;
    case 'ZeroAddress':
      return 'an address argument is the zero address (0x000…0), which the paymaster refuses';
    case 'SignerAlreadyAdded':
      return `${String(v[0])} is already one of the paymaster's signers`;
    case 'NotASigner':
      return `${String(v[0])} is not one of the paymaster's signers (see them with patron paymaster info)`;
    case 'InsufficientDeposit':
      return `the deposit is ${formatEther(n(0))} ETH, less than the ${formatEther(n(1))} ETH asked`;
    case 'InvalidUnstakeDelay':
      return `--unstake-delay ${n(0)} s is invalid: it must be above 0 and at least the current ${n(1)} s`;
    case 'InvalidStake':
      return `the stake would be invalid (sent ${formatEther(n(0))} ETH on a stake of ${formatEther(n(1))} ETH): send a positive --amount`;
    case 'NotStaked':
      return `the paymaster is not staked, or its stake is already unlocked (stake ${formatEther(n(0))} ETH, unstake delay ${n(1)} s)`;
    case 'StakeNotUnlocked':
      return 'the stake is still locked: run `patron paymaster unlock-stake` first, then wait the unstake delay';
    case 'WithdrawalNotDue':
      return `the stake can be withdrawn from ${date(n(0))} on (the chain's time is ${date(n(1))})`;
    case 'ERC20InsufficientBalance':
      return `the paymaster holds ${n(1)} of the token, less than the ${n(2)} asked (base units)`;
    default:
      return `${args.name}(${v.map((x) => String(x)).join(', ')})`;
  }
}

/** Decodes revert data against the paymasters' ABIs, OpenZeppelin's and the EntryPoint's errors. */
export function decodeOwnerRevert(args: { data: Hex; owner: Address }): string {
  let decoded: { errorName: string; args: readonly unknown[] | undefined };
  try {
    decoded = decodeErrorResult({ abi: errorsAbi, data: args.data });
  } catch {
    return `it reverted with data no known error matches: ${args.data}`;
  }
  const values = decoded.args ?? [];
  if (decoded.errorName === 'Error') {
    const reason = String(values[0]);
    const hint = ENTRY_POINT_HINTS[reason];
    return `the EntryPoint refused: "${reason}"${hint === undefined ? '' : ` (${hint})`}`;
  }
  if (decoded.errorName === 'Panic') return `it panicked (Solidity panic code ${String(values[0])})`;
  return describeError({ name: decoded.errorName, values, owner: args.owner });
}

/**
 * One line for an error of a simulated or sent call: the decoded revert when the node returned revert data,
 * else viem's short message (an unreachable node, too little ETH for gas, …).
 */
export function explainCallError(args: { err: unknown; owner: Address }): string {
  const data = findRevertData(args.err);
  if (data !== undefined) return decodeOwnerRevert({ data, owner: args.owner });
  // viem's messages run over several lines (a hint, the request, the version); the node's own words are in
  // `details`, viem's summary in `shortMessage`.
  const e = args.err as { details?: unknown; shortMessage?: unknown; message?: unknown } | null;
  const text = [e?.details, e?.shortMessage, e?.message, String(args.err)].find(
    (t): t is string => typeof t === 'string' && t !== '',
  );
  return (text ?? 'unknown error').split('\n')[0] ?? '';
}
