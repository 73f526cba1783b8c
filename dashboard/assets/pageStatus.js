// @ts-check
import { api } from './api.js';
import { h, notice, title } from './dom.js';

/**
 * Paymaster status per chain: addresses, EntryPoint deposit and stake, signer, and warnings.
 * @param {HTMLElement} main
 */
export async function renderStatus(main) {
  const status = await api('GET', '/api/admin/paymaster-status');
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
      status.chains.map(
        (
          /** @type {{chainId: number, embedded: boolean, entryPoint: string, paymaster: string, signer: string, onChainSigner: string | null, deposit: {eth: string, wei: string} | null, staked: boolean | null, stake: {eth: string} | null, unstakeDelaySec: number | null, warnings: Array<{code: string, message: string}>}} */ c,
        ) =>
          h(
            'section',
            { className: 'card', 'aria-labelledby': `chain-${c.chainId}`, 'data-chain': String(c.chainId) },
            h('h2', { id: `chain-${c.chainId}` }, `Chain ${c.chainId}`, c.embedded ? ' (embedded dev chain)' : ''),
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
