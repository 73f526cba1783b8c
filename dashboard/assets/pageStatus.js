// @ts-check
import { api } from './api.js';
import { formatDuration, formatEth, h, notice, title } from './dom.js';

/**
 * @typedef {{wei: string, eth: string}} Wei
 * @typedef {{deposit: Wei | null, liabilities: Wei, floor: Wei, marginBps: number, required: Wei, signing: boolean, heldReason: 'floor' | 'liabilities' | null, spendPerHour: Wei | null, runwaySeconds: number | null, checkedAt: string | null}} Solvency
 */

/** "× 1.5" from basis points. @param {number} bps */
const margin = (bps) => `× ${bps / 10_000}`;

/**
 * The banner of a chain whose signing the solvency guard holds: why, and what the deposit must reach.
 * @param {Solvency} s
 */
function heldBanner(s) {
  const deposit = s.deposit === null ? 'unknown' : formatEth(s.deposit.wei);
  const why =
    s.heldReason === 'floor'
      ? `the deposit (${deposit}) is below the floor (${formatEth(s.floor.wei)}, PATRON_SOLVENCY_FLOOR_WEI)`
      : `the deposit (${deposit}) is below the live liabilities × margin (${formatEth(s.required.wei)} required: ${formatEth(s.liabilities.wei)} ${margin(s.marginBps)})`;
  return h(
    'div',
    { className: 'notice error banner', role: 'alert', 'data-solvency': 'held', 'data-reason': s.heldReason ?? '' },
    h('strong', null, 'Signing is held on this chain. '),
    `No sponsorship or token quote is signed here because ${why}. Top up the paymaster's EntryPoint deposit; signing resumes by itself once it covers both.`,
  );
}

/** "≈ 3.2 days at the last 24 h's spend", or "no spend yet". @param {Solvency} s */
const runway = (s) =>
  s.runwaySeconds === null
    ? 'no spend yet'
    : `≈ ${formatDuration(s.runwaySeconds)} at the last 24 h's spend${s.spendPerHour === null ? '' : ` (${formatEth(s.spendPerHour.wei)} per hour)`}`;

/**
 * The solvency guard's facts for one chain (src/solvency/README.md).
 * @param {Solvency} s @param {(k: string, v: Node | string) => Node[]} fact
 */
const solvencyFacts = (s, fact) =>
  [
    fact('Live liabilities', h('span', { className: 'liabilities' }, formatEth(s.liabilities.wei))),
    fact(
      `Required (liabilities ${margin(s.marginBps)})`,
      h('span', { className: 'required' }, formatEth(s.required.wei)),
    ),
    fact('Floor', formatEth(s.floor.wei)),
    fact('Runway', h('span', { className: 'runway' }, runway(s))),
    fact(
      'Signing',
      h('span', { className: 'signing', 'data-signing': String(s.signing) }, s.signing ? 'on' : 'held (see above)'),
    ),
  ].flat();

/**
 * Paymaster status per chain: addresses, EntryPoint deposit and stake, signer, warnings, and the solvency guard's
 * view (liabilities, what the deposit must reach, runway; a banner while it holds signing).
 * @param {HTMLElement} main
 */
export async function renderStatus(main) {
  const status = await api('GET', '/api/admin/paymaster-status');
  /** @type {number[]} */
  const held = status.chains.flatMap((/** @type {{chainId: number, solvency: Solvency | null}} */ c) =>
    c.solvency !== null && !c.solvency.signing ? [c.chainId] : [],
  );
  const fact = (/** @type {string} */ k, /** @type {Node | string} */ v) => [h('dt', null, k), h('dd', null, v)];
  // Through h() (not append directly), which flattens the list and skips the null.
  main.append(
    h(
      'div',
      null,
      title('Paymaster status'),
      h(
        'p',
        { className: 'hint' },
        `Deposits below ${status.depositWarning.eth} ETH are flagged (PATRON_DEPOSIT_WARNING_ETH).`,
      ),
      status.chains.length === 0 ? notice('warn', 'This Patron serves no chain: set PATRON_CHAINS.') : null,
      held.length === 0
        ? null
        : h(
            'div',
            { className: 'notice error banner', role: 'alert', 'data-solvency': 'summary' },
            h('strong', null, `Signing is held on chain ${held.join(', ')}`),
            ': the paymaster deposit is too low there. Details below.',
          ),
      status.chains.map(
        (
          /** @type {{chainId: number, embedded: boolean, entryPoint: string, paymaster: string, signer: string, onChainSigner: string | null, deposit: {eth: string, wei: string} | null, staked: boolean | null, stake: {eth: string} | null, unstakeDelaySec: number | null, warnings: Array<{code: string, message: string}>, solvency: Solvency | null}} */ c,
        ) =>
          h(
            'section',
            { className: 'card', 'aria-labelledby': `chain-${c.chainId}`, 'data-chain': String(c.chainId) },
            h('h2', { id: `chain-${c.chainId}` }, `Chain ${c.chainId}`, c.embedded ? ' (embedded dev chain)' : ''),
            c.solvency !== null && !c.solvency.signing ? heldBanner(c.solvency) : null,
            c.warnings.map((w) =>
              notice(w.code === 'not_staked' ? 'info' : 'warn', h('span', { 'data-warning': w.code }, w.message)),
            ),
            h(
              'dl',
              { className: 'facts' },
              fact('Paymaster', h('span', { className: 'mono' }, c.paymaster)),
              fact('EntryPoint', h('span', { className: 'mono' }, c.entryPoint)),
              fact(
                'Deposit',
                h('strong', { className: 'deposit' }, c.deposit === null ? 'unknown' : `${c.deposit.eth} ETH`),
              ),
              c.solvency === null ? null : solvencyFacts(c.solvency, fact),
              fact(
                'Stake',
                c.staked === null
                  ? 'unknown'
                  : c.staked
                    ? `${c.stake?.eth ?? '?'} ETH, unstake delay ${c.unstakeDelaySec ?? '?'} s`
                    : 'not staked',
              ),
              fact('Signer (this Patron)', h('span', { className: 'mono' }, c.signer)),
              fact('Signer (contract)', h('span', { className: 'mono' }, c.onChainSigner ?? 'unknown')),
            ),
          ),
      ),
    ),
  );
}
