import { type Address, formatEther } from 'viem';
import { z } from 'zod';
import { type ChainRegistry, deploymentViews } from '../chain/chainRegistry.js';
import { type PaymasterStatus, readPaymasterStatus, stakeState } from '../chain/paymasterStatus.js';
import { paymasterKey } from '../solvency/paymasterKey.js';
import type { ChainSolvency } from '../solvency/solvencyGuard.js';
import { solvencyVerdict } from '../solvency/solvencyVerdict.js';
import { DASHBOARD_TAG } from './adminSession.js';
import { type RouteDef, route } from './route.js';

/**
 * `GET /api/admin/paymaster-status`: per paymaster deployment (a chain has one per EntryPoint version, each with
 * its own address and EntryPoint deposit), the paymaster, its EntryPoint deposit and stake, the signer, warnings
 * (deposit below the chain's low-water mark, or PATRON_DEPOSIT_WARNING_ETH when that is higher; signer mismatch,
 * unreachable chain), and the solvency guard's view of
 * it (src/solvency/README.md: deposit as last read, live liabilities, floor, margin, whether signing is held and
 * why, spend rate and runway). The paymasters are the operator's, shared by every dApp, so every signed-in
 * account sees the same answer.
 */
const wei = z.object({ wei: z.string(), eth: z.string() });
const solvencyView = z.object({
  /** As the guard last read it (null before its first successful read). */
  deposit: wei.nullable(),
  liabilities: wei,
  floor: wei,
  /** Basis points: 15000 is × 1.5. */
  marginBps: z.number().int(),
  /** liabilities × margin: what the deposit must reach besides the floor. */
  required: wei,
  /** False while the guard holds signing on this chain. */
  signing: z.boolean(),
  /** Why signing is held: the deposit is below the floor, or below liabilities × margin; null while signing. */
  heldReason: z.enum(['floor', 'liabilities']).nullable(),
  /**
   * What included ops took from the deposit over the last 24 h, per hour, from the ledger (the same on every
   * instance, kept across restarts; withdrawals and top-ups are not spend); null when nothing was spent.
   */
  spendPerHour: wei.nullable(),
  /**
   * The runway: seconds until deposit − liabilities × margin reaches the floor, where signing stops, at
   * `spendPerHour`; 0 when it is there; null without spend.
   */
  runwaySeconds: z.number().int().nullable(),
  /**
   * The low-water mark: the guard warns while deposit − liabilities × margin is below it (the deposit below
   * `lowWaterDeposit`), well before signing stops at the floor.
   */
  lowWater: wei,
  /** The deposit under which the low-water warning is on now: liabilities × margin + the low-water mark. */
  lowWaterDeposit: wei,
  /** The operator alerts' level, with hysteresis: `low` from the low-water mark down until it has stayed clear. */
  alertLevel: z.enum(['ok', 'low', 'halted']),
  checkedAt: z.string().nullable(),
});
const paymasterRow = z.object({
  chainId: z.number().int(),
  embedded: z.boolean(),
  entryPointVersion: z.enum(['0.6', '0.7', '0.8', '0.9']),
  entryPoint: z.string(),
  paymaster: z.string(),
  signer: z.string(),
  onChainSigners: z.array(z.string()).nullable(),
  signerActive: z.boolean().nullable(),
  deposit: wei.nullable(),
  staked: z.boolean().nullable(),
  stake: wei.nullable(),
  unstakeDelaySec: z.number().nullable(),
  /**
   * `staked`; `unlocking` (unlockStake called, withdrawable at `stakeWithdrawableAt`); `withdrawable` (withdrawStake
   * now); `unstaked`. Null when the EntryPoint could not be read. Token mode needs `staked` (ERC-7562).
   */
  stakeState: z.enum(['staked', 'unstaked', 'unlocking', 'withdrawable']).nullable(),
  /** When an unlocked stake can be (or could be) withdrawn; null unless unlocking or withdrawable. */
  stakeWithdrawableAt: z.string().nullable(),
  warnings: z.array(z.object({ code: z.string(), message: z.string() })),
  /** Null when the guard does not follow this paymaster. */
  solvency: solvencyView.nullable(),
});
type PaymasterRow = z.infer<typeof paymasterRow>;

export const paymasterStatusView = z.object({
  depositWarning: wei,
  paymasters: z
    .array(paymasterRow)
    .describe("One row per paymaster deployment: per chain, one per EntryPoint version, the chain's first first"),
  // Kept for callers written when a chain had one paymaster: what they read then is the first deployment's row.
  chains: z
    .array(paymasterRow)
    .describe("Deprecated: per chain, its first deployment's row only (the same row as in `paymasters`)")
    .meta({ deprecated: true }),
});

const toWei = (v: bigint) => ({ wei: v.toString(10), eth: formatEther(v) });

