import type { ChainRegistry } from '../chain/chainRegistry.js';
import type { Config } from '../config/config.js';
import type { CryptoBackend } from '../crypto/cryptoBackend.js';
import type { AlertMessage } from '../solvency/alertWebhook.js';
import { readTankBalance } from './readTankBalance.js';
import { createTankSigners, type TankSigners } from './tankSigner.js';
import { type MeeTankLike, startTankWatch, type TankWatch } from './tankWatch.js';

/** Where the tanks come from and what each spent: the tanks repository and the spend ledger, once they are wired. */
export interface MeeTankSources {
  /** Every tank Patron holds (store.meeTanks.list()). Until the tanks' repository is wired: none, nothing read. */
  listTanks(): Promise<readonly MeeTankLike[]>;
  /** What the tank paid over the last 24 h, in token base units; undefined: unknown (the runway is then unknown). */
  tankSpend24h(tankId: string): Promise<bigint | undefined>;
}

export const NO_MEE_TANKS: MeeTankSources = {
  listTanks: async () => [],
  tankSpend24h: async () => undefined,
};

/**
 * The gas tanks' owner keys (opened on first use, closed with the app) and their balance watch, for deps.ts. With no
 * tank the watch lists none each round and reads nothing from any chain.
 */
export function buildMeeTanks(deps: {
  readonly config: Pick<Config, 'meeTanks' | 'solvency'>;
  readonly chains: Pick<ChainRegistry, 'get'>;
  readonly crypto: CryptoBackend;
  readonly alert: { send(message: AlertMessage): Promise<boolean> } | undefined;
  readonly logger: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  readonly now: () => number;
  readonly sources: MeeTankSources;
}): { readonly tankSigners: TankSigners; readonly tankWatch: TankWatch; close(): Promise<void> } {
  const tankSigners = createTankSigners({ crypto: deps.crypto, logger: deps.logger });
  const tankWatch = startTankWatch({
    listTanks: () => deps.sources.listTanks(),
    readBalance: readTankBalance(deps.chains),
    tankSpend24h: (id) => deps.sources.tankSpend24h(id),
    settings: { ...deps.config.meeTanks, alertHoldMs: deps.config.solvency.alertHoldMs },
    alert: deps.alert,
    logger: deps.logger,
    now: deps.now,
  });
  return {
    tankSigners,
    tankWatch,
    async close() {
      await tankWatch.close();
      await tankSigners.close();
    },
  };
}
