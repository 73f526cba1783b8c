import { getAddress, isAddressEqual } from 'viem';
import { type ChainRegistry, deploymentViews } from '../chain/chainRegistry.js';
import type { Config } from '../config/config.js';
import { floorFor } from '../config/solvencySettings.js';
import type { CryptoBackend } from '../crypto/cryptoBackend.js';
import { StartRefusedError } from '../errors/StartRefusedError.js';
import { loadPaymasterSigner } from '../paymaster/signer/loadPaymasterSigner.js';
import type { PaymasterSigner } from '../paymaster/signer/paymasterSigner.js';
import { signerAccount } from '../paymaster/signer/signerAccount.js';
import { paymasterKey } from '../solvency/paymasterKey.js';
import type { SigningGate } from '../solvency/signingGate.js';
import type { Store } from '../store/store.js';
import { type DepositKeeper, startDepositKeeper } from './depositKeeper.js';
import { keeperChain } from './keeperChain.js';
import type { KeeperObserver, KeptPaymaster } from './keeperRound.js';

/**
 * The deposit keeper as deps.ts builds it, after the signing gate (whose guard gives the liabilities and the spend
 * rate, and whose alert sender it posts through) and the metrics: each opted-in paymaster matched to a served
 * deployment, the funding key opened from its own settings (PATRON_KEEPER_FUNDER_*). Off (no paymaster listed): no
 * key opened, no loop.
 */
export async function buildKeeper(args: {
  readonly config: Pick<Config, 'keeper' | 'solvency'>;
  readonly chains: Pick<ChainRegistry, 'list'>;
  readonly gate: Pick<SigningGate, 'solvency' | 'alerts'>;
  readonly store: Pick<Store, 'depositTopups' | 'followerLease'>;
  readonly crypto: CryptoBackend;
  /** The paymaster signer: the funding key is never it by default, and a warning says so when it was set to be. */
  readonly signer: { readonly address: `0x${string}` };
  readonly observer: KeeperObserver | undefined;
  readonly logger: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  readonly now: () => number;
}): Promise<DepositKeeper> {
  const { config, logger } = args;
  const settings = config.keeper;
  const views = args.chains.list().flatMap(deploymentViews);
  const matched = settings.paymasters.map((setting) => {
    const view = views.find((v) => v.chainId === setting.chainId && isAddressEqual(v.paymaster, setting.paymaster));
    if (view === undefined) {
      throw new StartRefusedError(
        `PATRON_KEEPER lists the paymaster ${setting.paymaster} on chain ${setting.chainId}, which this Patron does not serve (PATRON_CHAINS)`,
      );
    }
    return { setting, view };
  });
  const funderSigner: PaymasterSigner | undefined =
    settings.funder === undefined || matched.length === 0
      ? undefined
      : await loadPaymasterSigner({ setting: settings.funder, crypto: args.crypto });
  const funder = funderSigner === undefined ? undefined : signerAccount(funderSigner);
  if (funder !== undefined && isAddressEqual(funder.address, args.signer.address)) {
    logger.warn(
      { funder: funder.address },
      'keeper: the funding key is the paymaster signer: a leaked signing key then also spends the funds; give the keeper a key of its own',
    );
  }
  const paymasters: KeptPaymaster[] = matched.map(({ setting, view }) => ({
    setting,
    chain: keeperChain({
      chainId: view.chainId,
      client: view.client,
      entryPoint: view.entryPoint,
      paymaster: view.paymaster,
      funder,
    }),
    solvency: () => {
      const s = args.gate.solvency.state().find((x) => paymasterKey(x) === paymasterKey(view));
      return {
        liabilitiesWei: s?.liabilitiesWei ?? 0n,
        spendWeiPerHour: s?.spendWeiPerHour,
        floorWei: s?.floorWei ?? floorFor(config.solvency, view.chainId),
        marginBps: s?.marginBps ?? config.solvency.marginBps,
      };
    },
  }));
  for (const p of paymasters) {
    logger.info(
      {
        chainId: p.chain.chainId,
        paymaster: getAddress(p.chain.paymaster),
        mode: p.setting.mode,
        funder: funder?.address ?? null,
      },
      'keeper: looking after the paymaster deposit',
    );
  }
  const keeper = startDepositKeeper({
    paymasters,
    settings,
    funder: funder?.address,
    ledger: args.store.depositTopups,
    lease: args.store.followerLease,
    alert: args.gate.alerts,
    observer: args.observer,
    logger,
    now: args.now,
  });
  return {
    ...keeper,
    async close() {
      await keeper.close();
      await funderSigner?.close();
    },
  };
}
