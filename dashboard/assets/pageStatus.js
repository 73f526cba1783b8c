// @ts-check
import { api } from './api.js';
import { copyButton, formatDuration, formatEth, h, notice, title } from './dom.js';
import { depositAdvice, stakeAdvice } from './paymasterGuidance.js';

/**
 * @typedef {{wei: string, eth: string}} Wei
 * @typedef {{deposit: Wei | null, liabilities: Wei, floor: Wei, marginBps: number, required: Wei, signing: boolean, heldReason: 'floor' | 'liabilities' | null, spendPerHour: Wei | null, runwaySeconds: number | null, lowWater: Wei, lowWaterDeposit: Wei, alertLevel: 'ok' | 'low' | 'halted', checkedAt: string | null}} Solvency
 * @typedef {{chainId: number, embedded: boolean, entryPointVersion: string, entryPoint: string, paymaster: string, signer: string, onChainSigners: string[] | null, signerActive: boolean | null, deposit: Wei | null, staked: boolean | null, stake: Wei | null, unstakeDelaySec: number | null, stakeState: 'staked' | 'unstaked' | 'unlocking' | 'withdrawable' | null, stakeWithdrawableAt: string | null, warnings: Array<{code: string, message: string}>, solvency: Solvency | null}} PaymasterRow
 */

/** "× 1.5" from basis points. @param {number} bps */
const margin = (bps) => `× ${bps / 10_000}`;

/**
 * The banner of a paymaster whose signing the solvency guard holds: why, and what the deposit must reach.
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
    h('strong', null, 'Signing is held for this paymaster. '),
    `No sponsorship or token quote is signed here because ${why}. Top up the paymaster's EntryPoint deposit; signing resumes by itself once it covers both.`,
  );
}

/**
 * The one runway: the time until the deposit beyond liabilities × margin reaches the floor, at the last 24 h's spend
 * (from the ledger; withdrawals and top-ups are not spend). "≈ 3.2 days until signing stops, at 0.01 ETH per hour
 * (last 24 h)", or "no spend in the last 24 h".
 * @param {Solvency} s
 */
const runway = (s) =>
  s.runwaySeconds === null || s.spendPerHour === null
    ? 'no spend in the last 24 h'
    : s.runwaySeconds === 0
      ? `at the floor now (${formatEth(s.spendPerHour.wei)} per hour over the last 24 h)`
      : `≈ ${formatDuration(s.runwaySeconds)} until signing stops, at ${formatEth(s.spendPerHour.wei)} per hour (last 24 h)`;

/**
 * The solvency guard's facts for one paymaster (src/solvency/README.md).
 * @param {Solvency} s @param {(k: string, v: Node | string) => Node[]} fact
 */
const solvencyFacts = (s, fact) =>
  [
    fact('Live liabilities', h('span', { className: 'liabilities' }, formatEth(s.liabilities.wei))),
    fact(
      `Required (liabilities ${margin(s.marginBps)})`,
      h('span', { className: 'required' }, formatEth(s.required.wei)),
    ),
    fact('Floor (signing stops)', formatEth(s.floor.wei)),
    // The mark is on the headroom (deposit − liabilities × margin), as the alert's: shown as the deposit it means now.
    fact(
      'Low-water mark (warning)',
      h(
        'span',
        {
          className: 'low-water',
          title: 'PATRON_SOLVENCY_LOW_WATER_WEI: warns while the deposit beyond the required is under it',
        },
        `${formatEth(s.lowWater.wei)} above the required: warns under a deposit of ${formatEth(s.lowWaterDeposit.wei)}`,
      ),
    ),
    fact('Runway', h('span', { className: 'runway' }, runway(s))),
    fact(
      'Signing',
      h('span', { className: 'signing', 'data-signing': String(s.signing) }, s.signing ? 'on' : 'held (see above)'),
    ),
  ].flat();

/** @param {PaymasterRow} p */
const isHeld = (p) => p.solvency !== null && !p.solvency.signing;