const toSolvencyView = (s: ChainSolvency): z.infer<typeof solvencyView> => {
  const heldReason =
    s.signing || s.depositWei === undefined
      ? null
      : (solvencyVerdict({
          depositWei: s.depositWei,
          liabilitiesWei: s.liabilitiesWei,
          floorWei: s.floorWei,
          marginBps: s.marginBps,
        }).reason ?? null);
  return {
    deposit: s.depositWei === undefined ? null : toWei(s.depositWei),
    liabilities: toWei(s.liabilitiesWei),
    floor: toWei(s.floorWei),
    marginBps: Number(s.marginBps),
    required: toWei(s.requiredWei),
    signing: s.signing,
    heldReason,
    spendPerHour: s.spendWeiPerHour === undefined ? null : toWei(s.spendWeiPerHour),
    runwaySeconds: s.runwaySeconds ?? null,
    lowWater: toWei(s.lowWaterWei),
    lowWaterDeposit: toWei(s.requiredWei + s.lowWaterWei),
    alertLevel: s.alertLevel,
    checkedAt: s.checkedAt === undefined ? null : new Date(s.checkedAt).toISOString(),
  };
};

const stakeOf = (s: PaymasterStatus, nowMs: number): Pick<PaymasterRow, 'stakeState' | 'stakeWithdrawableAt'> => {
  if (s.staked === undefined || s.stakeWei === undefined || s.withdrawTime === undefined) {
    return { stakeState: null, stakeWithdrawableAt: null };
  }
  const state = stakeState({
    staked: s.staked,
    stakeWei: s.stakeWei,
    withdrawTime: s.withdrawTime,
    nowSec: Math.floor(nowMs / 1000),
  });
  const unlocked = state === 'unlocking' || state === 'withdrawable';
  return {
    stakeState: state,
    stakeWithdrawableAt: unlocked ? new Date(s.withdrawTime * 1000).toISOString() : null,
  };
};

const toRow = (s: PaymasterStatus, solvency: ChainSolvency | undefined, nowMs: number): PaymasterRow => ({
  chainId: s.chainId,
  embedded: s.embedded,
  entryPointVersion: s.entryPointVersion,
  entryPoint: s.entryPoint,
  paymaster: s.paymaster,
  signer: s.signer,
  onChainSigners: s.onChainSigners === undefined ? null : [...s.onChainSigners],
  signerActive: s.signerActive ?? null,
  deposit: s.depositWei === undefined ? null : toWei(s.depositWei),
  staked: s.staked ?? null,
  stake: s.stakeWei === undefined ? null : toWei(s.stakeWei),
  unstakeDelaySec: s.unstakeDelaySec ?? null,
  ...stakeOf(s, nowMs),
  warnings: [...s.warnings],
  solvency: solvency === undefined ? null : toSolvencyView(solvency),
});

export function adminPaymasterStatusRoutes(deps: {
  chains: ChainRegistry;
  signer: { readonly address: Address };
  config: { dashboard: { depositWarningWei: bigint } };
  solvency: { state(): readonly ChainSolvency[] };
  now: () => number;
}): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/api/admin/paymaster-status',
      auth: 'account',
      operationId: 'getPaymasterStatus',
      summary:
        'Per paymaster deployment (chain × EntryPoint version): paymaster, EntryPoint deposit and stake, signers, warnings, solvency and runway (the same for everyone)',
      tag: DASHBOARD_TAG,
      answer: { envelope: 'Paymaster status fetched', data: paymasterStatusView },
      handler: async () => {
        const depositWarningWei = deps.config.dashboard.depositWarningWei;
        const chains = deps.chains.list();
        // The guard counts per paymaster: each row takes its own figures.
        const solvency = new Map(deps.solvency.state().map((s) => [paymasterKey(s), s]));
        // The warning comes where the operator alert's does: deposit − liabilities × margin under the low-water
        // mark, above the floor where signing stops (the halt banner's), never both at once.
        // PATRON_DEPOSIT_WARNING_ETH can only raise it.
        const warningFor = (view: { chainId: number; paymaster: Address }): { wei: bigint; mark: string } => {
          const s = solvency.get(paymasterKey(view));
          const dashboardMark = { wei: depositWarningWei, mark: 'PATRON_DEPOSIT_WARNING_ETH' };
          if (s === undefined) return dashboardMark;
          const lowWater = s.requiredWei + s.lowWaterWei;
          if (lowWater < depositWarningWei) return dashboardMark;
          return {
            wei: lowWater,
            mark:
              s.requiredWei === 0n
                ? 'the low-water mark, PATRON_SOLVENCY_LOW_WATER_WEI'
                : `the live liabilities × margin, ${formatEther(s.requiredWei)} ETH, plus the low-water mark, ${formatEther(s.lowWaterWei)} ETH`,
          };
        };
        const statuses = await Promise.all(
          chains
            .flatMap(deploymentViews)
            .map((view) =>
              readPaymasterStatus({ chain: view, signer: deps.signer.address, depositWarning: warningFor(view) }),
            ),
        );
        const paymasters = statuses.map((s) => toRow(s, solvency.get(paymasterKey(s)), deps.now()));
        const first = new Set(chains.map((c) => paymasterKey(c)));
        return {
          depositWarning: toWei(depositWarningWei),
          paymasters,
          chains: paymasters.filter((row) => first.has(paymasterKey(row))),
        };
      },
    }),
  ];
}
