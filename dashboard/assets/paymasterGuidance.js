// @ts-check
import { formatDuration, formatEth } from './dom.js';

/**
 * What the owner of one paymaster deployment should do next, from its status row: top up (below the floor or the
 * low-water mark), what may be withdrawn, and the stake's next step, each with the `patron paymaster …` command
 * that does it (src/cli/paymasterCommands.ts, ownerCommands.ts). Pure, importable without a browser
 * (test/dashboardApi.test.ts).
 *
 * @typedef {import('./pageStatus.js').PaymasterRow} PaymasterRow
 * @typedef {{ label: string, command: string }} Command
 * @typedef {{ level: 'held' | 'low' | 'ok' | 'unknown', text: string, commands: Command[] }} DepositAdvice
 * @typedef {{ state: 'staked' | 'unstaked' | 'unlocking' | 'withdrawable' | 'unknown', text: string, commands: Command[] }} StakeAdvice
 */

const ETHER = 10n ** 18n;
/** Amounts in commands are rounded up to 0.001 ETH: readable, and never short of the mark. */
const STEP = 10n ** 15n;

/** Wei as the ether decimal the CLI's --amount takes ("0.25"), exactly. @param {bigint} wei */
export function etherAmount(wei) {
  const fraction = (wei % ETHER).toString().padStart(18, '0').replace(/0+$/, '');
  return `${wei / ETHER}${fraction === '' ? '' : `.${fraction}`}`;
}

/** @param {bigint} wei */
const roundUp = (wei) => ((wei + STEP - 1n) / STEP) * STEP;
/** @param {bigint[]} xs */
// biome-ignore lint/complexity/useMathMinMax: bigint, which Math.max does not take
const max = (xs) => xs.reduce((a, b) => (a < b ? b : a));

/**
 * The RPC URL the commands use: the embedded dev chain is served by this Patron (POST /chain/{id}); a configured
 * chain's URL (its rpcUrl in PATRON_CHAINS, often with a provider key) is not shown to the dashboard.
 * @param {PaymasterRow} p @param {string} origin
 */
export const rpcArg = (p, origin) => (p.embedded ? `${origin}/chain/${p.chainId}` : 'RPC_URL');

/**
 * The deposit the paymaster should have: at the floor, past liabilities × margin plus the low-water mark with the
 * 10 % the alert waits for before it clears (src/solvency/README.md), and at the status's own warning mark.
 * @param {PaymasterRow} p @param {bigint} warningWei the status's depositWarning
 */
function targetDeposit(p, warningWei) {
  const s = p.solvency;
  if (s === null) return warningWei;
  const lowWater = BigInt(s.lowWater.wei);
  return max([BigInt(s.floor.wei), BigInt(s.required.wei) + lowWater + lowWater / 10n, lowWater, warningWei]);
}

/**
 * @param {{ row: PaymasterRow, warningWei: bigint, origin: string }} args
 * @returns {DepositAdvice}
 */
export function depositAdvice({ row: p, warningWei, origin }) {
  // This read's deposit (the guard's last read can be older), the guard's when the EntryPoint did not answer now.
  const depositText = p.deposit?.wei ?? p.solvency?.deposit?.wei;
  if (depositText === undefined) {
    return { level: 'unknown', text: 'The deposit could not be read: check the chain’s RPC.', commands: [] };
  }
  const deposit = BigInt(depositText);
  const target = targetDeposit(p, warningWei);
  const at = `--rpc ${rpcArg(p, origin)} --paymaster ${p.paymaster}`;
  const held = p.solvency !== null && !p.solvency.signing;
  const low = deposit < target || p.warnings.some((w) => w.code === 'deposit_low');
  if (held || low) {
    const amount = roundUp(target > deposit ? target - deposit : STEP);
    const why = held
      ? 'Signing is held: no sponsorship or token quote is signed from this paymaster until the deposit is topped up.'
      : 'The deposit is below the low-water mark: signing stops at the floor, top it up before then.';
    return {
      level: held ? 'held' : 'low',
      text: `${why} ${formatEth(amount.toString())} brings it to ${formatEth((deposit + amount).toString())}, clear of the mark.`,
      commands: [
        {
          label: 'Top up the EntryPoint deposit',
          command: `patron paymaster deposit ${at} --amount ${etherAmount(amount)}`,
        },
      ],
    };
  }
  const surplus = deposit - target;
  /** @type {Command[]} */
  const commands = [];
  let text = `The deposit (${formatEth(deposit.toString())}) is clear of the low-water mark.`;
  if (surplus >= STEP) {
    const amount = (surplus / STEP) * STEP;
    text += ` Up to ${formatEth(amount.toString())} can be withdrawn and keep it so (to the key's address, or --to ADDRESS).`;
    commands.push({
      label: 'Withdraw from the deposit',
      command: `patron paymaster withdraw ${at} --amount ${etherAmount(amount)}`,
    });
  }
  return { level: 'ok', text, commands };
}

