import { type Address, formatEther } from 'viem';
import { z } from 'zod';
import type { ChainRegistry } from '../chain/chainRegistry.js';
import { type PaymasterStatus, readPaymasterStatus } from '../chain/paymasterStatus.js';
import { DASHBOARD_TAG } from './adminSession.js';
import { type RouteDef, route } from './route.js';

/**
 * `GET /api/admin/paymaster-status`: per served chain, the paymaster, its EntryPoint deposit and stake, the
 * signer, and warnings (deposit below PATRON_DEPOSIT_WARNING_ETH, signer mismatch, unreachable chain). The
 * paymaster is the operator's, shared by every dApp, so every signed-in account sees the same answer.
 */
const wei = z.object({ wei: z.string(), eth: z.string() });
export const paymasterStatusView = z.object({
  depositWarning: wei,
  chains: z.array(
    z.object({
      chainId: z.number().int(),
      embedded: z.boolean(),
      entryPoint: z.string(),
      paymaster: z.string(),
      signer: z.string(),
      onChainSigner: z.string().nullable(),
      deposit: wei.nullable(),
      staked: z.boolean().nullable(),
      stake: wei.nullable(),
      unstakeDelaySec: z.number().nullable(),
      warnings: z.array(z.object({ code: z.string(), message: z.string() })),
    }),
  ),
});

const toWei = (v: bigint) => ({ wei: v.toString(10), eth: formatEther(v) });

const toView = (s: PaymasterStatus): z.infer<typeof paymasterStatusView>['chains'][number] => ({
  chainId: s.chainId,
  embedded: s.embedded,
  entryPoint: s.entryPoint,
  paymaster: s.paymaster,
  signer: s.signer,
  onChainSigner: s.onChainSigner ?? null,
  deposit: s.depositWei === undefined ? null : toWei(s.depositWei),
  staked: s.staked ?? null,
  stake: s.stakeWei === undefined ? null : toWei(s.stakeWei),
  unstakeDelaySec: s.unstakeDelaySec ?? null,
  warnings: [...s.warnings],
});

export function adminPaymasterStatusRoutes(deps: {
  chains: ChainRegistry;
  signer: { readonly address: Address };
  config: { dashboard: { depositWarningWei: bigint } };
}): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/api/admin/paymaster-status',
      auth: 'account',
      operationId: 'getPaymasterStatus',
      summary: 'Per served chain: paymaster, EntryPoint deposit and stake, signers, warnings (the same for everyone)',
      tag: DASHBOARD_TAG,
      answer: { envelope: 'Paymaster status fetched', data: paymasterStatusView },
      handler: async () => {
        const depositWarningWei = deps.config.dashboard.depositWarningWei;
        const statuses = await Promise.all(
          deps.chains
            .list()
            .map((chain) => readPaymasterStatus({ chain, signer: deps.signer.address, depositWarningWei })),
        );
        return { depositWarning: toWei(depositWarningWei), chains: statuses.map(toView) };
      },
    }),
  ];
}
