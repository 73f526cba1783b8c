import type { z } from 'zod';
import { booleanFromEnv, integerFromEnv } from './envValues.js';

/**
 * The settlement follower's settings (src/settlement/README.md), from the environment (part of loadConfig, the
 * only reader of process.env).
 */
export interface SettlementSettings {
  /** Follow the chains, settle the spend ledger and release what the chain can no longer include. */
  readonly enabled: boolean;
  /**
   * Blocks below the head an event must be before it is settled, on chains reached over RPC. The in-process dev
   * chain always uses 0: it mines one block per transaction and never reorgs, so a depth would hold each op
   * until unrelated transactions happen to be sent.
   */
  readonly confirmations: number;
  /** How often each chain's head is read. */
  readonly pollMs: number;
  /**
   * PATRON_SETTLEMENT_EXPIRY_GRACE_SECONDS was given: deprecated and ignored (issue 20). Reservations are released
   * by the chain (its cursor block past the signed window), never by the server's clock, so no grace is needed;
   * the service warns at start.
   */
  readonly expiryGraceIgnored: boolean;
  /** Blocks per eth_getLogs (providers refuse wide ranges). */
  readonly maxBlockRange: number;
}

export const settlementEnv = {
  PATRON_SETTLEMENT: booleanFromEnv('PATRON_SETTLEMENT'),
  PATRON_SETTLEMENT_CONFIRMATIONS: integerFromEnv('PATRON_SETTLEMENT_CONFIRMATIONS', 0, 1000),
  PATRON_SETTLEMENT_POLL_MS: integerFromEnv('PATRON_SETTLEMENT_POLL_MS', 100, 600_000),
  PATRON_SETTLEMENT_EXPIRY_GRACE_SECONDS: integerFromEnv('PATRON_SETTLEMENT_EXPIRY_GRACE_SECONDS', 0, 7 * 86_400),
  PATRON_SETTLEMENT_MAX_BLOCK_RANGE: integerFromEnv('PATRON_SETTLEMENT_MAX_BLOCK_RANGE', 1, 100_000),
};

type SettlementEnv = z.infer<z.ZodObject<typeof settlementEnv>>;

export function settlementSettingsFrom(e: SettlementEnv): SettlementSettings {
  return Object.freeze({
    enabled: e.PATRON_SETTLEMENT ?? true,
    confirmations: e.PATRON_SETTLEMENT_CONFIRMATIONS ?? 5,
    pollMs: e.PATRON_SETTLEMENT_POLL_MS ?? 2000,
    expiryGraceIgnored: e.PATRON_SETTLEMENT_EXPIRY_GRACE_SECONDS !== undefined,
    maxBlockRange: e.PATRON_SETTLEMENT_MAX_BLOCK_RANGE ?? 2000,
  });
}
