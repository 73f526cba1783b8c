import type { Address } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import { type ChainRegistry, type ChainRuntime, deploymentViews } from '../chain/chainRegistry.js';
import type { FeeOracle } from '../chain/feeOracle.js';
import { isPaymasterSigner } from '../chain/paymasterSigners.js';
import type { UserOperationEventLog } from '../chain/userOperationEvents.js';
import type { Config } from '../config/config.js';
import type { PaymasterGate } from '../paymaster/buildPaymaster.js';
import type { Store } from '../store/store.js';
import type { AlertFanOut } from './alerts/alertFanOut.js';
import { buildAlertSender } from './alerts/buildAlertSender.js';
import type { ChainHead } from './liabilityTracker.js';
import { type SignerWatch, startSignerWatch } from './signerWatch.js';
import { type SolvencyGuard, startSolvencyGuard } from './solvencyGuard.js';

/**
 * The signing gate: whether Patron may sign for a paymaster at all, asked by both modes before any work and told of
 * every signature issued. Two checks, one room: the signer watch (the paymaster still accepts this service's key)
 * and the solvency guard (its deposit covers what was signed). Built before the services that ask it (deps.ts);
 * the metrics only read its state.
 */
export interface SigningGate extends PaymasterGate {
  readonly solvency: SolvencyGuard;
  readonly signerWatch: SignerWatch;
  /**
   * The operator alerts' sender (src/solvency/alerts/), undefined when no destination is set: the guard and the watch
   * post through it; the metrics read its delivery counts.
   */
  readonly alerts: AlertFanOut | undefined;
  /** Both checks, before any work: throws SignerNotAcceptedError (-32043) or PaymasterInsolventError. */
  assertCanSign(chain: ChainRuntime): void;
  /** Settlement's `onIncluded` for the guard's liabilities (idempotent, as settlement requires). */
  onIncluded(args: { readonly chainId: number; readonly event: UserOperationEventLog }): void;
  close(): Promise<void>;
}

export interface SigningGateDeps {
  readonly config: Pick<Config, 'solvency' | 'paymaster' | 'alerts' | 'publicUrl' | 'dashboard'>;
  readonly chains: Pick<ChainRegistry, 'list'>;
  /** The key this service signs with: the signer watch asks each paymaster whether it still accepts its address. */
  readonly signer: { readonly address: Address };
  readonly logger: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  readonly now: () => number;
  /**
   * The fee oracle: the chain's latest block as the service already reads it (for the requests; refreshed here only
   * when it is stale), for the guard's expiry of liabilities by the chain's time.
   */
  readonly fees?: Pick<FeeOracle, 'get'>;
  /**
   * `solvencyClaims`: several instances on one PostgreSQL, each signing within its share of each deposit
   * (store/ledger/solvencyClaims.ts); undefined elsewhere. `alertClaims`: one copy of each operator alert across
   * the instances on the database (store/db/alertClaims.ts).
   */
  readonly store: Pick<Store, 'solvencyClaims' | 'alertClaims' | 'depositSpend'>;
}

export function startSigningGate(deps: SigningGateDeps): SigningGate {
  const { config } = deps;
  // One sender for every operator alert; the solvency guard closes it.
  const alertSender = buildAlertSender({
    config,
    claims: deps.store.alertClaims,
    logger: deps.logger,
    now: deps.now,
  });
  const paymasters = deps.chains.list().flatMap(deploymentViews);
  const signer = deps.signer.address;
  const claims = deps.store.solvencyClaims;
  const signerWatch = startSignerWatch({
    paymasters: paymasters.map((chain) => ({
      chainId: chain.chainId,
      paymaster: chain.paymaster,
      entryPointVersion: chain.entryPointVersion,
      isAccepted: () => isPaymasterSigner({ chain, signer }),
    })),
    signer,
    intervalMs: config.paymaster.signerCheckMs,
    alert: alertSender,
    logger: deps.logger,
    now: deps.now,
  });
  const solvency = startSolvencyGuard({
    chains: paymasters.map((chain) => ({
      chainId: chain.chainId,
      paymaster: chain.paymaster,
      readDeposit: () =>
        chain.client.readContract({
          address: chain.entryPoint,
          abi: entryPoint06Abi,
          functionName: 'balanceOf',
          args: [chain.paymaster],
        }),
      // getDepositInfo through v0.6's ABI: the struct is all static words on every version (paymasterStatus.ts).
      readStaked: async () =>
        (
          await chain.client.readContract({
            address: chain.entryPoint,
            abi: entryPoint06Abi,
            functionName: 'getDepositInfo',
            args: [chain.paymaster],
          })
        ).staked,
      ...(deps.fees === undefined ? {} : { readHead: () => chainHead(deps.fees, chain) }),
    })),
    settings: config.solvency,
    enforce: config.solvency.enabled,
    claims,
    spend: deps.store.depositSpend,
    // A claim outlives every window signed under it: the longest window and a minute of clock skew.
    claimWindowSeconds: config.paymaster.sponsorship.maxExpirySeconds + 60,
    alert: alertSender,
    logger: deps.logger,
    now: deps.now,
  });
  return {
    solvency,
    signerWatch,
    alerts: alertSender,
    assertCanSign(chain) {
      signerWatch.assertActive(chain);
      solvency.assertCanSign(chain);
    },
    admitSignature: (op) => solvency.admitSignature(op),
    // Only where instances share the deposit (PostgreSQL): elsewhere the request path awaits nothing more.
    ensureHeadroom: claims === undefined ? undefined : (op) => solvency.ensureHeadroom(op),
    staked: (chain) => solvency.staked(chain),
    onIncluded({ chainId, event }) {
      solvency.observeIncluded({
        chainId,
        paymaster: event.paymaster,
        sender: event.sender,
        nonce: event.nonce,
        actualGasCost: event.actualGasCost,
      });
    },
    async close() {
      await signerWatch.close();
      await solvency.close();
    },
  };
}

/** The fee oracle's latest block, as the liability tracker reads the chain's time. */
async function chainHead(
  fees: Pick<FeeOracle, 'get'> | undefined,
  chain: ChainRuntime,
): Promise<ChainHead | undefined> {
  const f = await fees?.get(chain);
  return f?.timestamp === undefined
    ? undefined
    : { timestamp: Number(f.timestamp), blockNumber: Number(f.blockNumber) };
}
