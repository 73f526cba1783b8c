import { type Address, encodeFunctionData, erc20Abi, formatEther, formatUnits, parseEther, parseUnits } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import { patronPaymasterAbi } from '../chain/artifacts.js';
import { ValidationError } from '../errors/PatronError.js';
import { addressOption, option, requireOption } from './cliOptions.js';
import type { ChainCommandContext } from './commands.js';
import { type OwnerTarget, ownerOperation, runOwnerOperation } from './ownerOperation.js';

/**
 * The paymaster owner's operations (issue 22): the EntryPoint deposit and stake, the signer set, the fee
 * receiver and the tokens the paymaster holds. Both contracts (PatronPaymaster for v0.6, PatronPaymasterV07 for
 * v0.7-v0.9) expose them under the same signatures, so one ABI encodes them for every version.
 */
const wei = (value: bigint) => ({ kind: 'wei', value }) as const;
const address = (value: Address) => ({ kind: 'address', value }) as const;
const flag = (value: boolean) => ({ kind: 'flag', value }) as const;
const seconds = (value: number) => ({ kind: 'seconds', value }) as const;
const time = (value: number) => ({ kind: 'time', value }) as const;
const count = (value: number) => ({ kind: 'count', value }) as const;

/** Whether the paymaster accepts `signer`, and how many keys it accepts. */
async function signerState(t: OwnerTarget, signer: Address) {
  const signers = await t.client.readContract({
    address: t.paymaster,
    abi: patronPaymasterAbi,
    functionName: 'signers',
  });
  return {
    accepted: flag(signers.some((s) => s.toLowerCase() === signer.toLowerCase())),
    signers: count(signers.length),
  };
}

/** getDepositInfo through v0.6's ABI for every version (all static words, the same encoding; paymasterStatus.ts). */
function depositInfo(t: OwnerTarget) {
  return t.client.readContract({
    address: t.entryPoint,
    abi: entryPoint06Abi,
    functionName: 'getDepositInfo',
    args: [t.paymaster],
  });
}

function ether(text: string): bigint {
  if (!/^\d+(\.\d{1,18})?$/.test(text)) throw new ValidationError('--amount is in ether, e.g. 0.5');
  return parseEther(text);
}

function unstakeDelay(text: string | undefined, current: number): number {
  if (text === undefined) {
    if (current > 0) return current;
    throw new ValidationError('--unstake-delay SECONDS is required for a first stake (bundlers commonly ask 86400)');
  }
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(n > 0 && n < 2 ** 32)) throw new ValidationError('--unstake-delay is a whole number of seconds above 0');
  return n;
}