/**
 * @param {{ row: PaymasterRow, origin: string, nowMs: number }} args
 * @returns {StakeAdvice}
 */
export function stakeAdvice({ row: p, origin, nowMs }) {
  const at = `--rpc ${rpcArg(p, origin)} --paymaster ${p.paymaster}`;
  const delay = p.unstakeDelaySec ?? 0;
  // Why it matters: token mode is signed only for a staked paymaster (ERC-7562), the embedded chain excepted.
  const tokenMode = p.embedded
    ? 'The embedded dev chain signs token mode either way; a real chain’s bundlers need the stake.'
    : 'Token mode (users paying gas in an ERC-20) is signed only while the paymaster is staked: bundlers refuse an unstaked paymaster’s token-mode ops (ERC-7562), and public bundlers may refuse its sponsored ops too.';
  const stake = p.stake === null ? '' : formatEth(p.stake.wei);
  const stakeAgain = {
    label: 'Lock it again instead (adds nothing, keeps the delay)',
    command: `patron paymaster stake ${at} --amount 0 --unstake-delay ${delay}`,
  };
  switch (p.stakeState) {
    case 'staked':
      return {
        state: 'staked',
        text: `Staked: ${stake}, unstake delay ${formatDuration(delay)}. ${tokenMode} To take the stake back, unlock it; it can be withdrawn ${formatDuration(delay)} later, and token mode stops at the unlock.`,
        commands: [
          { label: 'Add to the stake', command: `patron paymaster stake ${at} --amount ETH` },
          { label: 'Unlock the stake', command: `patron paymaster unlock-stake ${at}` },
        ],
      };
    case 'unlocking': {
      const when = p.stakeWithdrawableAt === null ? null : Date.parse(p.stakeWithdrawableAt);
      const left = when === null ? '' : ` (in ${formatDuration(Math.max(1, (when - nowMs) / 1000))})`;
      const at2 = when === null ? 'once the delay has passed' : `from ${new Date(when).toLocaleString()}${left}`;
      return {
        state: 'unlocking',
        text: `Unlocking: ${stake} can be withdrawn ${at2}. Meanwhile the paymaster is not staked: ${tokenMode}`,
        commands: [{ label: 'Then withdraw the stake', command: `patron paymaster withdraw-stake ${at}` }, stakeAgain],
      };
    }
    case 'withdrawable':
      return {
        state: 'withdrawable',
        text: `Unlocked: ${stake} can be withdrawn now (to the key's address, or --to ADDRESS). ${tokenMode}`,
        commands: [{ label: 'Withdraw the stake', command: `patron paymaster withdraw-stake ${at}` }, stakeAgain],
      };
    case 'unstaked':
      return {
        state: 'unstaked',
        text: `Not staked. ${tokenMode} 1 ETH and a one-day delay are common; use what your chain’s bundlers require.`,
        commands: [{ label: 'Stake it', command: `patron paymaster stake ${at} --amount 1 --unstake-delay 86400` }],
      };
    default:
      return { state: 'unknown', text: 'The stake could not be read: check the chain’s RPC.', commands: [] };
  }
}
