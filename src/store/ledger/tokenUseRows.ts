import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

/** A jti to spend: taken over only when its row expired before `nowSeconds` (Unix seconds). */
export interface TokenUseRow {
  readonly dappId: string;
  readonly jti: string;
  readonly expiresAt: number;
  readonly nowSeconds: number;
}

/** How spendTokenUses names a spent jti in its answer. */
export const tokenUseKey = (dappId: string, jti: string): string => `${dappId}\n${jti}`;

/**
 * Sponsorship-token jtis spent (table sponsorship_token_uses, migration 0017) through Kysely, inside the caller's
 * transaction or alone: one multi-row upsert returning the rows it wrote, so exact under concurrency on both back
 * ends (each insert meets the primary key; only a row already expired, before the latest `nowSeconds` given, is
 * taken over; a jti spent and live is left alone and not returned). Answers the `tokenUseKey`s spent now. The same
 * jti twice in one call is an error on PostgreSQL (a row updated twice): a batch that meets it rolls back and its
 * requests go alone (pgReserveBatch.ts).
 */
export async function spendTokenUses(
  db: Kysely<Database> | Transaction<Database>,
  uses: readonly TokenUseRow[],
): Promise<Set<string>> {
  if (uses.length === 0) return new Set();
  const nowSeconds = Math.max(...uses.map((u) => u.nowSeconds));
  const rows = await db
    .insertInto('sponsorship_token_uses')
    .values(uses.map((u) => ({ dapp_id: u.dappId, jti: u.jti, expires_at: u.expiresAt })))
    .onConflict((oc) =>
      oc
        .columns(['dapp_id', 'jti'])
        .doUpdateSet((eb) => ({ expires_at: eb.ref('excluded.expires_at') }))
        .where('sponsorship_token_uses.expires_at', '<', nowSeconds),
    )
    .returning(['dapp_id', 'jti'])
    .execute();
  return new Set(rows.map((r) => tokenUseKey(r.dapp_id, r.jti)));
}

/** One jti: true when spent now, false when it was spent already. */
export async function spendTokenUse(db: Kysely<Database> | Transaction<Database>, use: TokenUseRow): Promise<boolean> {
  return (await spendTokenUses(db, [use])).has(tokenUseKey(use.dappId, use.jti));
}