export const ownerCommands: Record<string, (ctx: ChainCommandContext) => Promise<void>> = {
  async 'paymaster withdraw'(ctx) {
    await runOwnerOperation(ctx, async (t) => {
      const to = addressOption(ctx, 'to', t.from);
      const text = requireOption(ctx, 'amount');
      const amount = text === 'all' ? (await depositInfo(t)).deposit : ether(text);
      return ownerOperation({
        functionName: 'withdrawTo',
        args: { withdrawAddress: to, amount: amount.toString() },
        summary: `withdraw ${formatEther(amount)} ETH of the EntryPoint deposit to ${to}`,
        data: encodeFunctionData({ abi: patronPaymasterAbi, functionName: 'withdrawTo', args: [to, amount] }),
        value: 0n,
        read: async () => ({
          deposit: wei((await depositInfo(t)).deposit),
          toBalance: wei(await t.client.getBalance({ address: to })),
        }),
        predict: (b) => ({ deposit: wei(b.deposit.value - amount), toBalance: wei(b.toBalance.value + amount) }),
      });
    });
  },

  async 'paymaster stake'(ctx) {
    await runOwnerOperation(ctx, async (t) => {
      const amount = ether(requireOption(ctx, 'amount'));
      const delay = unstakeDelay(option(ctx, 'unstake-delay'), (await depositInfo(t)).unstakeDelaySec);
      return ownerOperation({
        functionName: 'addStake',
        args: { unstakeDelaySec: String(delay), value: amount.toString() },
        summary: `add ${formatEther(amount)} ETH of stake with an unstake delay of ${delay} s`,
        data: encodeFunctionData({ abi: patronPaymasterAbi, functionName: 'addStake', args: [delay] }),
        value: amount,
        read: async () => {
          const info = await depositInfo(t);
          return { stake: wei(info.stake), staked: flag(info.staked), unstakeDelay: seconds(info.unstakeDelaySec) };
        },
        predict: (b) => ({ stake: wei(b.stake.value + amount), staked: flag(true), unstakeDelay: seconds(delay) }),
      });
    });
  },

  async 'paymaster unlock-stake'(ctx) {
    await runOwnerOperation(ctx, async (t) => {
      const [info, block] = await Promise.all([depositInfo(t), t.client.getBlock()]);
      return ownerOperation({
        functionName: 'unlockStake',
        args: {},
        summary: `unlock the stake (${formatEther(info.stake)} ETH), withdrawable after ${info.unstakeDelaySec} s`,
        data: encodeFunctionData({ abi: patronPaymasterAbi, functionName: 'unlockStake' }),
        value: 0n,
        read: async () => {
          const now = await depositInfo(t);
          return { staked: flag(now.staked), withdrawTime: time(now.withdrawTime) };
        },
        // The next block's time is at least the latest one's, so this is the earliest it can be.
        predict: () => ({
          staked: flag(false),
          withdrawTime: time(Number(block.timestamp) + info.unstakeDelaySec),
        }),
      });
    });
  },

  async 'paymaster withdraw-stake'(ctx) {
    await runOwnerOperation(ctx, async (t) => {
      const to = addressOption(ctx, 'to', t.from);
      const stake = (await depositInfo(t)).stake;
      return ownerOperation({
        functionName: 'withdrawStake',
        args: { withdrawAddress: to },
        summary: `withdraw the unlocked stake (${formatEther(stake)} ETH) to ${to}`,
        data: encodeFunctionData({ abi: patronPaymasterAbi, functionName: 'withdrawStake', args: [to] }),
        value: 0n,
        read: async () => ({
          stake: wei((await depositInfo(t)).stake),
          toBalance: wei(await t.client.getBalance({ address: to })),
        }),
        predict: (b) => ({ stake: wei(0n), toBalance: wei(b.toBalance.value + b.stake.value) }),
      });
    });
  },

  async 'paymaster add-signer'(ctx) {
    await runOwnerOperation(ctx, async (t) => {
      const signer = addressOption(ctx, 'signer');
      return ownerOperation({
        functionName: 'addSigner',
        args: { signer },
        summary: `accept signatures by ${signer} (beside the keys already there: the first step of a rotation)`,
        data: encodeFunctionData({ abi: patronPaymasterAbi, functionName: 'addSigner', args: [signer] }),
        value: 0n,
        read: async () => signerState(t, signer),
        predict: (b) => ({ accepted: flag(true), signers: count(b.signers.value + (b.accepted.value ? 0 : 1)) }),
      });
    });
  },

  async 'paymaster remove-signer'(ctx) {
    await runOwnerOperation(ctx, async (t) => {
      const signer = addressOption(ctx, 'signer');
      const before = await signerState(t, signer);
      // Without a key the paymaster refuses every sponsorship: an emergency stop, never the side effect of a typo.
      if (before.accepted.value && before.signers.value === 1 && ctx.options['emergency-stop'] !== true) {
        throw new ValidationError(
          `${signer} is the paymaster's only signer: removing it stops every sponsorship; add the new key first (paymaster add-signer), or pass --emergency-stop to stop on purpose`,
        );
      }
      return ownerOperation({
        functionName: 'removeSigner',
        args: { signer },
        summary: `stop accepting signatures by ${signer} (what it signed fails AA34 from the next block on)`,
        data: encodeFunctionData({ abi: patronPaymasterAbi, functionName: 'removeSigner', args: [signer] }),
        value: 0n,
        read: async () => signerState(t, signer),
        predict: (b) => ({ accepted: flag(false), signers: count(b.signers.value - (b.accepted.value ? 1 : 0)) }),
      });
    });
  },

  async 'paymaster set-fee-receiver'(ctx) {
    await runOwnerOperation(ctx, async (t) => {
      const receiver = addressOption(ctx, 'receiver');
      return ownerOperation({
        functionName: 'setFeeReceiver',
        args: { newReceiver: receiver },
        summary: `make ${receiver} the receiver of token-mode charges`,
        data: encodeFunctionData({ abi: patronPaymasterAbi, functionName: 'setFeeReceiver', args: [receiver] }),
        value: 0n,
        read: async () => ({
          feeReceiver: address(
            await t.client.readContract({ address: t.paymaster, abi: patronPaymasterAbi, functionName: 'feeReceiver' }),
          ),
        }),
        predict: () => ({ feeReceiver: address(receiver) }),
      });
    });
  },

  async 'paymaster withdraw-tokens'(ctx) {
    await runOwnerOperation(ctx, async (t) => {
      const token = addressOption(ctx, 'token');
      const to = addressOption(ctx, 'to', t.from);
      const text = requireOption(ctx, 'amount');
      const erc20 = { address: token, abi: erc20Abi } as const;
      let decimals: number;
      try {
        decimals = await t.client.readContract({ ...erc20, functionName: 'decimals' });
      } catch {
        throw new ValidationError(`--token ${token} is not an ERC-20 with decimals() on chain ${t.chainId}`);
      }
      const symbol = await t.client.readContract({ ...erc20, functionName: 'symbol' }).catch(() => 'tokens');
      const balanceOf = async (account: Address) => ({
        kind: 'units' as const,
        value: await t.client.readContract({ ...erc20, functionName: 'balanceOf', args: [account] }),
        decimals,
        symbol,
      });
      if (text !== 'all' && !new RegExp(`^\\d+(\\.\\d{1,${decimals}})?$`).test(text))
        throw new ValidationError(`--amount is in whole ${symbol} (up to ${decimals} decimals) or "all"`);
      const amount = text === 'all' ? (await balanceOf(t.paymaster)).value : parseUnits(text, decimals);
      return ownerOperation({
        functionName: 'withdrawTokens',
        args: { token, to, amount: amount.toString() },
        summary: `withdraw ${formatUnits(amount, decimals)} ${symbol} (${token}) the paymaster holds to ${to}`,
        data: encodeFunctionData({
          abi: patronPaymasterAbi,
          functionName: 'withdrawTokens',
          args: [token, to, amount],
        }),
        value: 0n,
        read: async () => ({ paymasterBalance: await balanceOf(t.paymaster), toBalance: await balanceOf(to) }),
        predict: (b) => ({
          paymasterBalance: { ...b.paymasterBalance, value: b.paymasterBalance.value - amount },
          toBalance: { ...b.toBalance, value: b.toBalance.value + amount },
        }),
      });
    });
  },
};