/** @param {string} k @param {Node | string} v */
const fact = (k, v) => [h('dt', null, k), h('dd', null, v)];

/** A command to run, with a copy button. @param {{ label: string, command: string }} c */
const commandLine = (c) => {
  // Each "--flag value" wraps as one piece where it fits (a line never starts with a flag's value or ends in "--");
  // the text is the command exactly, spaces included, for a selection by hand.
  const parts = c.command.split(/ (?=--)/);
  const code = h(
    'code',
    null,
    parts.flatMap((part, i) => [i === 0 ? null : ' ', h('span', { className: 'arg' }, part)]),
  );
  return h(
    'div',
    { className: 'command-block' },
    h('p', null, c.label),
    h(
      'div',
      { className: 'command' },
      code,
      copyButton(() => c.command, 'Copy'),
    ),
  );
};

/**
 * What to do next for one paymaster: its deposit (top up, or what may be withdrawn) and its stake, each with the
 * CLI command (paymasterGuidance.js).
 * @param {PaymasterRow} p @param {bigint} warningWei
 */
const guidance = (p, warningWei) => {
  const origin = location.origin;
  const deposit = depositAdvice({ row: p, warningWei, origin });
  const stake = stakeAdvice({ row: p, origin, nowMs: Date.now() });
  return h(
    'section',
    { className: 'guidance', 'aria-label': `What to do for the EntryPoint v${p.entryPointVersion} paymaster` },
    h(
      'div',
      { 'data-guidance': 'deposit', 'data-level': deposit.level },
      h('h4', null, 'Deposit'),
      h('p', null, deposit.text),
      deposit.commands.map(commandLine),
    ),
    h(
      'div',
      { 'data-guidance': 'stake', 'data-stake-state': stake.state },
      h('h4', null, 'Stake'),
      h('p', null, stake.text),
      stake.commands.map(commandLine),
    ),
  );
};

/**
 * One paymaster deployment of a chain: each EntryPoint version has its own paymaster, deposit and solvency.
 * @param {PaymasterRow} p @param {bigint} warningWei
 */
const paymasterCard = (p, warningWei) => {
  const id = `paymaster-${p.chainId}-${p.entryPointVersion}`;
  return h(
    'article',
    {
      className: 'card',
      'aria-labelledby': id,
      'data-entry-point-version': p.entryPointVersion,
      'data-paymaster': p.paymaster,
    },
    h('h3', { id }, `EntryPoint v${p.entryPointVersion}`),
    p.solvency !== null && !p.solvency.signing ? heldBanner(p.solvency) : null,
    p.warnings.map((w) =>
      notice(w.code === 'not_staked' ? 'info' : 'warn', h('span', { 'data-warning': w.code }, w.message)),
    ),
    h(
      'dl',
      { className: 'facts' },
      fact('Paymaster', h('span', { className: 'mono' }, p.paymaster)),
      fact('EntryPoint', h('span', { className: 'mono' }, p.entryPoint)),
      fact('Deposit', h('strong', { className: 'deposit' }, p.deposit === null ? 'unknown' : `${p.deposit.eth} ETH`)),
      p.solvency === null ? null : solvencyFacts(p.solvency, fact),
      fact(
        'Stake',
        h(
          'span',
          { className: 'stake' },
          p.staked === null
            ? 'unknown'
            : p.staked
              ? `${p.stake?.eth ?? '?'} ETH, unstake delay ${p.unstakeDelaySec ?? '?'} s`
              : p.stakeState === 'unlocking' || p.stakeState === 'withdrawable'
                ? `${p.stake?.eth ?? '?'} ETH, unlocked (${p.stakeState})`
                : 'not staked',
        ),
      ),
      fact('Signer (this Patron)', h('span', { className: 'mono' }, p.signer)),
      // The contract's whole signer set (rotation keeps two for a while), this Patron's key marked; unknown only when
      // the chain could not be read.
      fact(
        'Signers (contract)',
        h(
          'span',
          { className: 'signers mono', 'data-signer-active': String(p.signerActive) },
          p.onChainSigners === null
            ? 'unknown'
            : p.onChainSigners.length === 0
              ? 'none: the paymaster accepts no key'
              : p.onChainSigners
                  .map((a) => (a.toLowerCase() === p.signer.toLowerCase() ? `${a} (this Patron)` : a))
                  .join(', '),
        ),
      ),
    ),
    guidance(p, warningWei),
  );
};

