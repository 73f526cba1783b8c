import type { SpendLedgerRepository } from '../store/spendLedgerRepository.js';

/**
 * Releases the reservations whose op was never seen on chain: those whose signature expired (`validUntil`)
 * more than `graceMs` ago. The grace exists because an op is valid up to and including `validUntil`, so it may
 * be included at that very second and its event read only `confirmations` blocks (and a poll) later; released
 * too early, its reservation would free room under the cap that the op then uses (the late settlement still
 * counts it, once, but the cap could be overshot meanwhile).
 */
export interface ExpirySweeper {
  /** Releases every reservation expired before now − grace; returns how many. */
  sweep(): Promise<number>;
}

/** releaseExpired releases at most this many per call (src/store/spendLedgerRepository.ts). */
export const RELEASE_EXPIRED_BATCH = 1000;
/** One sweep stops after this many batches; the next interval goes on (a backlog never blocks for long). */
const MAX_BATCHES_PER_SWEEP = 100;

export function createExpirySweeper(deps: {
  readonly ledger: Pick<SpendLedgerRepository, 'releaseExpired'>;
  readonly graceMs: number;
  readonly now: () => number;
}): ExpirySweeper {
  return {
    async sweep() {
      let total = 0;
      for (let i = 0; i < MAX_BATCHES_PER_SWEEP; i++) {
        const now = deps.now();
        const released = await deps.ledger.releaseExpired({ before: now - deps.graceMs, now });
        total += released;
        // Fewer than a full batch: nothing more had expired (or another process is releasing the rest).
        if (released < RELEASE_EXPIRED_BATCH) break;
      }
      return total;
    },
  };
}
