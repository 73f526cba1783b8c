import { randomUUID } from 'node:crypto';
import type pg from 'pg';

/**
 * The instances' shares of a paymaster's deposit (migration 0013; src/solvency/README.md, "Several instances").
 * Every instance on one PostgreSQL signs only within its own claim, and a claim is granted under a per-paymaster
 * transaction lock so that the live claims (their `expires_at` not passed) never sum to more than the limit the
 * caller gives (the deposit divided by the margin): N instances never promise more than one may.
 */
export interface SolvencyClaims {
  /**
   * Sets this instance's claim on `key` to `wantWei`, or to what the others' live claims leave under `limitWei`,
   * never below `atLeastWei` (what the instance has already promised: it cannot take that back). Renews the claim
   * until `expiresAt` (unix seconds). Returns the claim now held.
   */
  claim(args: {
    readonly key: string;
    readonly wantWei: bigint;
    readonly atLeastWei: bigint;
    readonly limitWei: bigint;
    readonly expiresAt: number;
    readonly nowSeconds: number;
  }): Promise<bigint>;
}

export function createSolvencyClaims(pool: pg.Pool): SolvencyClaims {
  const instanceId = randomUUID();
  return {
    async claim(args) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        try {
          await client.query('SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || $1, 0))', [
            `:patron.solvency:${args.key}`,
          ]);
          const others = await client.query<{ wei: string | null }>(
            `SELECT sum(claimed_wei)::text AS wei FROM solvency_claims
              WHERE paymaster_key = $1 AND instance_id <> $2 AND expires_at > $3`,
            [args.key, instanceId, args.nowSeconds],
          );
          const left = args.limitWei - BigInt(others.rows[0]?.wei ?? '0');
          const room = left < args.wantWei ? left : args.wantWei;
          const granted = room > args.atLeastWei ? room : args.atLeastWei;
          await client.query(
            `INSERT INTO solvency_claims (paymaster_key, instance_id, claimed_wei, expires_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (paymaster_key, instance_id) DO UPDATE SET claimed_wei = EXCLUDED.claimed_wei,
               expires_at = EXCLUDED.expires_at`,
            [args.key, instanceId, granted.toString(), args.expiresAt],
          );
          // Housekeeping: claims the chain can no longer be charged under.
          await client.query('DELETE FROM solvency_claims WHERE paymaster_key = $1 AND expires_at <= $2', [
            args.key,
            args.nowSeconds,
          ]);
          await client.query('COMMIT');
          return granted;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        }
      } finally {
        client.release();
      }
    },
  };
}