/**
 * The rows grouped by chain, in the answer's order (a chain's first deployment first).
 * @param {PaymasterRow[]} rows @returns {Map<number, PaymasterRow[]>}
 */
function byChain(rows) {
  /** @type {Map<number, PaymasterRow[]>} */
  const chains = new Map();
  for (const p of rows) chains.set(p.chainId, [...(chains.get(p.chainId) ?? []), p]);
  return chains;
}

/**
 * "chain 31337 (EntryPoint v0.6, v0.9), chain 10 (EntryPoint v0.7)": where the guard holds signing.
 * @param {Map<number, PaymasterRow[]>} chains
 */
function heldWhere(chains) {
  /** @type {string[]} */
  const where = [];
  for (const [chainId, rows] of chains) {
    const versions = rows.filter(isHeld).map((p) => `v${p.entryPointVersion}`);
    if (versions.length > 0) where.push(`chain ${chainId} (EntryPoint ${versions.join(', ')})`);
  }
  return where.join(', ');
}

/**
 * Paymaster status per deployment (chain × EntryPoint version), grouped by chain: addresses, EntryPoint deposit
 * and stake, signer, warnings, and the solvency guard's view (liabilities, what the deposit must reach, runway; a
 * banner while it holds signing).
 * @param {HTMLElement} main
 */
export async function renderStatus(main) {
  const status = await api('GET', '/api/admin/paymaster-status');
  const chains = byChain(/** @type {PaymasterRow[]} */ (status.paymasters));
  const warningWei = BigInt(status.depositWarning.wei);
  const held = heldWhere(chains);
  // Through h() (not append directly), which flattens the list and skips the null.
  main.append(
    h(
      'div',
      null,
      title('Paymaster status'),
      h(
        'p',
        { className: 'hint' },
        "One paymaster per EntryPoint version on each chain, each with its own deposit. A deposit below its chain's low-water mark (PATRON_SOLVENCY_LOW_WATER_WEI) is flagged; signing stops at the floor (PATRON_SOLVENCY_FLOOR_WEI).",
      ),
      h(
        'p',
        { className: 'hint', id: 'command-keys' },
        'Each card says what to do next, with the patron CLI command. The deposit command takes any funded key; the ' +
          "others need the paymaster owner's: PATRON_DEPLOYER_PRIVATE_KEY in the environment, or --keystore FILE. " +
          "Add --dry-run to an owner's command to see the change first. RPC_URL is the chain's JSON-RPC URL (its " +
          'rpcUrl in PATRON_CHAINS).',
      ),
      chains.size === 0 ? notice('warn', 'This Patron serves no chain: set PATRON_CHAINS.') : null,
      held === ''
        ? null
        : h(
            'div',
            { className: 'notice error banner', role: 'alert', 'data-solvency': 'summary' },
            h('strong', null, `Signing is held on ${held}`),
            ': the paymaster deposit is too low there. Details below.',
          ),
      [...chains].map(([chainId, rows]) =>
        h(
          'section',
          { 'aria-labelledby': `chain-${chainId}`, 'data-chain': String(chainId) },
          h('h2', { id: `chain-${chainId}` }, `Chain ${chainId}`, rows[0]?.embedded ? ' (embedded dev chain)' : ''),
          h(
            'div',
            { className: 'deployments' },
            rows.map((p) => paymasterCard(p, warningWei)),
          ),
        ),
      ),
    ),
  );
}
